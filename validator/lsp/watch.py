"""Ending the language server when the editor that started it is gone.

LSP 3.17 (https://microsoft.github.io/language-server-protocol/specifications/lsp/3.17/specification/#initialize):
``processId`` is "the process Id of the parent process that started the server [...] If the
parent process is not alive then the server should exit (see exit notification) its process."
Usually the editor's death closes the server's standard input, which ends it as well; the watch
is for when it does not (the pipe inherited by another process the editor started, a wrapper
between them).

On Linux a pidfd (``os.pidfd_open``) becomes readable when its process ends: the watch costs a
thread blocked in ``poll`` and cannot be fooled by the pid being reused. Elsewhere (macOS, a
Linux kernel before 5.3) the pid is probed every few seconds with signal 0, which tells whether
it names a process without sending anything.
"""

from __future__ import annotations

import os
import select
import threading
import time
from typing import Callable

POLL_SECONDS = 3.0


def watch_process(pid: int, on_gone: Callable[[], None]) -> bool:
    """Call ``on_gone``, from a daemon thread, once the process ``pid`` has ended. Returns
    whether it is watched: not when ``pid`` names no process this one can see (an editor on the
    host and the server in a container, where the editor's pid means nothing: exiting at once
    would end every session; the closed pipe still ends it), nor on Windows, where signal 0 is
    CTRL_C_EVENT rather than a probe."""
    if os.name != "posix" or pid <= 0 or pid == os.getpid():
        return False
    descriptor: int | None = None
    try:
        descriptor = os.pidfd_open(pid)
    except ProcessLookupError:
        return False
    except (AttributeError, OSError):  # no pidfd here, or a sandbox refuses it: probe instead
        if not is_alive(pid):
            return False
    threading.Thread(target=_wait_for_end, args=(pid, descriptor, on_gone), daemon=True,
                     name=f"watch process {pid}").start()
    return True


def is_alive(pid: int) -> bool:
    """Whether ``pid`` names a process (another user's counts: it exists)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait_for_end(pid: int, descriptor: int | None, on_gone: Callable[[], None]) -> None:
    if descriptor is not None:
        poller = select.poll()
        poller.register(descriptor, select.POLLIN)
        while not poller.poll():  # retried after a signal (PEP 475); no timeout: nothing to poll
            pass
        os.close(descriptor)
    else:
        while is_alive(pid):
            time.sleep(POLL_SECONDS)
    on_gone()

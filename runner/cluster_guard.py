"""The guard of one process of a job on a cluster node: ``python -m runner.cluster_guard SPEC``.

A Ray actor (runner/cluster_node.py) starts it for each process the job runs on its node. Ray
kills an actor's own child processes when the actor ends, with SIGKILL: a guard that was one
would die before it could stop the job's processes, so the guard detaches (it forks, and the
first process exits) and watches the actor instead. It runs the process as the leader of a new
process group, as a local job's supervisor does (runner/process.py), and is a child subreaper,
so that what escapes the group is re-parented to it. It ends, and leaves nothing behind, when:

- the process ends: its exit status is written to the spec's ``exit`` file;
- the actor asks it to stop (SIGTERM): the group gets SIGTERM, ``grace`` seconds, then SIGKILL;
- the actor is gone (the supervisor that owned it was killed, or the job ended): the same stop.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from validator.paths import write_text_atomic

from . import process

POLL = 0.1
# Written in the exit file when the guard stopped the process because its actor was gone.
OWNER_GONE = "owner-gone"


def main(argv: list[str]) -> int:
    spec_path = Path(argv[0])
    spec = json.loads(spec_path.read_text())
    if os.fork() > 0:
        os._exit(0)  # the actor reaps this first process; the guard below is no child of the actor
    os.setsid()
    stop = {"asked": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(asked=True))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    # Only now may the actor know the pid: a stop sent earlier would kill the guard before it
    # started the process, and no exit status would ever come.
    write_text_atomic(Path(spec["pid_file"]), str(os.getpid()))
    process.become_subreaper()
    Path(spec["log"]).parent.mkdir(parents=True, exist_ok=True)
    child = process.spawn(spec["argv"], cwd=Path(spec["cwd"]), env=spec["env"], log=Path(spec["log"]))
    owner, ticks = spec["watch_pid"], spec.get("watch_ticks")
    verdict = None
    while child.poll() is None:
        owner_gone = not process.same_process(owner, ticks)
        if stop["asked"] or owner_gone:
            verdict = OWNER_GONE if owner_gone and not stop["asked"] else None
            process.stop_group(child.pid, grace=float(spec.get("grace", 5.0)), reap=child)
            break
        time.sleep(POLL)
    code = child.wait()
    process.stop_descendants()  # what left the group, re-parented to this subreaper
    write_text_atomic(Path(spec["exit_file"]), verdict or str(code))
    if verdict == OWNER_GONE:
        # Nobody will collect the job's files: the node's copy of its run folder goes too.
        shutil.rmtree(spec["folder"], ignore_errors=True)
    return 0


def exit_code(said: str) -> int:
    """A guard's exit file as an exit status; stopped because its actor was gone: as if killed."""
    return -signal.SIGKILL if said == OWNER_GONE else int(said)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The one change aml-run makes to a notebook's kernel or a script's interpreter: once
``azure.ai.ml`` is imported, its ``MLClient`` is the offline client bound to the workspace, and
once ``azure.identity`` (or ``azure.identity.aio``) is imported, its credentials are stand-ins
that never reach Azure. The user's files are not edited.

Why an import hook: the patch must be in place before the user's first ``from azure.ai.ml import
MLClient``, whatever cell or line that is, yet installing it must cost nothing when the notebook
never imports the SDK (azure-ai-ml takes seconds to import). A finder at the front of
``sys.meta_path`` lets the real module load as always and patches it right after, in the same
import statement; modules already imported are patched at once. ``aml-run notebook`` installs it
in the kernel's first, visible cell (as papermill injects its parameters cell); ``aml-run
script`` through ``python -m runner.sdk.launch``, before it runs the script.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

_installed: list["_PatchOnImport"] = []


def _patch_identity(module: ModuleType, asynchronous: bool = False) -> None:
    from .credentials import stand_in

    for name in dir(module):
        value = getattr(module, name)
        if name.endswith("Credential") and isinstance(value, type) and not getattr(value, "replaced", None):
            setattr(module, name, stand_in(name, asynchronous))


def _patch_ml(module: ModuleType) -> None:
    from .client import OfflineMLClient

    module.MLClient = OfflineMLClient  # type: ignore[attr-defined]
    inner = sys.modules.get("azure.ai.ml._ml_client")
    if inner is not None:
        inner.MLClient = OfflineMLClient  # type: ignore[attr-defined]


PATCHES: dict[str, Callable[[ModuleType], None]] = {
    "azure.ai.ml": _patch_ml,
    "azure.identity": _patch_identity,
    "azure.identity.aio": lambda module: _patch_identity(module, asynchronous=True),
}


class _Patching(importlib.abc.Loader):
    """The real loader, and the patch once the module has run."""

    def __init__(self, loader: Any, patch: Callable[[ModuleType], None]) -> None:
        self.loader = loader
        self.patch = patch

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        self.patch(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)  # resource readers and the like: the real loader's


class _PatchOnImport(importlib.abc.MetaPathFinder):
    def __init__(self, patches: dict[str, Callable[[ModuleType], None]]) -> None:
        self.patches = patches

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        patch = self.patches.get(fullname)
        if patch is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _Patching(spec.loader, patch)
                return spec
        return None


def install() -> None:
    """Patch ``azure.ai.ml`` and ``azure.identity`` now if they are imported, and as they are
    imported otherwise. Installing twice changes nothing."""
    if _installed:
        return
    finder = _PatchOnImport(PATCHES)
    sys.meta_path.insert(0, finder)
    _installed.append(finder)
    for name, patch in PATCHES.items():
        module = sys.modules.get(name)
        if module is not None:
            patch(module)


def installed() -> bool:
    return bool(_installed)

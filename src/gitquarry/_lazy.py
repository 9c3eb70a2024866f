"""Lazy re-exports for package ``__init__`` modules (PEP 562).

A package that re-exports names from its submodules imports those submodules only when a
name is first used, so importing one light submodule (``gitquarry.history.index.progress``) does not
pull in the package's heavy ones (NumPy, ONNX Runtime, Markdown parsers) and the command line
starts quickly. ``from gitquarry.history import index_workspace`` still works unchanged.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps each exported name to the
    module that defines it. An unknown name raises ``AttributeError`` as usual."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals_of_package = importlib.import_module(package).__dict__
        globals_of_package[name] = value  # later look-ups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted({*importlib.import_module(package).__dict__, *exports})

    return __getattr__, __dir__

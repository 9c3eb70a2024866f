"""Lazy re-exports for package ``__init__`` modules (PEP 562).

A package that re-exports names from its submodules imports those submodules only when a
name is first used, so importing one light submodule (``gitquarry.history.index.progress``) does not
pull in the package's heavy ones (NumPy, ONNX Runtime, Markdown parsers) and the command line
starts quickly. ``from gitquarry.history import index_workspace`` still works unchanged.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import re


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


class LazyPattern:
    """A regular expression compiled on first use (issue 21 §1: a module's patterns compiled
    at import cost each command start, ~1-6 ms each, even when the command never matches
    with them). Attributes are the compiled ``re.Pattern``'s (``search``, ``sub``,
    ``pattern``…), kept on the instance after their first look-up so later calls cost what
    the compiled pattern's own methods cost. Same pattern text and flags as ``re.compile``;
    a bad pattern raises ``re.error`` on first use instead of at import (every module
    pattern is compiled by ``tests/test_lazy_imports.py``). Not an ``re.Pattern`` instance:
    pass ``.pattern`` text, not this object, to ``re.sub``-style functions."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.__dict__["_source"] = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        import re

        value = getattr(re.compile(*self.__dict__["_source"]), name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"LazyPattern{self.__dict__['_source']!r}"


def lazy_re(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)`` on first use (:class:`LazyPattern`), typed as the
    pattern it stands for."""
    return cast("re.Pattern[str]", LazyPattern(pattern, flags))

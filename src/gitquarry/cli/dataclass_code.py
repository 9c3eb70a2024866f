"""Compiled dataclass methods kept between command-line processes (issue 21 target 5).

``@dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``... as source text and compiles it with ``exec`` when the class is defined:
about 290 compilations, ~40 % of the imports of a cold ``repo-docs search`` (~55 ms CPU of
~140 measured, benchmarks/results/s7-coldcli-*.json). :func:`install` gives the
``dataclasses`` module an ``exec`` of its own that looks each source text up in a file of
code objects compiled earlier (``marshal``), compiling only what it has not seen, exactly as
``exec`` would (``compile(text, "<string>", "exec", dont_inherit=True)``: the ``dataclasses``
module has no ``__future__`` flags to inherit). The text is the key, so an entry can only
ever be the compilation of that very text: nothing goes stale; the file is per interpreter
build (``sys.implementation.cache_tag`` and ``sys.hexversion`` in its name).

The file is ``$XDG_CACHE_HOME/gitquarry/`` (else ``~/.cache/gitquarry/``)
``dataclass-code-<tag>-<version>.marshal``, written by :func:`save` through a temporary file
and a rename; any error reading or writing it only means compiling as usual. It holds code
for the dataclass definitions of the modules this process imported (the same trust as the
``.pyc`` files Python keeps).
"""

from __future__ import annotations

import builtins
import contextlib
import marshal
import os
import sys
from types import CodeType
from typing import Any

#: an existing file larger than this is not read (and is replaced on the next save)
MAX_FILE_BYTES = 8 * 1024 * 1024
#: at most this many source texts are kept (a save past it starts the file afresh)
MAX_ENTRIES = 4096

_codes: dict[str, Any] = {}
_new: dict[str, Any] = {}
_installed = False


def cache_file() -> str:
    """The file's path (see the module docstring); it need not exist."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tag = sys.implementation.cache_tag or sys.implementation.name
    return os.path.join(base, "gitquarry", f"dataclass-code-{tag}-{sys.hexversion:x}.marshal")


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """``exec`` for the ``dataclasses`` module: a source string's compilation comes from the
    file when it holds it; anything else goes to ``builtins.exec`` unchanged."""
    if isinstance(source, str):
        code = _codes.get(source)
        if code is None:
            code = _new[source] = _codes[source] = compile(source, "<string>", "exec",
                                                           dont_inherit=True)
        source = code
    builtins.exec(source, globals, locals)


def install() -> None:
    """Read the file (once per process) and route the ``dataclasses`` module's ``exec``
    through it. Classes defined before this call were compiled as usual."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        with open(cache_file(), "rb") as f:
            if os.fstat(f.fileno()).st_size <= MAX_FILE_BYTES:
                loaded = marshal.load(f)
                if isinstance(loaded, dict) and all(
                        type(k) is str and type(v) is CodeType for k, v in loaded.items()):
                    _codes.update(loaded)
    except (OSError, EOFError, ValueError, TypeError):
        _codes.clear()
    import dataclasses

    dataclasses.exec = _exec  # type: ignore[attr-defined]  # found before the builtin


def save() -> None:
    """Write the file when this process compiled texts it did not hold; errors are ignored
    (the next process compiles them again)."""
    if not _new:
        return
    keep = _codes if len(_codes) <= MAX_ENTRIES else dict(_new)
    path = cache_file()
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            marshal.dump(keep, f)
        os.replace(tmp, path)
        _new.clear()
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)

"""The code ``@dataclass`` generates, compiled once and kept between processes (issue 21 §1).

``dataclasses`` writes the source of each class's ``__init__``, ``__repr__``, ``__eq__``,
``__setattr__``, ``__hash__``… as text and compiles it with ``exec`` every time the class
is created, so every process start pays it again: a cold ``gitquarry history`` creates 63
dataclasses (317 functions), ~100 ms CPU of compiling at import, about a quarter of the
whole command. :func:`install` puts a caching ``exec`` in the ``dataclasses`` module's
namespace (it calls ``exec`` by its global name): the same source text gives the code object
``compile`` made for it last time, read from one file in the user's cache directory; any
other text is compiled as before and added to that file when the process ends.

Exact by construction: the key is the whole source text, compiled with the flags
``dataclasses``' own ``exec`` uses (no ``from __future__`` flags: ``dont_inherit``), and the
generated functions are still created by running that code with the class's own globals and
values, so every class is what ``dataclasses`` alone makes (``tests/test_dataclass_code.py``
compares the code objects and behaviour with and without the cache). Nothing else changes:
``exec`` with a code object, or of text outside ``dataclasses``, is untouched.

The file: ``$XDG_CACHE_HOME/gitquarry`` (``~/.cache/gitquarry``; other systems:
``platformdirs.user_cache_dir``) ``/dataclass-code-<cache tag>.bin``, written atomically with
mode 0600 in a 0700 directory. Code is read from it only when it is a regular file owned by
this user, not writable by group or others, at most ``MAX_BYTES``, and names the exact Python
build (``sys.version``) that wrote it — the same trust as the user's own ``__pycache__``;
anything else is ignored (compiled as without the cache) and replaced at exit.
``GITQUARRY_DATACLASS_CACHE=0`` turns it off.
"""

from __future__ import annotations

import builtins
import contextlib
import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType
    from typing import Any

#: first line of the file; the second is ``sys.version`` of the interpreter that wrote it
MAGIC = b"gitquarry-dataclass-code 1\n"
#: larger files are not read (and are replaced at exit)
MAX_BYTES = 8 * 1024 * 1024
#: at most this many entries are kept (a larger set starts again from this process's)
MAX_ENTRIES = 4096

_state: dict[str, Any] = {"installed": False}


def cache_path() -> str:
    """The cache file's path (see the module docstring)."""
    if sys.platform == "linux":
        base = os.environ.get("XDG_CACHE_HOME", "").strip()
        if not base or not os.path.isabs(base):
            base = os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "gitquarry")
    else:  # pragma: no cover - the project's CI is Linux
        from platformdirs import user_cache_dir

        folder = user_cache_dir("gitquarry")
    return os.path.join(folder, f"dataclass-code-{sys.implementation.cache_tag}.bin")


def _read(path: str) -> dict[str, CodeType]:
    """The entries of the file at ``path``; empty when it is absent or not to be trusted."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return {}
    try:
        st = os.fstat(fd)
        if (st.st_mode & 0o170000 != 0o100000 or st.st_size > MAX_BYTES
                or st.st_mode & 0o022 or (hasattr(os, "getuid") and st.st_uid != os.getuid())):
            return {}
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return {}
    finally:
        os.close(fd)
    head = MAGIC + sys.version.encode("utf-8", "replace") + b"\n"
    if not data.startswith(head):
        return {}
    try:
        table = marshal.loads(data[len(head):])
    except (EOFError, ValueError, TypeError):
        return {}
    code_type = type(_read.__code__)
    if not isinstance(table, dict) or not all(
            type(k) is str and type(v) is code_type for k, v in table.items()):
        return {}
    return table


def _write(path: str, table: dict[str, CodeType]) -> None:
    """``table`` into ``path`` atomically (a temporary file renamed); errors are ignored
    (the next process compiles again)."""
    head = MAGIC + sys.version.encode("utf-8", "replace") + b"\n"
    folder = os.path.dirname(path)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(head + marshal.dumps(table))
        os.replace(tmp, path)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _caching_exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """``exec`` as ``dataclasses`` calls it, with the compiled code of ``source`` kept."""
    if type(source) is not str:
        builtins.exec(source, globals, locals)
        return
    table: dict[str, CodeType] = _state["table"]
    code = table.get(source)
    if code is None:
        # builtins.exec(str) compiles with the flags of its caller, dataclasses.py: none
        code = compile(source, "<string>", "exec", dont_inherit=True)
        table[source] = code
        _state["new"] += 1
    builtins.exec(code, globals, locals)


def _save() -> None:
    if not _state.get("new"):
        return
    table = _state["table"]
    on_disk = _read(_state["path"])
    merged = {**on_disk, **table}
    _write(_state["path"], merged if len(merged) <= MAX_ENTRIES else dict(table))


def install() -> bool:
    """Put the caching ``exec`` into ``dataclasses`` (once per process; before the modules
    that define dataclasses are imported, so they use it). False when turned off
    (``GITQUARRY_DATACLASS_CACHE=0``) or when this Python's ``dataclasses`` does not compile
    through a global ``exec`` (then nothing is changed)."""
    if _state["installed"]:
        return True
    if os.environ.get("GITQUARRY_DATACLASS_CACHE", "") == "0":
        return False
    import dataclasses

    create = getattr(dataclasses, "_create_fn", None)  # CPython 3.11, 3.12
    if "exec" in vars(dataclasses) or create is None or "exec" not in create.__code__.co_names:
        return False  # another hook is there already, or this dataclasses compiles otherwise
    import atexit

    path = cache_path()
    table = _read(path)
    _state.update(installed=True, path=path, table=table, read=len(table), new=0)
    dataclasses.exec = _caching_exec  # type: ignore[attr-defined]
    atexit.register(_save)
    return True

"""The git-vocabulary filters of a history search (``author``, ``committer``, ``path``,
``pickaxe``, a commit set) and their one check; ``history.narrow`` applies them as a
candidate set (and re-exports these names)."""

from __future__ import annotations

from dataclasses import dataclass

from gitquarry.errors import InvalidArgumentError
from gitquarry.retrieval.filters import check_text

#: the longest filter value, in characters
MAX_FILTER_CHARS = 1000


@dataclass(frozen=True)
class Narrowing:
    """The git-vocabulary filters of one search (None: not used)."""

    author: str | None = None
    committer: str | None = None
    path: str | None = None
    pickaxe: str | None = None
    commits: frozenset[str] | None = None

    def active(self) -> bool:
        return any(v is not None for v in (self.author, self.committer, self.path,
                                            self.pickaxe, self.commits))

    def params(self) -> dict[str, object]:
        """The filters as JSON-ready values (for cursors and echoes)."""
        return {
            "author": self.author, "committer": self.committer, "path": self.path,
            "pickaxe": self.pickaxe,
            "commits": sorted(self.commits) if self.commits is not None else None,
        }


#: what each filter wants, for the message when one is given empty
_WANTED = {
    "author": "a name or email to match (leave it out to match every author)",
    "committer": "a name or email to match (leave it out to match every committer)",
    "path": "a path from the repository root, such as src/auth (leave it out to match "
            "every path)",
    "pickaxe": "the string whose additions or removals to find (leave it out to match "
               "every commit)",
}


def _empty(name: str, value: str) -> InvalidArgumentError:
    """The error for filter ``name`` given as ``value``, which holds nothing to match."""
    shown = f" ({value!r})" if value else ""
    return InvalidArgumentError(name, f"is empty{shown}: give {_WANTED[name]}")


def validate_narrowing(n: Narrowing) -> Narrowing:
    """``n`` with author/committer/path stripped of surrounding spaces and paths normalised
    (``./`` and leading ``/`` dropped: a path is read from the repository root); None is
    "not given".

    :raises InvalidArgumentError: a value too long, holding NUL or not valid text; a value
        given but empty (``""``; author, committer or path of only spaces; a path of only
        ``/`` and ``./``: leave the filter out to match everything, as an empty
        ``files_glob`` is refused); a path with a ``..`` segment (no repository path has
        one; the message shows the path escaped, as ``repr`` does)."""
    values: dict[str, str | None] = {}
    for name in ("author", "committer", "path", "pickaxe"):
        value = getattr(n, name)
        if value is not None:
            if not isinstance(value, str):
                raise InvalidArgumentError(name, "must be a string")
            if "\x00" in value:
                raise InvalidArgumentError(name, "holds a NUL character")
            check_text(name, value)
            if len(value) > MAX_FILTER_CHARS:
                raise InvalidArgumentError(name, f"longer than {MAX_FILTER_CHARS} characters")
            given = value
            if name != "pickaxe":  # a pickaxe of spaces is a string git log -S finds
                value = value.strip()
            if value == "":
                raise _empty(name, given)
        values[name] = value
    path = values["path"]
    if path is not None:
        if ".." in path.replace("\\", "/").split("/"):
            raise InvalidArgumentError(
                "path", f"{path!r} has a '..' segment, which no repository path holds: give "
                "the path from the repository root, such as src/auth or src/auth/login.py")
        while path.startswith("./"):
            path = path[2:]
        path = path.lstrip("/")
        if not path:
            raise _empty("path", n.path or "")
        values["path"] = path
    return Narrowing(commits=n.commits, **values)

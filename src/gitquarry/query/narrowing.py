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


def validate_narrowing(n: Narrowing) -> Narrowing:
    """``n`` with empty strings as None and paths normalised (``./`` and leading ``/``
    dropped: a path is read from the repository root).

    :raises InvalidArgumentError: a value too long, holding NUL or not valid text; a path
        with a ``..`` segment (no repository path has one; the message shows the path
        escaped, as ``repr`` does)."""
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
            if name != "pickaxe":
                value = value.strip()
            if value == "":
                value = None
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
        values["path"] = path or None
    return Narrowing(commits=n.commits, **values)

"""gitquarry: local-first search over Git history, repository docs and architecture graphs."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing is what this file avoids
if TYPE_CHECKING:
    from gitquarry.errors import GitquarryError

__version__ = "0.1.0"

__all__ = ["GitquarryError", "__version__"]


def __getattr__(name: str) -> object:
    """``gitquarry.GitquarryError``, imported on first use: ``gitquarry --version`` then
    imports nothing beyond this file (issue 21 §1)."""
    if name == "GitquarryError":
        from gitquarry.errors import GitquarryError

        return GitquarryError
    raise AttributeError(f"module 'gitquarry' has no attribute {name!r}")

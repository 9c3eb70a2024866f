"""gitquarry: local-first search over Git history, repository docs and architecture graphs."""

from gitquarry.errors import GitquarryError

__version__ = "0.1.0"

__all__ = ["GitquarryError", "__version__"]

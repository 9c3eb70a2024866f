"""The web page's one translation of an error's kind into an HTTP status.

``INVALID`` (a bad query value, the user's configuration) is 400, ``NOT_FOUND`` 404,
``FAILED`` (a valid request the current state refuses: the index, git, a trust rule, a
missing service) 409 and ``INTERNAL`` (a bug) 500. Pages and the ``/api/`` JSON twins use
the same status.
"""

from __future__ import annotations

from gitquarry.errors import ErrorKind, GitquarryError

#: HTTP status of each error kind (the one mapping; see the module docstring)
HTTP_STATUS_OF_KIND: dict[ErrorKind, int] = {
    ErrorKind.INVALID: 400,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.FAILED: 409,
    ErrorKind.INTERNAL: 500,
}


def http_status(exc: GitquarryError) -> int:
    """The HTTP status of a page or API reply that reports ``exc``."""
    return HTTP_STATUS_OF_KIND[exc.kind]

"""Keep absolute paths out of everything the daemon says to a client.

Status, job, diagnostic and error payloads carry opaque refs and repository-relative paths
only. Error messages raised deep in the library often name a file (``cannot use the index at
/home/ada/src/.gitquarry/index.db``); ``redact`` replaces each known private root with a
placeholder naming it (``<workspace src>``) and any other absolute path with ``<path>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: an absolute POSIX path: a ``/`` not preceded by a word character, dot, colon, tilde or
#: another slash, up to whitespace, a quote, a bracket or a separator that ends a clause.
ABSOLUTE_PATH = re.compile(r"(?<![\w.:~/\->])/(?!/)[^\s'\"`,;()<>\[\]{}]*")


def redact(text: str, roots: Mapping[str, str] | None = None) -> str:
    """``text`` with ``roots`` (absolute path → placeholder, longest first) replaced, then
    every remaining absolute path replaced with ``<path>``."""
    for path, label in sorted((roots or {}).items(), key=lambda kv: -len(kv[0])):
        if path and path != "/":
            text = text.replace(path, label)

    def replace(match: re.Match[str]) -> str:
        value = match.group(0)
        trailing = ""
        while value and value[-1] in ".:":
            trailing = value[-1] + trailing
            value = value[:-1]
        return ("<path>" if value not in ("", "/") else value) + trailing

    return ABSOLUTE_PATH.sub(replace, text)


def redact_payload(value: Any, roots: Mapping[str, str] | None = None) -> Any:
    """``redact`` applied to every string inside ``value`` (dicts, lists, tuples)."""
    if isinstance(value, str):
        return redact(value, roots)
    if isinstance(value, Mapping):
        return {k: redact_payload(v, roots) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_payload(v, roots) for v in value]
    return value

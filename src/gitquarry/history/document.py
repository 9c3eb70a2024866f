"""The text of a commit as the embedding model sees it (the seed's commit document)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

#: Version of the document layout below. Part of the embedding namespace: bump it whenever
#: the text changes, so old vectors are never compared with new ones.
TEXT_FORMAT = "commit-v1"


def commit_document(row: Mapping[str, Any], max_chars: int) -> str:
    """Build the seed's commit document, cut to ``max_chars`` characters::

        {title}
        {message}
        Author: {author}
        Committer: {committer}
        Files changed:
        {file per line}
        {delta_truncated}

    ``row`` has the ``git_commits`` columns. Parts are appended in order and building stops
    once the budget is spent, so a commit touching 50,000 files or a 200-line diff costs at
    most ``max_chars`` characters of work downstream. The full text stays in FTS5.
    """
    parts: list[str] = [row["title"]]
    if row["message"]:
        parts.append(row["message"])
    parts.append(f"Author: {row['author']}")
    parts.append(f"Committer: {row['committer']}")
    parts.append("Files changed:")
    used = sum(len(p) + 1 for p in parts)
    files = row["files_changed"]
    for path in json.loads(files) if isinstance(files, str) else files:
        if used >= max_chars:
            break
        parts.append(path)
        used += len(path) + 1
    if used < max_chars and row["delta_truncated"]:
        parts.append(row["delta_truncated"][: max_chars - used])
    return "\n".join(parts)[:max_chars]

"""Citations: every hit is re-read from its exact blob (or verified overlay file) and
digest-checked before its snippet is returned.

A hit whose bytes cannot be read is dropped with ``citation_blob_unavailable``; one whose
bytes no longer hash to the locator's ``raw_slice_sha256`` is dropped with
``citation_digest_mismatch``. Snippets are at most :data:`MAX_SNIPPET_BYTES` bytes of UTF-8
(never cut inside a character), whitespace collapsed, query matches marked ``<b>…</b>``
(whole tokens, as the index matches them: ``gitquarry.retrieval.highlight``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from gitquarry.errors import WorktreeOverlayStaleError
from gitquarry.gitio.catfile import BlobReader
from gitquarry.repo_docs.lexical import Row
from gitquarry.repo_docs.overlay import Overlay, read_overlay_file
from gitquarry.retrieval.highlight import mark, match_spans

MAX_SNIPPET_BYTES = 800
_MARK_OPEN, _MARK_CLOSE = "<b>", "</b>"


@dataclass(frozen=True)
class Hydrated:
    """A verified hit: its row and snippet."""

    row: Row
    snippet: str


def make_snippet(text: str, query: str, max_bytes: int = MAX_SNIPPET_BYTES) -> str:
    """A window of ``text`` around the first query match, marked, at most ``max_bytes``.

    Matches are whole tokens as the lexical index matches them
    (``gitquarry.retrieval.highlight``), never letters inside a word; a match cut by the
    window's edge is left unmarked.
    """
    flat = " ".join(text.split())
    spans = match_spans(flat, query)
    first = spans[0][0] if spans else None
    budget = max_bytes // 2  # characters; shrunk below until the bytes fit
    while True:
        start = 0 if first is None else max(0, first - budget // 4)
        stop = start + budget
        window = flat[start:stop]
        prefix = "…" if start > 0 else ""
        suffix = "…" if stop < len(flat) else ""
        inside = [(a - start, b - start) for a, b in spans if a >= start and b <= stop]
        snippet = prefix + mark(window, inside, _MARK_OPEN, _MARK_CLOSE) + suffix
        if len(snippet.encode("utf-8")) <= max_bytes or budget <= 8:
            break
        budget = budget * 3 // 4
    encoded = snippet.encode("utf-8")[:max_bytes]
    return encoded.decode("utf-8", "ignore")


class Hydrator:
    """Reads and verifies hit bytes; remembers what it read within one query."""

    def __init__(self, reader: BlobReader, overlay: Overlay | None, max_bytes: int) -> None:
        self.reader = reader
        self.overlay = overlay
        self.max_bytes = max_bytes
        self._bytes: dict[tuple[str, str], bytes | None] = {}

    def document(self, row: Row) -> bytes | None:
        """The bytes of the hit's document, or None when unavailable.

        :raises WorktreeOverlayStaleError: an overlay file changed since the overlay was
            computed.
        """
        key = (row.authority, row.path if row.authority != "git" else row.blob_oid)
        if key in self._bytes:
            return self._bytes[key]
        data: bytes | None
        if row.authority == "worktree_overlay":
            entry = self.overlay.by_path().get(row.path) if self.overlay else None
            if entry is None or self.overlay is None:
                raise WorktreeOverlayStaleError(row.path)
            data = read_overlay_file(self.overlay, entry, self.max_bytes)
        else:
            result = self.reader.read(row.blob_oid, max_bytes=self.max_bytes)
            data = result.data if result.status == "ok" else None
        self._bytes[key] = data
        return data

    def hydrate(self, row: Row, query: str,
                warn: Callable[[str, str], None]) -> Hydrated | None:
        """The verified hit, or None (``warn(code, message)`` says why)."""
        data = self.document(row)
        if data is None:
            warn("citation_blob_unavailable",
                 f"{row.path}: blob {row.blob_oid[:12]} is not in the local object store; "
                 "hit dropped")
            return None
        raw = data[row.byte_start : row.byte_end]
        if hashlib.sha256(raw).hexdigest() != row.raw_slice_sha256:
            warn("citation_digest_mismatch",
                 f"{row.path}:{row.line_start}-{row.line_end}: bytes do not match the "
                 "indexed digest; hit dropped")
            return None
        return Hydrated(row, make_snippet(raw.decode("utf-8", "replace"), query))

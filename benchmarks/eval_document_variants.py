"""Variants of commit document v3, for ablation: ``eval_history.py`` with the v3 layout
replaced by one of :data:`VARIANTS` for this run (the namespace name stays
``commit-v3-t<N>``: use a separate ``--index-dir`` per variant; ``--vector-cache`` is keyed by
the text, so it is safe to share).

Usage::

    python benchmarks/eval_document_variants.py VARIANT [eval_history.py arguments...]

Variants (each is the first v3 with one thing changed):

* ``v3``: the shipped layout (gitquarry.history.index.document): ``v3-first`` with both
  ``v3-seed-message`` and ``v3-hunk-words`` (measured as "v3-hunk-words-seeded").
* ``v3-first``: the first v3: hunk contexts as written, words lines deduplicated only among
  themselves.
* ``v3-also-raw``: the paths and identifiers lines hold the names as written (v2's lines) and
  then their words not already written (the model sees both forms).
* ``v3-clean-only``: v2's paths and identifiers lines (names as written, no words); only the
  message cleaning and a merge's branch words of v3.
* ``v3-seed-message``: the words lines leave out words the title and message already hold.
* ``v3-hunk-words``: the hunk contexts are written as words too (deduplicated with the rest).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gitquarry.history.index import document as doc


def _head(row: Mapping[str, Any], max_chars: int) -> tuple[list[str], set[str]]:
    """Title, cleaned message and branch words, as v3 writes them; the words written."""
    title = doc.clean_message(row["title"][:max_chars]) or row["title"][:max_chars]
    parts = [title]
    message = doc.clean_message((row["message"] or "")[: 4 * max_chars])
    if message:
        parts.append(message)
    seen: set[str] = set()
    used = sum(len(p) + 1 for p in parts)
    branch = doc._word_line([" ".join(doc.merge_branch_words(row["title"]))], seen,
                            frozenset(), max(0, max_chars - used))
    if branch:
        parts.append(branch)
    return parts, seen


def _also_raw(row: Mapping[str, Any], max_chars: int) -> str:
    parts, seen = _head(row, max_chars)
    used = sum(len(p) + 1 for p in parts)
    files = doc._files(row)[:200]
    if used < max_chars and files:
        raw = " ".join(files)
        seen.update(f.lower() for f in files)
        words = doc._word_line(files, seen, doc._PATH_NOISE, max_chars)
        parts.append((raw + (" " + words if words else ""))[: max_chars - used])
        used += len(parts[-1]) + 1
    delta = row["delta_truncated"] or ""
    if used < max_chars and delta:
        hunks, names, changed = doc.diff_digest(delta)
        pieces = ["; ".join(hunks)]
        if names:
            seen.update(n.lower() for n in names)
            words = doc._word_line(names, seen, doc._NOISE, max_chars)
            pieces.append(" ".join(names) + (" " + words if words else ""))
        pieces.append("\n".join(changed))
        for piece in pieces:
            if used >= max_chars:
                break
            if piece:
                parts.append(piece[: max_chars - used])
                used += len(parts[-1]) + 1
    return "\n".join(parts)[:max_chars]


def _clean_only(row: Mapping[str, Any], max_chars: int) -> str:
    parts, _ = _head(row, max_chars)
    body = doc._document_v2(dict(row, title="", message=""), max_chars)
    return "\n".join([*parts, body.lstrip("\n")])[:max_chars]


def _v3_like(row: Mapping[str, Any], max_chars: int, *, seed_message: bool,
             hunk_words: bool) -> str:
    parts, seen = _head(row, max_chars)
    if seed_message:
        for part in parts:
            seen.update(doc.name_words(part))
    used = sum(len(p) + 1 for p in parts)
    if used < max_chars:
        paths = doc._word_line(doc._files(row)[:200], seen, doc._PATH_NOISE, max_chars - used)
        if paths:
            parts.append(paths)
            used += len(paths) + 1
    delta = row["delta_truncated"] or ""
    if used < max_chars and delta:
        hunks, names, changed = doc.diff_digest(delta)
        if hunk_words:
            hunk_line = doc._word_line(hunks, seen, doc._NOISE, max_chars - used)
        else:
            hunk_line = "; ".join(hunks)[: max_chars - used]
        if hunk_line:
            parts.append(hunk_line)
            used += len(hunk_line) + 1
        if used < max_chars:
            words = doc._word_line(names, seen, doc._NOISE, max_chars - used)
            if words:
                parts.append(words)
                used += len(words) + 1
        if used < max_chars and changed:
            parts.append("\n".join(changed)[: max_chars - used])
    return "\n".join(parts)[:max_chars]


def _seed_message(row: Mapping[str, Any], max_chars: int) -> str:
    return _v3_like(row, max_chars, seed_message=True, hunk_words=False)


def _hunk_words(row: Mapping[str, Any], max_chars: int) -> str:
    return _v3_like(row, max_chars, seed_message=False, hunk_words=True)


def _first(row: Mapping[str, Any], max_chars: int) -> str:
    return _v3_like(row, max_chars, seed_message=False, hunk_words=False)


VARIANTS = {"v3": doc._document_v3, "v3-first": _first, "v3-also-raw": _also_raw,
            "v3-clean-only": _clean_only, "v3-seed-message": _seed_message,
            "v3-hunk-words": _hunk_words}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in VARIANTS:
        raise SystemExit(f"usage: eval_document_variants.py {{{','.join(VARIANTS)}}} ARGS...")
    doc._document_v3 = VARIANTS[argv[0]]  # type: ignore[assignment]
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import eval_history

    return eval_history.main([*argv[1:], "--doc-format", "v3-128"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

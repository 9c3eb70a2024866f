"""``--explain`` lines for the shared result pipeline (every corpus's search command)."""

from __future__ import annotations

from typing import Any

from gitquarry.cli.common import printable

#: absorbed items named per step (the rest are counted)
_NAMED = 5
_STEP_WORDS = {
    "collapse": "copies collapsed",
    "ngram_dedup": "near-duplicate text removed",
    "embedding_dedup": "near-duplicate vectors removed",
    "doc_limit": "over the per-document limit",
    "fold": "merges folded",
}


def _key(value: Any, width: int = 12) -> str:
    """A result key (a commit hash, chunk id or ref id) shortened for a terminal line."""
    text = str(value)
    return printable(text if len(text) <= width else text[:width])


def pipeline_lines(explain: dict[str, Any] | None) -> list[str]:
    """Human lines for one result's ``pipeline`` explain data (``PipelineOutcome.explain``):
    where it entered, what moved it, what it absorbed."""
    if not explain:
        return []
    parts = [f"pipeline: input rank {explain['input_rank']} -> {explain['rank']}"]
    for move in explain.get("moved", []):
        score = f", score {move['score']:.4g}" if "score" in move else ""
        parts.append(f"{move['step']} moved it {move['from']} -> {move['to']}{score}")
    lines = ["; ".join(parts)]
    for step, items in explain.get("absorbed", {}).items():
        named = ", ".join(
            f"{_key(i['key'])} #{i['input_rank']}"
            + (f" ({i['similarity']:.2f})" if "similarity" in i else "")
            for i in items[:_NAMED]
        )
        more = f" (+{len(items) - _NAMED} more)" if len(items) > _NAMED else ""
        lines.append(f"  {_STEP_WORDS.get(step, step)}: {named}{more}")
    return lines


def summary_lines(summary: dict[str, Any] | None) -> list[str]:
    """Response-level explain lines: the steps that ran, candidates read, removals."""
    if not summary:
        return []
    lines = [
        f"result pipeline: {' > '.join(summary.get('steps', [])) or 'no step'}; "
        f"{summary.get('examined', 0)} candidates read"
    ]
    removed = summary.get("removed", [])
    if removed:
        named = ", ".join(
            f"{_key(r['key'])} #{r['input_rank']} (score {r['score']:.3f})"
            for r in removed[:_NAMED]
        )
        total = summary.get("removed_count", len(removed))
        more = f" (+{total - _NAMED} more)" if total > _NAMED else ""
        lines.append(f"  below the minimum score: {named}{more}")
    return lines

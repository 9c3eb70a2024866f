"""``jobs attach`` / ``repo-docs index`` off a terminal: plain progress lines instead of a
progress bar that prints nothing (a newcomer's `repo-docs index` piped or in CI was silent
for its whole run)."""

from __future__ import annotations

from typing import Any

from gitquarry.cli.jobs import PlainProgress


def _job(status: str, phase: str | None = None, done: int = 0, total: int | None = None,
         note: str | None = None) -> dict[str, Any]:
    progress = {"phase": phase, "done": done, "total": total, "note": note}
    return {"id": "job-000001", "status": status, "progress": progress}


def test_status_and_phase_changes_print_at_once_counts_at_the_interval() -> None:
    plain = PlainProgress(interval_s=15.0)
    assert plain.line(_job("queued"), 0.0) == "progress: job-000001 queued"
    assert plain.line(_job("queued"), 0.1) is None  # nothing new
    assert (plain.line(_job("running", "chunking", 0, 13), 0.2)
            == "progress: job-000001 running: chunking 0/13")
    # the count moves within the interval: quiet; after it: one line
    assert plain.line(_job("running", "chunking", 5, 13), 5.0) is None
    assert (plain.line(_job("running", "chunking", 9, 13), 15.3)
            == "progress: job-000001 running: chunking 9/13")
    assert plain.line(_job("running", "chunking", 9, 13), 40.0) is None  # count unchanged
    # a new phase prints at once, whatever the interval
    assert (plain.line(_job("running", "embedding", 0, 413), 15.4)
            == "progress: job-000001 running: embedding 0/413")


def test_interval_zero_prints_every_move_and_control_characters_are_escaped() -> None:
    plain = PlainProgress(interval_s=0.0)
    lines = [plain.line(_job("running", "embedding", n, 3), 0.0) for n in (0, 1, 1, 2)]
    assert lines == ["progress: job-000001 running: embedding 0/3",
                     "progress: job-000001 running: embedding 1/3", None,
                     "progress: job-000001 running: embedding 2/3"]
    odd = plain.line(_job("running", note="waiting\x1b[2J"), 0.0)
    assert odd is not None and "\x1b" not in odd and "waiting" in odd

"""Full-text ranking over chunks *and* whole heading sections (issue 22, lever 1): the
subsection a query names beats a long page intro, every section of a long page can be found
(the per-document cap counts chunks of one section, not of one file), the cited chunk is the
section's best, and a revision set's stored locators rank exactly as chunks computed on the
spot."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.registry import Selector

from .conftest import Repo

INTRO = ("Options are declared with a decorator. An option takes a value; the value is "
         "converted, validated and passed to the function. A flag is an option without a "
         "value. Options may have defaults, may be required, may prompt. ") * 4


def _hits(service: RepoDocsService, repo: Repo, query: str) -> list[dict[str, Any]]:
    service.register("o/r", repo.path)
    return service.search(Selector("o/r"), query, mode="fulltext", limit=10)["hits"]


def test_subsection_named_by_the_query_beats_the_page_intro(
        service: RepoDocsService, make_repo: Callable[..., Repo]) -> None:
    page = (f"# Options\n\n{INTRO}\n\n## Counting Options\n\n"
            "Pass `count=True` and the flag is counted: `-vvv` gives 3.\n\n"
            "## Boolean Flags\n\nA switch such as `--shout/--no-shout`, set on or off.\n")
    repo = make_repo({"docs/options.md": page, "docs/other.md": "# Other\n\nNothing.\n"})
    hits = _hits(service, repo, "counting a flag value")
    assert hits[0]["heading_path"] == "Options > Counting Options"


def test_every_section_of_a_long_page_can_be_found(
        service: RepoDocsService, make_repo: Callable[..., Repo]) -> None:
    body = "Other words fill the section past the size under which it would merge. " * 4
    sections = "".join(f"## Part {n}\n\nThe widget part {n} text, widget again. {body}\n\n"
                       for n in range(1, 6))
    repo = make_repo({"docs/widgets.md": f"# Widgets\n\n{sections}",
                      "docs/else.md": "# Else\n\nA widget, once.\n"})
    hits = _hits(service, repo, "widget")
    from_page = [h["heading_path"] for h in hits if h["path"] == "docs/widgets.md"]
    # all five sections (the tiny title section merged into part 1, cited as "Widgets"), not
    # the two a per-file cap of max_chunks_per_doc = 2 allowed
    assert sorted(from_page) == ["Widgets"] + [f"Widgets > Part {n}" for n in range(2, 6)]


def test_a_long_section_is_cited_at_its_best_chunk_and_capped(
        service: RepoDocsService, make_repo: Callable[..., Repo]) -> None:
    filler = "\n\n".join(f"Paragraph {n} about the gadget, with enough words to fill a "
                         f"chunk of the section. " * 6 for n in range(12))
    page = f"# Gadgets\n\n## Setup\n\n{filler}\n\nThe zyxcalibrate step tunes the gadget.\n"
    repo = make_repo({"docs/gadgets.md": page})
    hits = _hits(service, repo, "gadget zyxcalibrate")
    text = page.split("\n")
    first = hits[0]["citation"]
    cited = "\n".join(text[first["line_start"] - 1 : first["line_end"]])
    assert "zyxcalibrate" in cited
    # every chunk matches; the pipeline keeps at most max_chunks_per_doc (2) per section:
    # two of "Setup" and the first chunk, which the tiny title section merged into, cited
    # as "Gadgets"
    by_section = sorted(h["heading_path"] for h in hits)
    assert by_section == ["Gadgets", "Gadgets > Setup", "Gadgets > Setup"]


def test_title_field_lifts_every_chunk_of_the_named_page(
        service: RepoDocsService, make_repo: Callable[..., Repo]) -> None:
    repo = make_repo({
        "docs/input.md": "# User Input Prompts\n\n## Confirmation\n\n"
                           "Ask yes or no with confirm().\n",
        "docs/misc.md": "# Misc\n\n## Questions\n\nAsk the user anything, yes, no.\n",
    })
    hits = _hits(service, repo, "prompts ask yes or no")
    assert hits[0]["path"] == "docs/input.md"


def test_hybrid_fuses_by_section_when_the_lists_cite_different_chunks() -> None:
    from gitquarry.repo_docs.lexical import Row
    from gitquarry.repo_docs.search import fuse_sections
    from gitquarry.retrieval.fusion import rrf_fuse

    def row(cid: str, heading: str) -> Row:
        return Row(cid, "docs/a.md", 0, "b" * 40, "git", "markdown", 0, 1, 1, 1, "d",
                   ("A", heading))

    rows = {"a1": row("a1", "Setup"), "a2": row("a2", "Setup"), "b1": row("b1", "Other")}
    # BM25's best chunk of "Setup" is a2, the vectors' best is a1; b1 is second in both
    rankings = [["a2", "b1"], ["a1", "b1"]]
    chunk_level = rrf_fuse(rankings, [1.0, 1.0], k=20)
    assert chunk_level[0][0] == "b1"  # chunk by chunk, the section's votes were split
    out = fuse_sections(chunk_level, rankings, [1.0, 1.0], 20, rows)
    assert [c for c, _s in out] == ["a2", "b1", "a1"]
    scores = [s for _c, s in out]
    assert scores == sorted(scores, reverse=True)
    assert sorted(c for c, _s in out) == sorted(c for c, _s in chunk_level)

"""End-to-end tests of the History, Graph, Repositories and Status pages in Chromium:
content, 390 px and desktop widths, light and dark, keyboard only, no console errors."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from .conftest import WebEnv

#: Chromium tests (issue 24: the default run leaves the browser tests out; CI runs them)
pytestmark = pytest.mark.slow

WIDTHS = (390, 1280)


def _no_overflow(page: Any, width: int) -> None:
    scroll = page.evaluate("document.scrollingElement.scrollWidth")
    assert scroll <= width + 1, f"horizontal overflow at {width}px: {scroll}"


def test_history_search_results_histogram_and_commit(page_factory: Any, web_env: WebEnv) -> None:
    page, console = page_factory()
    page.fill("#q", "config parser")
    page.select_option("#mode", "hybrid")
    page.check("#explain")
    page.click("form.search button[type=submit]")
    page.wait_for_selector("ol.results li.result")
    first = page.locator("li.result").first
    text = first.inner_text()
    assert re.search(r"\b[0-9a-f]{10}\b", text)                   # short hash
    assert re.search(r"20\d\d-\d\d-\d\d", text)                   # date
    assert "Ada Lovelace" in text and "app" in text               # author, repository
    assert "score" in text and "lexical #" in text and "semantic #" in text
    assert "src/parser.py" in text                                # matching files
    titles = page.locator("li.result a.title").all_inner_texts()
    assert "Config parser understands comments" in titles
    # the histogram: server-side SVG, one bar per bin, a caption with the total
    svg = page.locator("figure.histogram svg")
    assert svg.count() == 1
    assert page.locator("figure.histogram rect.bar").count() > 3
    caption = page.locator("figure.histogram figcaption").inner_text()
    assert re.match(r"\d+ matching commits? over time", caption)
    assert page.locator("figure.histogram text.tick").count() >= 2
    # a commit: message and the stored diff with +/- lines marked
    page.click("li.result a.title >> text=Config parser understands comments")
    page.wait_for_selector("h1.commit-title")
    assert page.locator("pre.message").inner_text().startswith("Lines starting with #")
    assert page.locator("pre.diff span.d-add").count() >= 1
    assert page.locator("pre.diff span.d-del").count() >= 1
    assert page.locator("pre.diff span.d-hunk").count() >= 1
    assert console.errors == []


def test_history_filters_and_error_state(page_factory: Any, web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(f"{web_env.base}history?q=parser&mode=lexical&glob=src/parser.py"
              "&after=2022-01-01")
    dates = [d for d in re.findall(r"20\d\d-\d\d-\d\d",
                                   " ".join(page.locator("li.result .meta").all_inner_texts()))]
    assert dates and all(d >= "2022-01-01" for d in dates)
    files = page.locator("li.result .files").all_inner_texts()
    assert files and all("src/parser.py" in f for f in files)
    page.goto(f"{web_env.base}history?q=parser&after=the-day-before")
    alert = page.locator("[role=alert]")
    assert alert.count() == 1
    assert "the-day-before" in alert.inner_text() and "invalid_time" in alert.inner_text()
    assert page.locator("#q").input_value() == "parser"   # the form keeps what was typed
    page.goto(f"{web_env.base}history/commit/{'0' * 40}")
    assert "is not in the index" in page.locator("[role=alert]").inner_text()
    # the only console lines are the browser's notes on the 400/404 statuses themselves
    assert all("status of 40" in e for e in console.errors), console.errors


def test_graph_search_kind_filter_and_node(page_factory: Any, web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(f"{web_env.base}graph")
    page.fill("#q", "search")
    page.select_option("#kind", "service")
    page.click("form.search button[type=submit]")
    page.wait_for_selector("li.result")
    kinds = page.locator("li.result .badge").all_inner_texts()
    assert kinds and set(kinds) == {"service"}
    page.select_option("#kind", "")
    page.click("form.search button[type=submit]")
    page.click("li.result a.title >> text=search")
    page.wait_for_selector("h1")
    assert "Full text search over graph nodes" in page.locator("p.lead").inner_text()
    edges_in = page.locator("section[aria-labelledby=in-h] li").all_inner_texts()
    assert any("mcp-server" in e for e in edges_in) and any("cli" in e for e in edges_in)
    assert "docs/features/search.md" in page.locator("ul.docs").inner_text()
    assert page.locator("p.snippet mark").count() >= 1
    page.click("section[aria-labelledby=in-h] a >> text=mcp-server")
    out = page.locator("section[aria-labelledby=out-h] li").all_inner_texts()
    assert any("uses" in e and "search" in e for e in out)
    assert console.errors == []


def test_status_page(page_factory: Any, web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(f"{web_env.base}status")
    text = page.locator("main").inner_text()
    assert "running" in text and "pid" in text
    assert "6 in 1 repository" in text                       # commits indexed
    assert "fake|" in text and "100.0 %" in text              # embeddings per namespace
    assert re.search(r"Index size\s+\d", text)
    assert "Documentation caches" in text
    assert console.errors == []


def test_repositories_page_lists_registrations_and_unregistered(page_factory: Any,
                                                                web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(f"{web_env.base}repos")
    names = page.locator("table.grid code").all_inner_texts()
    for name in ("demo/ready", "demo/noset", "demo/slow"):
        assert name in names
    # state 1: a repository with no registration hands off the register command
    assert page.locator('[data-state="no_registration"]').count() == 1
    cmd = page.locator("pre[id^=register-cmd]").inner_text()
    assert cmd.startswith("gitquarry repo-docs register --repo owner/name --repository-path")
    assert console.errors == []


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("dark", [False, True])
def test_pages_fit_width_and_color_scheme(page_factory: Any, web_env: WebEnv, width: int,
                                          dark: bool) -> None:
    page, console = page_factory(width, dark=dark)
    urls = ["history?q=config+parser&explain=1", f"history/commit/{web_env.commits[-1]}",
            "graph?q=search", "graph/node/search?q=search", "repos", "status",
            web_env.docs_url("ready", q="writer lease")[len(web_env.base):]]
    for url in urls:
        page.goto(web_env.base + url)
        _no_overflow(page, width)
    bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    channels = [int(c) for c in re.findall(r"\d+", bg)[:3]]
    assert (sum(channels) < 150) if dark else (sum(channels) > 600), bg
    assert console.errors == []


def test_keyboard_only_navigation(page_factory: Any, web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(f"{web_env.base}status")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    # from the top: brand, then the four navigation links, in order, each visibly focused
    page.goto(f"{web_env.base}status")
    seen = []
    for _ in range(6):
        page.keyboard.press("Tab")
        seen.append(page.evaluate("document.activeElement.textContent.trim()"))
        assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    assert seen[1:6] == ["gitquarry", "History", "Graph", "Repositories", "Status"]
    # a search by keyboard alone
    page.keyboard.press("Enter")  # Status link
    page.goto(f"{web_env.base}history")
    page.keyboard.type("writer lease")      # the query box has focus on arrival
    page.keyboard.press("Enter")
    page.wait_for_selector("li.result")
    assert "lease" in page.locator("ol.results").inner_text().lower()
    assert console.errors == []


def test_screenshots(page_factory: Any, web_env: WebEnv) -> None:
    """Writes docs/screenshots/*.png when GITQUARRY_SCREENSHOTS=1 (kept in the repository);
    otherwise only checks that every main page renders a screenshot."""
    target = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
    save = os.environ.get("GITQUARRY_SCREENSHOTS") == "1"
    pages = {"history": "history?q=config+parser&explain=1",
             "commit": f"history/commit/{web_env.commits[-1]}",
             "graph": "graph/node/search?q=search",
             "docs": web_env.docs_url("ready", q="writer lease")[len(web_env.base):],
             "status": "status"}
    for width, label in ((1280, "desktop"), (390, "mobile")):
        page, _console = page_factory(width)
        for name, url in pages.items():
            page.goto(web_env.base + url)
            data = page.screenshot(full_page=True)
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
            if save:
                target.mkdir(parents=True, exist_ok=True)
                (target / f"{name}-{label}.png").write_bytes(data)


#: table cells whose right edge is past the viewport (a column cut off or hidden behind a
#: scroll bar); the header cells of a stacked table are visually hidden (1 px)
_CUT_CELLS = """() => [...document.querySelectorAll('td, th')].filter(c => {
  const r = c.getBoundingClientRect();
  return r.width > 1 && r.right > window.innerWidth + 1;
}).map(c => c.textContent.trim().slice(0, 40))"""


@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_is_wider_than_the_screen_and_no_column_is_cut(
        page_factory: Any, web_env: WebEnv, width: int) -> None:
    """Issue 24 §5 at 390 and 1280 px: every page (the History page with a long e-mail
    address, the docs page's and the Jobs page's job tables included) fits the screen, no
    table cell lies outside it, and graph snippets carry no raw Markdown."""
    page, console = page_factory(width)
    urls = ["history?q=config+parser", "history?q=lease&explain=1",
            f"history/commit/{web_env.commits[-1]}", "graph?q=search",
            "graph/node/search?q=search", "repos", "status", "jobs",
            web_env.docs_url("ready")[len(web_env.base):],
            web_env.docs_url("ready", q="writer lease")[len(web_env.base):]]
    seen_email = False
    for url in urls:
        page.goto(web_env.base + url)
        _no_overflow(page, width)
        assert page.evaluate(_CUT_CELLS) == [], (url, width)
        seen_email = seen_email or "translations.example.com" in page.inner_text("body")
    assert seen_email, "the long e-mail address is on no page: the check would not see it"
    page.goto(web_env.base + "jobs")
    assert page.locator("table.grid.stack td").count() >= 5  # the job table has rows
    page.goto(web_env.base + "graph?q=search")
    snippets = page.locator(".snippet").all_inner_texts()
    assert snippets, "no graph snippet to check"
    for text in snippets:
        assert not text.lstrip().startswith("#") and "**" not in text and "---" not in text, text
    assert console.errors == []

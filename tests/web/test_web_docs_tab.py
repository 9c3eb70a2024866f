"""The Documentation tab in Chromium, one test per state of the seed's UI model (no
registration is on the Repositories page: see test_web_pages), plus the actions: live
progress, cancel with confirmation, reconcile with confirmation, copy buttons, and the
exact-revision search with citations."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import WebEnv

#: Chromium tests (issue 24: the default run leaves the browser tests out; CI runs them)
pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def default_config(web_env: WebEnv) -> Iterator[None]:
    web_env.set_config()
    yield
    web_env.set_config()


def states(page: Any) -> list[str]:
    return [s for s in page.locator("ul.badges [data-state]").evaluate_all(
        "els => els.map(e => e.dataset.state)")]


def lane(page: Any, name: str) -> str:
    return str(page.locator(f'[data-lane="{name}"]').first.inner_text())


def test_registered_without_a_set(page_factory: Any, web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(web_env.docs_url("noset"))
    assert states(page) == ["registered_no_set"]
    assert "available" in lane(page, "fulltext")
    assert "full-text fallback" in lane(page, "semantic")
    text = page.locator("main").inner_text()
    assert "none for HEAD in this namespace" in text
    assert re.search(r"3\s+eligible files", text)                     # plan preview
    assert "Next poll" in text and "every 3600 s" in text             # reconciliation
    # hybrid search visibly falls back to full-text ranking
    page.fill("#dq", "nginx proxy")
    page.click("section[aria-labelledby=search-h] button[type=submit]")
    summary = page.locator("p.summary")
    assert summary.get_attribute("data-effective-mode") == "fulltext"
    assert "lexical fallback" in summary.inner_text()
    assert "revision_set_missing" in page.locator("ul.warnings").inner_text()
    assert console.errors == []


def test_ready_set_search_citations_and_identity(page_factory: Any, web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(web_env.docs_url("ready"))
    assert states(page) == ["ready"]
    assert "ready" in lane(page, "semantic")
    text = page.locator("main").inner_text()
    for fact in ("builtin", "conventional-docs-v1", "docs/**", "README*", "Set id",
                 "Chunk policy", "Coverage", "Retention (GC)", "at most 8 committed sets",
                 "512.0 MiB", "GITQUARRY_REPO_DOC_VECTOR_BYTES"):
        assert fact in text, fact
    page.fill("#dq", "writer lease backoff")
    page.fill("#drev", "HEAD")
    page.select_option("#dmode", "hybrid")
    page.fill("#dlimit", "5")
    page.click("section[aria-labelledby=search-h] button[type=submit]")
    assert page.locator("p.summary").get_attribute("data-effective-mode") == "hybrid"
    first = page.locator("ol.results li.result").first
    cite = first.locator("code.cite").inner_text()
    assert re.fullmatch(r"docs/deploy\.md:\d+-\d+", cite)
    assert "Deployment" in first.locator(".heading").inner_text()
    assert first.locator("p.snippet mark").count() >= 1
    assert re.search(r"digest [0-9a-f]{16}", first.locator(".meta").inner_text())
    assert console.errors == []


def test_partial_set(page_factory: Any, web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(web_env.docs_url("partial"))
    assert "partial" in states(page)
    assert "partial" in lane(page, "semantic")
    assert re.search(r"\d+ of \d+ chunks embedded", lane(page, "semantic"))
    assert "partial" in lane(page, "attempt")        # the partial set is the active attempt
    page.fill("#dq", "topic lease")
    page.click("section[aria-labelledby=search-h] button[type=submit]")
    assert "partial_revision_set" in page.locator("ul.warnings").inner_text()
    assert console.errors == []


def test_failed_after_ready_keeps_the_ready_set_visible(page_factory: Any,
                                                        web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(web_env.docs_url("failed"))
    assert "failed_after_ready" in states(page)
    failure = page.locator('[data-lane="last-failure"]').inner_text()
    assert "embedding_failed" in failure
    assert "older ready set" in failure
    # the older ready set is still listed and searchable at its revision
    page.locator("details summary").click()
    assert "ready" in page.locator("details table").inner_text()
    page.fill("#dq", "nginx")
    page.fill("#drev", "HEAD~1")
    page.click("section[aria-labelledby=search-h] button[type=submit]")
    assert page.locator("p.summary").get_attribute("data-effective-mode") == "hybrid"
    assert console.errors == []


def test_stale_generation_is_a_rebind_requirement(page_factory: Any, web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(web_env.docs_url("stale"))             # the link still carries generation 1
    assert states(page) == ["stale_generation"]
    alert = page.locator("[role=alert]").inner_text()
    assert "Rebind required" in alert and "generation 1" in alert and "generation 2" in alert
    cmd = page.locator("#rebind-cmd").inner_text()
    assert "--source-registration-generation 2" in cmd
    assert cmd.endswith("--repository-path /path/to/checkout")
    assert page.locator("section[aria-labelledby=search-h]").count() == 0  # nothing picked
    page.click("text=Open the current generation (2)")
    assert "stale_generation" not in states(page)
    assert console.errors == []


def test_invalid_policy_names_file_and_key(page_factory: Any, web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(web_env.docs_url("badpolicy"))
    assert states(page) == ["policy_invalid"]
    detail = page.locator('[data-state-detail="policy_invalid"]').inner_text()
    assert "repository_docs_policy_invalid" in detail and ".gitquarry.yaml" in detail
    assert "schema" in detail
    assert "unavailable" in lane(page, "fulltext")
    assert page.locator("form[action='/repos/docs/index']").count() == 0
    assert console.errors == []


def test_overlay_stale(page_factory: Any, web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(web_env.docs_url("overlay"))
    assert "overlay_stale" in states(page)
    detail = page.locator('[data-state-detail="overlay_stale"]').inner_text()
    assert "worktree_overlay_stale" in detail and "--include-worktree" in detail
    # an overlay search reads the working tree as it is now (never the stale set's bytes)
    page.fill("#dq", "Local edit")
    page.check("#doverlay")
    page.click("section[aria-labelledby=search-h] button[type=submit]")
    summary = page.locator("p.summary").inner_text()
    assert "worktree_overlay" in summary
    assert "two" in page.locator("ol.results").inner_text()
    assert console.errors == []


def test_provider_unavailable_falls_back_to_fulltext(page_factory: Any, web_env: WebEnv) -> None:
    web_env.set_config(provider="sentence-transformers")
    page, console = page_factory()
    page.goto(web_env.docs_url("ready"))
    assert "provider_unavailable" in states(page)
    assert "full-text fallback" in lane(page, "semantic")
    assert "available" in lane(page, "fulltext")
    page.fill("#dq", "nginx")
    page.click("section[aria-labelledby=search-h] button[type=submit]")
    assert page.locator("p.summary").get_attribute("data-effective-mode") == "fulltext"
    assert "embedding_provider_unavailable" in page.locator("ul.warnings").first.inner_text()
    assert page.locator("li.result").count() >= 1
    assert console.errors == []


def test_building_live_progress_and_cancel_with_confirmation(page_factory: Any,
                                                             web_env: WebEnv) -> None:
    web_env.set_config(provider="slowfake", batch=1)
    page, console = page_factory()
    page.goto(web_env.docs_url("slow"))
    page.click("form.index-now button[type=submit]")
    assert page.locator("h1").inner_text() == "Index now?"          # confirmation first
    page.click("text=Yes, index now")
    page.wait_for_url(re.compile(r"/jobs/job-\d{6}$"))
    job_id = page.url.rsplit("/", 1)[1]
    live = page.locator(f'[data-live-job="{job_id}"]')
    # live progress: the page updates itself while the job embeds (no reload)
    page.wait_for_function(
        "id => { const e = document.querySelector(`[data-live-job='${id}']`);"
        " return e && e.dataset.liveStatus === 'running' && Number(e.dataset.liveDone) >= 2; }",
        arg=job_id, timeout=60_000)
    first = int(live.get_attribute("data-live-done") or 0)
    page.wait_for_function(
        "([id, n]) => Number(document.querySelector(`[data-live-job='${id}']`)"
        ".dataset.liveDone) > n", arg=[job_id, first], timeout=30_000)
    # the docs tab shows it as the active attempt (building)
    tab, _ = page_factory()
    tab.goto(web_env.docs_url("slow"))
    assert "building" in states(tab)
    assert job_id in lane(tab, "attempt")
    # cancel asks first; "No" leaves the job running
    page.click("text=Cancel job…")
    assert page.locator("h1").inner_text() == f"Cancel {job_id}?"
    page.click("text=No, go back")
    assert web_env.daemon.runner.snapshot(int(job_id[4:])).status in ("running", "queued")
    page.click("text=Cancel job…")
    page.click(f"text=Yes, cancel {job_id}")
    page.wait_for_url(re.compile(rf"/jobs/{job_id}$"))
    deadline = time.monotonic() + 30
    while web_env.daemon.runner.snapshot(int(job_id[4:])).status != "cancelled":
        assert time.monotonic() < deadline, "the job was not cancelled"
        time.sleep(0.1)
    page.reload()
    assert "cancelled" in page.locator(f'[data-live-job="{job_id}"] [data-field=status]'
                                       ).inner_text()
    assert console.errors == []
    web_env.wait_jobs_idle()


def test_reconcile_now_with_confirmation_opens_the_job(page_factory: Any,
                                                       web_env: WebEnv) -> None:
    page, console = page_factory()
    page.goto(web_env.docs_url("noset"))
    page.click("text=Reconcile now…")
    assert page.locator("h1").inner_text() == "Reconcile now?"
    page.click("text=Yes, reconcile now")
    page.wait_for_url(re.compile(r"/jobs/job-\d{6}$"))
    job_id = page.url.rsplit("/", 1)[1]
    assert "repo_docs_index" in page.locator("dl.facts").inner_text()
    page.wait_for_function(
        "id => document.querySelector(`[data-live-job='${id}']`).dataset.liveStatus"
        " === 'succeeded'", arg=job_id, timeout=60_000)
    web_env.wait_jobs_idle()
    page.goto(web_env.docs_url("noset"))
    assert "ready" in states(page)
    assert page.locator("[data-last-gc]").count() == 1           # the job's GC event
    assert console.errors == []


def test_copy_buttons(page_factory: Any, web_env: WebEnv) -> None:
    page, console = page_factory(permissions=["clipboard-read", "clipboard-write"])
    page.goto(web_env.docs_url("ready"))
    for box, expect in (("policy-fragment", "repository_docs:\n  schema: 1\n"),
                        ("rebind-cmd", "gitquarry repo-docs rebind --repo demo/ready")):
        page.click(f'button[data-copy="{box}"]')
        page.wait_for_selector(f'button[data-copy="{box}"][data-copied="yes"]')
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == page.locator(f"#{box}").inner_text()
        assert copied.startswith(expect)
    import yaml

    fragment = yaml.safe_load(page.locator("#policy-fragment").inner_text())
    assert fragment == {"repository_docs": {"schema": 1, "enabled": True,
                                            "preset": "conventional-docs-v1",
                                            "include": [], "exclude": []}}
    page.goto(f"{web_env.base}repos")
    page.click('button[data-copy^="register-cmd"]')
    assert page.evaluate("navigator.clipboard.readText()").startswith(
        "gitquarry repo-docs register")
    assert console.errors == []

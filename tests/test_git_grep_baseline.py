"""The ``git log --grep`` history baseline (benchmarks/git_grep_history.py) on a real repository:
AND of the content words first, OR when the AND finds nothing, dates and globs passed to git,
scored by eval_history's scorer."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def baseline() -> Any:
    return _load("gq_git_grep_history", BENCH / "git_grep_history.py")


def _commit(repo: Path, path: str, message: str, when: int) -> str:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(message + "\n", encoding="utf-8")
    date = f"@{when} +0000"
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "-C", str(repo), "add", path], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", message], check=True, env=env)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture()
def repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    hashes = {
        "pager": _commit(root, "src/pager.py", "Resolve the pager command once", 1_000_000),
        "color": _commit(root, "docs/color.rst", "Fix colored output on Windows", 2_000_000),
        "color2": _commit(root, "src/color.py", "Colored output for the progress bar", 3_000_000),
    }
    return root, hashes


def test_content_words_drop_stop_words_and_repeats(baseline: Any) -> None:
    assert baseline.content_words("When was the Pager command, the pager, resolved?") == [
        "pager", "command", "resolved"]
    assert baseline.content_words("the of and") == []


def test_and_first_then_or_then_filters(baseline: Any, repo: tuple[Path, dict[str, str]]) -> None:
    root, h = repo
    q = baseline.Query
    # AND: both words only in one commit
    top, fallback, _ = baseline.git_grep(root, q(query="pager command", relevant=[h["pager"]]), 10)
    assert top == [h["pager"]] and not fallback
    # AND finds nothing ("windows" and "bar" never together): OR, git's order (newest first)
    top, fallback, _ = baseline.git_grep(root, q(query="windows bar", relevant=[]), 10)
    assert fallback and top == [h["color2"], h["color"]]
    # a glob and a time window reach git
    top, _, _ = baseline.git_grep(
        root, q(query="colored output", relevant=[], files_glob="src/**"), 10)
    assert top == [h["color2"]]
    top, _, _ = baseline.git_grep(
        root, q(query="colored output", relevant=[], before=2_500_000), 10)
    assert top == [h["color"]]
    top, _, _ = baseline.git_grep(root, q(query="the of", relevant=[]), 10)
    assert top == []


def test_scored_by_eval_history(baseline: Any, repo: tuple[Path, dict[str, str]]) -> None:
    root, h = repo
    q = baseline.Query
    queries = [q(query="pager command", relevant=[h["pager"]], kind="keyword"),
               q(query="windows bar", relevant=[h["color"]], kind="paraphrase"),
               q(query="nothing matches zebra", relevant=[h["color"]], kind="paraphrase")]
    result = baseline.evaluate(root, queries, 10, verbose=False)
    assert result["ranks"] == [1, 2, None]
    assert result["metrics"]["all"]["recall@10"] == round(2 / 3, 4)
    assert result["metrics"]["paraphrase"]["mrr@10"] == 0.25
    assert result["or_fallbacks"] == 2

"""``tools/commit_encoder/pairs_v2.py``: training pairs whose documents look like the index's.

Real repositories (made here, cloned bare as the mirrors are): a ``title`` pair's document has
the message but not the title, a ``body`` pair's has the title but not the message, and
``doc_full`` is the commit document v2 the index embeds (title, then message, then diff side).
No query is a verbatim part of its own document. Evaluation repositories are refused.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from tests.testkit.git_repo import GitRepo

from gitquarry.history.index.document import DocumentFormat

ROOT = Path(__file__).resolve().parents[1]
BODY = "The cache kept stale entries after a reload, so readers saw old values for a while."


def _tool() -> ModuleType:
    sys.path.insert(0, str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location(
        "pairs_v2", ROOT / "tools" / "commit_encoder" / "pairs_v2.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def _mirror(tmp_path: Path) -> tuple[Path, str, str]:
    work = GitRepo(tmp_path / "work")
    work.commit({"cache.py": "def get(key):\n    return store[key]\n"}, "Add cache getter")
    with_body = work.commit({"cache.py": "def get(key):\n    reload_if_stale()\n"
                             "    return store[key]\n"},
                            f"Drop stale cache entries on reload\n\n{BODY}\n\nFixes #12")
    without = work.commit({"README.md": "Widgets\n"}, "Document the widget cache")
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--bare", str(work.path),
                    str(mirrors / "acme+widgets" / "repo")], check=True)
    return mirrors, with_body, without


def _run(tool: ModuleType, tmp_path: Path, commits: list[str], share: float,
         repo: str = "acme/widgets") -> list[dict[str, str]]:
    src, out = tmp_path / "pairs.jsonl", tmp_path / f"v2-{share}.jsonl"
    src.write_text("".join(json.dumps({"repo": repo, "commit": c, "query": "q",
                                       "document": "d"}) + "\n" for c in commits), "utf-8")
    assert tool.main(["--pairs", str(src), "--out", str(out), "--body-share", str(share)]) == 0
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()]


def test_documents_carry_the_other_half_of_the_message_never_the_query(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = _tool()
    mirrors, with_body, without = _mirror(tmp_path)
    monkeypatch.setattr(tool.base, "MIRRORS", mirrors)
    body_pair, plain = _run(tool, tmp_path, [with_body, without], 1.0)
    assert body_pair["mode"] == "body" and body_pair["query"] == BODY
    assert body_pair["document"].startswith("Drop stale cache entries on reload\ncache.py")
    assert BODY not in body_pair["document"]
    assert plain["mode"] == "title" and plain["query"] == "Document the widget cache"
    assert "Document the widget cache" not in plain["document"]
    assert plain["document"].startswith("README.md")
    # doc_full is the index's document: title, message, then the diff side
    row = {"title": "Drop stale cache entries on reload", "message": f"{BODY}\n\nFixes #12",
           "files_changed": ["cache.py"], "delta_truncated": ""}
    head = DocumentFormat("v2", 128).build(row, 256)
    assert body_pair["doc_full"].startswith(head + "\n")
    assert "reload_if_stale" in body_pair["doc_full"]

    (title_pair,) = _run(tool, tmp_path, [with_body], 0.0)
    assert title_pair["mode"] == "title"
    assert title_pair["query"] == "Drop stale cache entries on reload"
    assert title_pair["document"].startswith(BODY)
    assert "Drop stale cache" not in title_pair["document"]
    assert title_pair["document"] == body_pair["doc_body"]


def test_same_input_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = _tool()
    mirrors, with_body, without = _mirror(tmp_path)
    monkeypatch.setattr(tool.base, "MIRRORS", mirrors)
    first = _run(tool, tmp_path, [with_body, without] * 3, 0.5)
    assert _run(tool, tmp_path, [with_body, without] * 3, 0.5) == first


def test_an_evaluation_repository_is_refused(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    tool = _tool()
    mirrors, with_body, _ = _mirror(tmp_path)
    monkeypatch.setattr(tool.base, "MIRRORS", mirrors)
    with pytest.raises(SystemExit, match="evaluation repository"):
        _run(tool, tmp_path, [with_body], 0.5, repo="pallets/click")

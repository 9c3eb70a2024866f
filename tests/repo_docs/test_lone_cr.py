"""Documents with old Mac line endings (a lone CR) are searched, not a crash.

cmark and the reStructuredText reader count a lone CR as a line break; the chunker's lines,
line ranges and citations are LF-delimited, as Git's. Before the fix, the heading lines of
such a markdown file pointed past the document's last LF line and ``chunk_document`` raised
``IndexError``, so the whole ``repo-docs search`` of the revision failed as an internal error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gitquarry.cli.app import main
from gitquarry.repo_docs.chunker import chunk_document, headings_for

from .conftest import Repo

LONE_CR_MD = "# Title\r\rSome text about quokkas\r\r## Sub\r\rmore text\r"
LONE_CR_RST = "Title\r=====\r\rSome text about quokkas\r"


@pytest.mark.parametrize(("text", "content_class"),
                         [(LONE_CR_MD, "markdown"), (LONE_CR_RST, "restructuredtext")])
def test_a_lone_cr_document_is_chunked_as_plain_text(text: str, content_class: str) -> None:
    data = text.encode()
    assert headings_for(text, content_class) == []
    spans = chunk_document(data, content_class)
    assert spans, "the document must still be searchable"
    assert all(span.line_start == 1 and span.line_end == 1 for span in spans)  # one LF line
    assert b"".join(data[s.byte_start:s.byte_end] for s in spans).strip() == data.strip()


def test_crlf_documents_keep_their_headings() -> None:
    text = "# Title\r\n\r\nSome text\r\n\r\n## Sub\r\n\r\nmore text\r\n"
    assert [h.title for h in headings_for(text, "markdown")] == ["Title", "Sub"]


def test_search_of_a_revision_with_a_lone_cr_file_answers(
        capsys: pytest.CaptureFixture[str], make_repo: Callable[..., Repo], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo({"README.md": LONE_CR_MD,
                      "docs/other.md": "# Other\n\nNothing about marsupials here.\n"})
    monkeypatch.setenv("GITQUARRY_CONFIG", str(tmp_path / "c.toml"))
    (tmp_path / "c.toml").write_text('[embedding]\nprovider = "none"\n')
    for argv in (["repo-docs", "register", "--repo", "acme/cr", "--repository-path",
                  str(repo.path)],):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code in (0, None)
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["repo-docs", "search", "quokkas", "--mode", "fulltext", "--json"])
    out, err = capsys.readouterr()
    assert info.value.code in (0, None), err
    hits = json.loads(out)["hits"]
    assert [hit["path"] for hit in hits] == ["README.md"]

"""Full-text search answers are the same with ``index_text``'s one-pass path for text that
is not ASCII as with the two-pass one it replaced (``tests/test_tokenize_unicode_path.py``'s
reference, swapped in where the docs tables are filled: ``repo_docs.lexical``): every hit,
path, range, heading path, snippet, score and order, over this checkout's docs, generated
pages and German-style pages (umlauts, typographic quotes, box drawing, camelCase, Cyrillic
and CJK words), with an indexed revision set and without."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.test_tokenize_unicode_path import reference_index_text

from gitquarry.config import Config
from gitquarry.repo_docs import lexical

from .conftest import Repo
from .test_search_chunker_identity import WORDS, answers, checkout_docs, generated_docs

GERMAN = ["Abhängigkeiten", "Größe", "„Anfrage“", "Überprüfung", "straße", "FastAPI",
          "BaseModel", "HTTPException", "pydanticModel", "─│├", "Rückgabe–Wert", "naïveÉtude",
          "配置Datei", "Ωmega", "v2.0.1", "äöüÄÖÜß", "überModel", "GrößeAPI", "ΩmegaClass",
          "数据库配置", "データ・ベース", "请求体RequestBody", "Запрос", "ТелоЗапроса"]


def german_docs(count: int, seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    docs = {}
    for n in range(count):
        parts = [f"# Seite {n} {rng.choice(GERMAN)}\n\n"]
        for k in range(rng.randint(1, 6)):
            parts.append(f"## {rng.choice(GERMAN)} {rng.choice(WORDS)} {k}\n\n")
            body = " ".join(rng.choice(GERMAN + WORDS) for _ in range(rng.randint(5, 300)))
            parts.append(body + "\n\n")
        docs[f"docs/de/seite{n}.md"] = "".join(parts)
    return docs


@pytest.mark.parametrize("index_first", [False, True])
def test_search_answers_equal_reference_tokenizer(
        make_repo: Callable[..., Repo], tmp_path: Path, fake_config: Config,
        monkeypatch: pytest.MonkeyPatch, index_first: bool) -> None:
    files: dict[str, str | bytes | None] = {
        **checkout_docs(), **generated_docs(20, 12), **german_docs(30, 4)}
    repo = make_repo(files)
    rng = random.Random(8)
    queries = [*WORDS, *GERMAN, *(" ".join(rng.sample(GERMAN + WORDS, 3)) for _ in range(12)),
               "base model", "http exception", "pydantic", "größe abhängigkeiten"]
    config = fake_config.replaced(indexing={"index_dir": str(tmp_path / "cache-new")})
    new = answers(config, repo, tmp_path / "new", queries, index_first)

    calls = {"wide": 0}

    def main_index_text(text: str | None) -> str:
        calls["wide"] += bool(text) and not text.isascii()  # type: ignore[union-attr]
        return reference_index_text(text)

    monkeypatch.setattr(lexical, "index_text", main_index_text)
    config = fake_config.replaced(indexing={"index_dir": str(tmp_path / "cache-main")})
    old = answers(config, repo, tmp_path / "old", queries, index_first)

    assert calls["wide"] > 200  # the reference did index the non-ASCII chunks on that side
    hits = [h for response in new for h in response["hits"]]
    assert len({h["path"] for h in hits if h["path"].startswith("docs/de/")}) > 20
    for query, got, want in zip(queries, new, old, strict=True):
        assert got == want, query

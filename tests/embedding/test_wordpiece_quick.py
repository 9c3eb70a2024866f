"""``embedding.wordpiece.QuickTokenizer`` gives the ids ``tokenizers`` gives for the bundled
model's ``tokenizer.json`` (so the same vectors), answers only ASCII text without a special
token's literal, and hands everything else (and every text after the first ``quick_texts``)
to the real tokenizer (issue 21 §1, s4-cold)."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import numpy as np
import pytest

from gitquarry.embedding.minilm import MAX_TOKENS, Runtime, _real_tokenizer, model_files
from gitquarry.embedding.wordpiece import SPECIAL, QuickTokenizer, read_plan

ROOT = Path(__file__).resolve().parents[2]


def _real(max_length: int):  # type: ignore[no-untyped-def]
    return _real_tokenizer(model_files()[1], max_length)


def _quick(max_length: int, quick_texts: int = 10**9) -> QuickTokenizer:
    plan = read_plan(model_files()[1])
    assert plan is not None  # the shipped file is the pipeline the class implements
    return QuickTokenizer(plan, lambda: _real(max_length), max_length=max_length,
                          quick_texts=quick_texts)


def _texts() -> list[str]:
    rng = random.Random(2112)
    plan = read_plan(model_files()[1])
    assert plan is not None
    words = [w for w in plan["vocab"] if w.isascii() and not w.startswith("[")]
    alphabet = string.printable + "".join(chr(c) for c in range(32)) + "\x7f"
    texts = ["", " ", "\t\n\r", "\x0b\x0c\x1f", "a" * 150, "x" * 100, "x" * 101,
             "fix cache", "Fix: parser's cache (again)!", "[sep] [Sep]", "a--b...c",
             "user@example.com http://x.y/z?q=1&r=2", "snake_case and CamelCase.dotted()",
             "zzqxjv qqqqqq wxyzzy", "__init__.py ~/.config/gitquarry $HOME %d {a,b}"]
    for _ in range(400):
        texts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))))
    for _ in range(400):
        parts = []
        for _ in range(rng.randint(1, 60)):
            w = rng.choice(words).removeprefix("##")
            if rng.random() < 0.3:
                w += rng.choice(words).removeprefix("##")
            if rng.random() < 0.2:
                w = w.upper() if rng.random() < 0.5 else w.capitalize()
            parts.append(w + (rng.choice(string.punctuation) if rng.random() < 0.15 else ""))
        texts.append(rng.choice([" ", "  ", "\n", "\t"]).join(parts))
    for path in sorted((ROOT / "src" / "gitquarry").rglob("*.py"))[:40]:
        lines = path.read_text("utf-8").splitlines()
        texts.extend("\n".join(lines[i:i + 12]) for i in range(0, len(lines), 12))
    return texts


@pytest.mark.parametrize("max_length", [MAX_TOKENS, 16, 3])
def test_same_ids_as_tokenizers(max_length: int) -> None:
    real, quick = _real(max_length), _quick(max_length)
    answered = 0
    for text in _texts():
        ids = quick.ids(text)
        if ids is None:
            assert not text.isascii() or any(s in text for s in SPECIAL), repr(text)
            continue
        answered += 1
        assert ids == real.encode(text).ids, repr(text)
    assert answered > 800


def test_other_text_goes_to_the_real_tokenizer() -> None:
    quick = _quick(MAX_TOKENS, quick_texts=3)
    assert quick.ids("naïve café") is None and quick.ids("x [SEP] y") is None
    assert quick._real is None
    got = quick.encode_batch(["plain text", "naïve café"])  # one text it cannot answer
    assert quick._real is not None
    real = _real(MAX_TOKENS)
    assert [e.ids for e in got] == [e.ids for e in real.encode_batch(["plain text", "naïve café"])]
    fresh = _quick(MAX_TOKENS, quick_texts=1)
    fresh.encode_batch(["a"])
    assert fresh._real is None
    fresh.encode_batch(["b"])  # the second text of the process: the real tokenizer
    assert fresh._real is not None


def test_a_different_pipeline_is_not_read(tmp_path: Path) -> None:
    data = json.loads(model_files()[1].read_text("utf-8"))
    for change in ({"normalizer": {**data["normalizer"], "lowercase": False}},
                   {"pre_tokenizer": {"type": "Whitespace"}},
                   {"model": {**data["model"], "max_input_chars_per_word": 50}},
                   {"added_tokens": data["added_tokens"][:-1]}):
        path = tmp_path / "tokenizer.json"
        path.write_text(json.dumps({**data, **change}), encoding="utf-8")
        assert read_plan(path) is None
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    assert read_plan(tmp_path / "bad.json") is None


def test_runtime_vectors_equal_with_the_quick_tokenizer() -> None:
    model, tokenizer = model_files()
    quick = Runtime(model, tokenizer, "cpu", 1, quick_texts=4)
    plain = Runtime(model, tokenizer, "cpu", 1, quick_texts=0)
    assert isinstance(quick.tokenizer, QuickTokenizer) and quick.tokenizer._real is None
    texts = ["fix cache timeout", "Parser error on empty input (see #42)."]
    for text in texts:
        assert np.array_equal(quick.encode([text]), plain.encode([text]))
    assert quick.tokenizer._real is None  # answered without importing tokenizers' pipeline

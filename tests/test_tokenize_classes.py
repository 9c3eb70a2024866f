"""``retrieval.tokenize``'s class-byte path for text that is not ASCII (``_class_tokens``:
Latin-1 bytes plus an error handler writing one class byte per wider character) finds the
same tokens, and so ``index_text`` gives the same string, as the regex path it replaced
(``_BOUNDARY`` and ``_CJK_CHAR`` hits widened by ``str.isalnum`` scans), kept here verbatim
as the reference: on every code point, on generated text mixing the characters where the two
could part (Latin-1 letters and signs, wide letters and digits, punctuation, CJK letters and
CJK punctuation, surrogates, astral characters), and on this checkout's docs."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest

from gitquarry.retrieval import tokenize
from gitquarry.retrieval.tokenize import expand_token, index_text

ROOT = Path(__file__).resolve().parents[1]
_CJK = ("\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
        "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
        "\U00020000-\U0003134f")
_BOUNDARY = re.compile(r"[A-Z](?<=[a-z0-9][A-Z])|[A-Z](?=[A-Z][a-z])")
_CJK_CHAR = re.compile("([" + _CJK + "])")


def reference_tokens(text: str) -> set[str]:
    """Main's ``_unicode_tokens`` (before the class-byte path), verbatim."""
    hits = [m.start() for m in _BOUNDARY.finditer(text)]
    hits.extend(m.start() for m in _CJK_CHAR.finditer(text))
    tokens: set[str] = set()
    end = -1
    for at in sorted(hits):
        if at < end:
            continue
        start = at
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        end = at
        while end < len(text) and text[end].isalnum():
            end += 1
        tokens.add(text[start:end])
    return tokens


def reference_index_text(text: str | None) -> str:
    """Main's ``index_text`` with the reference tokens for text that is not ASCII."""
    if not text:
        return ""
    found: dict[str, None] = {}
    tokenize._versions(text, found)
    if text.isascii():
        tokens = set() if text.islower() else tokenize._ascii_tokens(text)
    else:
        tokens = reference_tokens(text)
    for token in sorted(tokens):
        expanded = expand_token(token)
        if expanded != token:
            found[expanded] = None
    extra = list(found)
    return text + "\n" + " ".join(extra) if extra else text


def expansion_tokens(text: str) -> set[str]:
    """What ``expansions`` widens for ``text`` that is not ASCII: the class path's tokens,
    or (CJK in it) the regex path's."""
    got = tokenize._class_tokens(text)
    return tokenize._unicode_tokens(text) if got is None else got


def test_cjk_bounds_are_the_cjk_class() -> None:
    from bisect import bisect_right

    for cp in range(0x80, 0x110000):
        inside = bisect_right(tokenize._CJK_BOUNDS, cp) & 1 == 1
        assert inside == (_CJK_CHAR.match(chr(cp)) is not None), hex(cp)


def test_every_code_point_inside_and_beside_a_boundary(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """Each code point above ASCII inside a token holding a case boundary (``aB?x``), before
    one (``?aB``) and alone: same tokens (CJK text takes the regex path, checked too). Every
code point of the first two planes, every 61st above (CJK extensions, unassigned planes,
private use)."""
    points = [chr(cp) for cp in (*range(0x80, 0x20000), *range(0x20000, 0x110000, 61))]
    texts = []
    for start in range(0, len(points), 2048):
        chunk = points[start:start + 2048]
        texts += [" ".join(f"aB{c}x" for c in chunk), " ".join(f"{c}aB" for c in chunk),
                  "".join(chunk), " ".join(f"x{c}Yz{c}HTTPServer" for c in chunk)]
    for text in texts:  # the cost rule sends most of these to the regex path
        assert expansion_tokens(text) == reference_tokens(text), text[:40]
    monkeypatch.setattr(tokenize, "_MOST_WIDE", 1 << 30)  # the class path for every one
    class_path = 0
    for text in texts:
        assert expansion_tokens(text) == reference_tokens(text), text[:40]
        class_path += tokenize._class_tokens(text) is not None
    assert class_path > 150  # every text without CJK took the class path


ALPHABET = [*"aZ09_ -.\n\tbB", "é", "ü", "ß", "Ä", "ª", "²", "¼", "µ", "×", "÷", "\xa0",
            "\xad", "ÿ", "„", "“", "—", "─", "✨", "ǅ", "Ω", "ω", "Ⅻ", "٣", "ﬁ", "İ", "\u2028",
            "\u0301", "\ud800", "\U0001d400", "\U0001f600"]
CJK = ["修", "ア", "・", "゛", "한", "\u3130", "\U00020001", "ｱ", "ﾞ"]


def generated(count: int, seed: int, with_cjk: bool) -> list[str]:
    rng = random.Random(seed)
    alphabet = ALPHABET + CJK if with_cjk else ALPHABET
    out = []
    for _ in range(count):
        n = rng.randint(0, 60)
        out.append("".join(rng.choice(alphabet) if rng.random() < 0.4
                           else rng.choice("abcXYZ19") for _ in range(n)))
    return out


@pytest.mark.parametrize("most_wide", [None, 1 << 30])
def test_generated_text_same_tokens_and_index_text(monkeypatch: pytest.MonkeyPatch,
                                                  most_wide: int | None) -> None:
    """With the cost rule, and with every text without CJK sent to the class path."""
    if most_wide is not None:
        monkeypatch.setattr(tokenize, "_MOST_WIDE", most_wide)
    texts = generated(6000, 5, False) + generated(3000, 6, True)
    texts = [t for t in texts if not t.isascii()]
    assert len(texts) > 8000
    class_path = 0
    for text in texts:
        assert expansion_tokens(text) == reference_tokens(text), repr(text)
        assert index_text(text) == reference_index_text(text), repr(text)
        class_path += tokenize._class_tokens(text) is not None
    assert class_path > (5000 if most_wide else 500)


def test_checkout_docs_same_index_text() -> None:
    listed = subprocess.run(["git", "ls-files", "-z", "--", "docs", "README.md", "src"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode()
    texts = []
    for name in listed.split("\0"):
        path = ROOT / name
        if path.suffix in (".md", ".py") and path.is_file():
            text = path.read_text(encoding="utf-8")
            texts += [text, *text.split("\n\n")]
    wide = [t for t in texts if not t.isascii()]
    assert len(wide) > 100
    for text in wide:
        assert index_text(text) == reference_index_text(text)


def reference_expand(token: str) -> str:
    """Main's ``expand_token``: the CJK class searched in every token that is not ASCII."""
    out = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", token)
    if not out.isascii() and _CJK_CHAR.search(out):
        out = " ".join(_CJK_CHAR.sub(r" \1 ", out).split())
    return out


def test_holds_cjk_and_expand_token_skip_the_class_below_its_first_character() -> None:
    """``holds_cjk`` (and so ``expand_token``) answers text whose characters are all below
    U+1100 without the CJK class: same answers on every code point and generated tokens."""
    assert tokenize._CJK_FIRST == "\u1100" == chr(min(tokenize._CJK_BOUNDS))
    for cp in (*range(0x80, 0x20000), *range(0x20000, 0x110000, 61)):
        text = f"aB{chr(cp)}Cd"
        assert tokenize.holds_cjk(text) == (_CJK_CHAR.search(text) is not None), hex(cp)
    expand_token.cache_clear()
    for text in generated(4000, 9, True):
        for token in re.findall(r"[^\W_]+", text):
            assert expand_token(token) == reference_expand(token), token

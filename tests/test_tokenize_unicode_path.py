"""``retrieval.tokenize``'s path for text that is not ASCII (``_unicode_tokens``: case
boundaries and CJK runs in one regex pass, ``_HITS``; token ends by one match) finds the same
tokens, and ``index_text`` gives the same string, as the two-pass version it replaced (kept
here verbatim as the reference: ``_BOUNDARY`` and ``_CJK_CHAR`` hits widened by
``str.isalnum`` scans). Also ``expand_token``'s CJK spacing (``split``/``join`` for a ``\\1``
template) and ``holds_cjk``'s shortcut below U+1100. Checked on every code point, on generated
text mixing the characters where they could part (Latin-1 letters and signs, wide letters and
digits, punctuation, CJK letters and CJK punctuation, surrogates, astral characters), and on
this checkout's docs and sources."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

from gitquarry.retrieval import tokenize
from gitquarry.retrieval.tokenize import expand_token, index_text

ROOT = Path(__file__).resolve().parents[1]
_CJK = ("\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
        "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
        "\U00020000-\U0003134f")
_BOUNDARY = re.compile(r"[A-Z](?<=[a-z0-9][A-Z])|[A-Z](?=[A-Z][a-z])")
_CJK_CHAR = re.compile("([" + _CJK + "])")


def reference_tokens(text: str) -> set[str]:
    """Main's two-pass ``_unicode_tokens``, verbatim."""
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


def test_every_code_point_inside_and_beside_a_boundary() -> None:
    """Each code point above ASCII inside a token holding a case boundary (``aB?x``), before
    one (``?aB``), alone, and between CJK letters: same tokens. Every code point of the first
    two planes, every 61st above (CJK extensions, unassigned planes, private use)."""
    points = [chr(cp) for cp in (*range(0x80, 0x20000), *range(0x20000, 0x110000, 61))]
    for start in range(0, len(points), 2048):
        chunk = points[start:start + 2048]
        for text in (" ".join(f"aB{c}x" for c in chunk), " ".join(f"{c}aB" for c in chunk),
                     "".join(chunk), " ".join(f"x{c}Yz{c}HTTPServer" for c in chunk),
                     " ".join(f"修{c}修aB{c}ア" for c in chunk)):
            got = tokenize._unicode_tokens(text)
            assert got == reference_tokens(text), text[:40]


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


def test_generated_text_same_tokens_and_index_text() -> None:
    texts = generated(6000, 5, False) + generated(3000, 6, True)
    texts = [t for t in texts if not t.isascii()]
    assert len(texts) > 8000
    for text in texts:
        assert tokenize._unicode_tokens(text) == reference_tokens(text), repr(text)
        assert index_text(text) == reference_index_text(text), repr(text)


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
    assert tokenize._CJK_FIRST == "\u1100"
    for cp in (*range(0x80, 0x20000), *range(0x20000, 0x110000, 61)):
        text = f"aB{chr(cp)}Cd"
        assert tokenize.holds_cjk(text) == (_CJK_CHAR.search(text) is not None), hex(cp)
    expand_token.cache_clear()
    for text in generated(4000, 9, True):
        for token in re.findall(r"[^\W_]+", text):
            assert expand_token(token) == reference_expand(token), token

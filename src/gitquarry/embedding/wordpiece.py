"""A BERT WordPiece tokenizer for ASCII text, in Python, for a process's first few texts
(issue 21 §1, cold hybrid).

A cold ``gitquarry history --mode hybrid`` embeds one query. Importing the ``tokenizers``
extension and building its tokenizer from ``tokenizer.json`` cost ~90 ms CPU of that (the
Rust side builds the whole pipeline: added-token matcher, normaliser tables, vocabulary), more
than everything the query's few words need. :class:`QuickTokenizer` reads only the vocabulary
from ``tokenizer.json`` (one ``json`` parse), after checking that the file describes exactly
the pipeline implemented here — ``BertNormalizer`` (clean text, Chinese characters, lower
case, accents stripped with lower case), ``BertPreTokenizer``, ``WordPiece`` (``##``, ``[UNK]``,
100 characters per word), ``TemplateProcessing`` ``[CLS] $A [SEP]`` and the usual five special
tokens — and tokenizes **printable ASCII text only** (plus tab, newline, carriage return and
the other ASCII controls, which the normaliser removes). For ASCII every step is simple:
lower case is ``str.lower``, there are no accents or Chinese characters, punctuation is
``string.punctuation``. Any other text, a text holding a special token's literal
(``[SEP]``…), a file that differs in any of those settings, and every text after the first
``quick_texts`` of the process go to the real ``tokenizers.Tokenizer`` (loaded then).

Same ids, so the same vectors: ``tests/embedding/test_wordpiece_quick.py`` compares the ids
with ``tokenizers`` on random ASCII (every control and punctuation character, long words,
words with no piece in the vocabulary) and on real commit messages, at several truncation
lengths.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: what ``tokenizer.json`` must say for :class:`QuickTokenizer` to answer (else: ``tokenizers``)
EXPECTED_NORMALIZER = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True}
EXPECTED_PRE_TOKENIZER = {"type": "BertPreTokenizer"}
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
#: ASCII controls the normaliser removes (``\t``, ``\n``, ``\r`` become spaces instead)
_REMOVED = {c: None for c in (*range(0, 9), 11, 12, *range(14, 32), 127)}
_SPACES = {9: " ", 10: " ", 13: " "}


class _Ids:
    """What ``tokenizers.Encoding`` gives ``Runtime``: ``ids``."""

    __slots__ = ("ids",)

    def __init__(self, ids: list[int]) -> None:
        self.ids = ids


def read_plan(tokenizer_path: Path) -> dict[str, Any] | None:
    """The vocabulary and ids :class:`QuickTokenizer` needs from ``tokenizer_path``, or None
    when the file describes any other pipeline (or cannot be read as one)."""
    try:
        data = json.loads(tokenizer_path.read_bytes())
        model = data["model"]
        vocab = model["vocab"]
        post = data["post_processor"]
        specials = {t["content"]: t for t in data["added_tokens"]}
        plain = all(not (t["single_word"] or t["lstrip"] or t["rstrip"] or t["normalized"])
                    and t["special"] for t in specials.values())
        if (data["normalizer"] != EXPECTED_NORMALIZER
                or data["pre_tokenizer"] != EXPECTED_PRE_TOKENIZER
                or model["type"] != "WordPiece" or model["unk_token"] != "[UNK]"
                or model["continuing_subword_prefix"] != "##"
                or model["max_input_chars_per_word"] != 100
                or set(specials) != set(SPECIAL) or not plain
                or any(vocab.get(s) != specials[s]["id"] for s in SPECIAL)
                or post["type"] != "TemplateProcessing"
                or post["single"] != [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "[SEP]", "type_id": 0}}]
                or post["special_tokens"]["[CLS]"]["ids"] != [vocab["[CLS]"]]
                or post["special_tokens"]["[SEP]"]["ids"] != [vocab["[SEP]"]]
                or not isinstance(vocab, dict)
                or not all(type(k) is str and type(v) is int for k, v in vocab.items())):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return {"vocab": vocab, "cls": vocab["[CLS]"], "sep": vocab["[SEP]"], "unk": vocab["[UNK]"]}


def _words(text: str) -> list[str]:
    """The normalised, pre-tokenized words of ASCII ``text``."""
    text = text.translate(_REMOVED).translate(_SPACES).lower()
    out: list[str] = []
    for chunk in text.split(" "):
        if not chunk:
            continue
        start = 0
        for i, ch in enumerate(chunk):
            if ch in _PUNCTUATION:
                if i > start:
                    out.append(chunk[start:i])
                out.append(ch)
                start = i + 1
        if start < len(chunk):
            out.append(chunk[start:])
    return out


class QuickTokenizer:
    """``encode_batch(texts)`` → objects with ``ids`` (``[CLS] … [SEP]``, truncated at
    ``max_length`` as the real tokenizer's truncation does), for the first ``quick_texts``
    texts of the process when ASCII (module docstring); ``real()`` loads and returns the
    ``tokenizers.Tokenizer`` (configured by ``configure``) for everything else."""

    def __init__(self, plan: dict[str, Any], real: Any, *, max_length: int,
                 quick_texts: int) -> None:
        self._vocab: dict[str, int] = plan["vocab"]
        self._cls, self._sep, self._unk = plan["cls"], plan["sep"], plan["unk"]
        self._real_loader = real
        self._real: Any = None
        self.max_length = max_length
        self.quick_texts = quick_texts
        self.texts_seen = 0

    def real(self) -> Any:
        """The ``tokenizers.Tokenizer`` (loaded on first call)."""
        if self._real is None:
            self._real = self._real_loader()
        return self._real

    def __getattr__(self, name: str) -> Any:
        """Everything else (``encode``, ``decode``…) is the real tokenizer's."""
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.real(), name)

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def _pieces(self, word: str) -> list[int]:
        if len(word) > 100:
            return [self._unk]
        vocab = self._vocab
        out: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self._unk]
            out.append(found)
            start = end
        return out

    def ids(self, text: str) -> list[int] | None:
        """The ids of ``text``, or None when this class does not answer it (not ASCII, or a
        special token's literal in it)."""
        if not text.isascii() or ("[" in text and any(s in text for s in SPECIAL)):
            return None
        ids = [self._cls]
        for word in _words(text):
            ids.extend(self._pieces(word))
        keep = max(self.max_length - 2, 0)
        return [*ids[: keep + 1], self._sep] if len(ids) > keep + 1 else [*ids, self._sep]

    def encode_batch(self, texts: list[str]) -> list[Any]:
        self.texts_seen += len(texts)
        if self.texts_seen <= self.quick_texts:
            answered = [self.ids(t) for t in texts]
            if all(a is not None for a in answered):
                return [_Ids(a) for a in answered if a is not None]
        return list(self.real().encode_batch(texts))

"""Records written as plain classes instead of ``@dataclass(frozen=True)`` on the cold query's
import path (issue 21 §1): each behaves as the dataclass with the same fields — construction,
``repr``, equality (with its own class only), hash, ``__match_args__`` and frozen attributes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from gitquarry.history.index.refs_contain import _Ref
from gitquarry.store.migrations import _Migration


def _step(conn: object) -> None:
    return None


def _other(conn: object) -> None:
    return None


CASES: list[tuple[type, tuple[str, ...], list[tuple[Any, ...]]]] = [
    (_Migration, ("name", "fn"), [("a", _step), ("a", _other), ("b", _step), ("a", _step)]),
    (_Ref, ("name", "order"), [("main", (0, 0, 0, "main")), ("main", (0, 1, 0, "main")),
                               ("v1", (0, 2, 5, "v1")), ("main", (0, 0, 0, "main"))]),
]


@pytest.mark.parametrize(("plain", "names", "values"), CASES,
                         ids=[c[0].__name__ for c in CASES])
def test_behaves_as_the_frozen_dataclass(plain: type, names: tuple[str, ...],
                                         values: list[tuple[Any, ...]]) -> None:
    made = dataclasses.make_dataclass(plain.__name__, names, frozen=True)
    made.__qualname__ = plain.__qualname__
    ours = [plain(*v) for v in values]
    theirs = [made(*v) for v in values]
    assert plain.__match_args__ == made.__match_args__ == names
    for a, x in zip(ours, theirs, strict=True):
        assert repr(a) == repr(x)
        assert hash(a) == hash(x)
        assert [getattr(a, n) for n in names] == [getattr(x, n) for n in names]
        assert plain(*[getattr(a, n) for n in names]) == a
        for name in (*names, "other"):
            with pytest.raises(dataclasses.FrozenInstanceError) as ours_error:
                setattr(a, name, 1)
            with pytest.raises(dataclasses.FrozenInstanceError) as theirs_error:
                setattr(x, name, 1)
            assert str(ours_error.value) == str(theirs_error.value)
            with pytest.raises(dataclasses.FrozenInstanceError):
                delattr(a, name)
        assert (a == x) is False and (a != x) is True  # another class: never equal
        assert a.__eq__(object()) is NotImplemented
    for i in range(len(values)):
        for j in range(len(values)):
            assert (ours[i] == ours[j]) == (theirs[i] == theirs[j])
            assert (ours[i] != ours[j]) == (theirs[i] != theirs[j])
    with pytest.raises(TypeError):
        plain(*values[0][:1])

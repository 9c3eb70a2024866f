"""``gitquarry.dataclass_code``: dataclasses made with the kept code are the ones
``dataclasses`` alone makes, the file is read back by the next process, and a file that is not
the user's own, not this Python's or damaged is ignored (issue 21 §1, s4-cold).

Each case runs in a fresh interpreter (the hook is process-wide) with its own cache directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: defines dataclasses of many shapes and prints each generated method's code and
#: annotations, the hook's state, and what instances do
_PROBE = r'''
import json, os, sys, dataclasses, typing
from gitquarry import dataclass_code
on = dataclass_code.install() if sys.argv[1] == "on" else False
from dataclasses import dataclass, field, KW_ONLY

@dataclass(frozen=True)
class A:
    x: int
    y: "str" = "y"
    z: tuple[int, ...] = field(default_factory=tuple)

@dataclass(order=True, unsafe_hash=True)
class B:
    a: float
    _: KW_ONLY
    b: typing.Optional[int] = None

@dataclass(slots=True, kw_only=True, repr=False)
class C:
    p: tuple[int, ...] = ()
    q: dict = field(default_factory=dict, compare=False)

@dataclass(eq=False, init=False)
class D:
    n: int = 3

@dataclass(frozen=True)
class E(A):
    w: bytes = b""

def code(fn):
    c = fn.__code__
    return [c.co_code.hex(), repr(c.co_consts), c.co_names, c.co_varnames, c.co_flags,
            c.co_qualname, repr(fn.__annotations__), repr(fn.__defaults__),
            repr(fn.__kwdefaults__)]

out = {}
for cls in (A, B, C, D, E):
    for name, fn in sorted(vars(cls).items()):
        if callable(fn) and hasattr(fn, "__code__"):
            out[f"{cls.__name__}.{name}"] = code(fn)
a, e = A(1), E(1, "q", (2,), b"w")
try:
    a.x = 2
    frozen = False
except dataclasses.FrozenInstanceError:
    frozen = True
behaviour = [repr(a), repr(e), a == A(1), hash(a) == hash(A(1)), frozen,
             B(1.0, b=2) < B(2.0), hash(B(1.0)) == hash(B(1.0)), C(p=(1,)) == C(p=(1,), q={1: 2}),
             D() == D(), repr(C()).startswith("<"), dataclasses.asdict(e)]
state = dataclass_code._state
print(json.dumps({"on": on, "new": state.get("new"), "kept": state.get("read", 0),
                  "code": out, "behaviour": repr(behaviour)}))
'''


def _run(mode: str, cache: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITQUARRY_")}
    env["XDG_CACHE_HOME"] = str(cache)
    proc = subprocess.run([sys.executable, "-c", _PROBE, mode], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    return json.loads(proc.stdout)


def _file(cache: Path) -> Path:
    found = list((cache / "gitquarry").glob("dataclass-code-*.bin"))
    assert len(found) == 1
    return found[0]


def test_kept_code_makes_the_same_classes(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    plain = _run("off", cache)
    assert not (cache / "gitquarry").exists()
    first = _run("on", cache)  # compiles, writes the file at exit
    assert first["on"] is True and first["new"] and first["kept"] == 0
    assert _file(cache).stat().st_mode & 0o777 == 0o600
    assert (cache / "gitquarry").stat().st_mode & 0o777 == 0o700
    second = _run("on", cache)  # reads every function back
    assert second["new"] == 0 and second["kept"] >= first["new"]  # type: ignore[operator]
    for run in (first, second):
        assert run["code"] == plain["code"]
        assert run["behaviour"] == plain["behaviour"]
    assert "'A.__init__'" not in json.dumps(plain)  # sanity: keys are names, code compared
    assert any(key.endswith(".__init__") for key in plain["code"])  # type: ignore[union-attr]


@pytest.mark.parametrize("damage", ["mode", "version", "garbage", "truncated", "link"])
def test_a_file_not_to_trust_is_ignored_and_replaced(tmp_path: Path, damage: str) -> None:
    cache = tmp_path / "cache"
    plain = _run("off", cache)
    _run("on", cache)
    path = _file(cache)
    data = path.read_bytes()
    if damage == "mode":
        path.chmod(0o666)
    elif damage == "version":
        head, _, rest = data.partition(b"\n")
        _version, _, body = rest.partition(b"\n")
        path.write_bytes(head + b"\n3.0.0 (other)\n" + body)
    elif damage == "garbage":
        head = data[: data.index(b"\n", data.index(b"\n") + 1) + 1]
        path.write_bytes(head + b"\x00not marshal\xff" * 7)
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:
        real = path.with_name("elsewhere.bin")
        path.rename(real)
        path.symlink_to(real)
    run = _run("on", cache)
    assert run["kept"] == 0 and run["new"]  # nothing read: compiled as without the cache
    assert run["code"] == plain["code"] and run["behaviour"] == plain["behaviour"]
    again = _run("on", cache)  # the file was replaced at exit by a good one
    assert again["new"] == 0 and again["code"] == plain["code"]


def test_turned_off_by_the_environment(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITQUARRY_")}
    env.update(XDG_CACHE_HOME=str(tmp_path / "c"), GITQUARRY_DATACLASS_CACHE="0")
    proc = subprocess.run([sys.executable, "-c", _PROBE, "on"], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    assert json.loads(proc.stdout)["on"] is False
    assert not (tmp_path / "c").exists()

"""``process_kind.settle_heap`` (issue 21 target 3, s8-mcp): a long-lived process freezes
what it keeps after its warm-up, once more after ONNX Runtime loads, and never otherwise;
a short-lived one (the CLI) is left alone. Each case runs in its own interpreter (the
garbage collector's state is per process)."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import gc, json, sys
from gitquarry.embedding import process_kind
out = {"before": [gc.get_freeze_count(), gc.get_threshold()[0]]}
if sys.argv[1] == "long":
    process_kind.mark_long_lived()
out["first"] = process_kind.settle_heap()
out["again"] = process_kind.settle_heap()
sys.modules.setdefault("onnxruntime", type(sys)("onnxruntime"))  # as if the model loaded
out["loaded"] = process_kind.settle_heap()
out["after_loaded"] = process_kind.settle_heap()
out["after"] = [gc.get_freeze_count(), gc.get_threshold()[0]]
cycle = []
cycle.append(cycle)  # garbage cycles made after the freeze are still collected
del cycle
out["collected"] = gc.collect()
print(json.dumps(out))
"""


def _run(kind: str) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", SCRIPT, kind], capture_output=True,
                          text=True, check=True)
    return json.loads(proc.stdout)


def test_a_long_lived_process_freezes_after_warm_up_and_after_the_model_loads() -> None:
    out = _run("long")
    assert out["before"][0] == 0
    assert out["first"] is True and out["again"] is False
    assert out["loaded"] is True and out["after_loaded"] is False
    frozen, threshold = out["after"]  # type: ignore[misc]
    assert frozen > 1000 and threshold == 10_000
    assert out["collected"] >= 1


def test_a_short_lived_process_is_left_alone() -> None:
    out = _run("short")
    assert out["first"] is False and out["loaded"] is False
    assert out["after"] == out["before"]

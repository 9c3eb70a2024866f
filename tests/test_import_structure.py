"""Issue 23 §2/§3: the daemon's parts form no import ring and no import runs up the layers
(``tools/import_structure.py``, over the real source with grimp)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

grimp = pytest.importorskip("grimp")

TOOL = Path(__file__).resolve().parents[1] / "tools" / "import_structure.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_structure", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return _tool()


@pytest.fixture(scope="module")
def graph() -> object:
    return grimp.build_graph("gitquarry", cache_dir=None)  # TYPE_CHECKING imports count


def test_no_ring_touches_the_daemon_or_the_web_page(tool: ModuleType, graph: object) -> None:
    touching = [ring for ring in tool.rings(graph)
                if any(m.startswith(("gitquarry.service", "gitquarry.web")) for m in ring)]
    assert touching == []


def test_the_daemons_parts_never_import_the_daemon_and_it_never_imports_the_web_page(
    graph: object,
) -> None:
    imports = graph.find_modules_directly_imported_by  # type: ignore[attr-defined]
    for part in ("jobs", "job_types", "docs_jobs", "runner", "coordinator", "catalog"):
        assert "gitquarry.service.daemon" not in imports(f"gitquarry.service.{part}"), part
    for module in graph.find_children("gitquarry.service"):  # type: ignore[attr-defined]
        assert not any(m == "gitquarry.web" or m.startswith("gitquarry.web.")
                       for m in imports(module)), module


def test_no_ring_anywhere_and_every_arrow_points_down(
    tool: ModuleType, graph: object
) -> None:
    assert tool.rings(graph) == []
    assert [(a, b) for a, b, _ in tool.upward_arrows(graph)] == []
    assert set() == tool.KNOWN
    # the lease lives with storage; nothing is left under service
    assert "gitquarry.service.lease" not in graph.modules  # type: ignore[attr-defined]
    assert "gitquarry.store.lease" in graph.modules  # type: ignore[attr-defined]


def test_the_checker_finds_a_ring_and_an_arrow_up_when_there_is_one(
    tool: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checker itself can fail: a package with a ring and an upward import."""
    pkg = tmp_path / "ringpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("from ringpkg import high\n")
    (pkg / "high.py").write_text("from ringpkg import low\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    built = grimp.build_graph("ringpkg", cache_dir=None)
    assert tool.rings(built) == [["ringpkg.high", "ringpkg.low"]]
    monkeypatch.setattr(tool, "LAYERS", ["ringpkg.high", "ringpkg.low"])
    assert [(a, b) for a, b, _ in tool.upward_arrows(built)] == [("ringpkg.low",
                                                                  "ringpkg.high")]

"""The import structure of ``gitquarry``: import rings (cycles) and arrows that run up the layers.

Run from the repository root (the package must be importable, e.g. the dev virtual
environment, which has ``grimp`` from the ``dev`` extra)::

    .venv/bin/python tools/import_structure.py            # the whole picture
    .venv/bin/python tools/import_structure.py --check    # exit 1 on a ring or an upward arrow
    .venv/bin/python tools/import_structure.py --runtime  # leave out ``if TYPE_CHECKING:``
    .venv/bin/python tools/import_structure.py --only service,web   # rings touching these

A *ring* is a strongly connected component of the module import graph with more than one
module (every module in it reaches every other through imports). Imports made only for type
checking count by default (they still tie the modules' designs together); ``--runtime``
leaves them out. An *upward arrow* is an import from a module of one layer into a module of a
higher layer of ``LAYERS`` (top first; packages on one line are siblings and may import one
another only if that creates no ring). ``--check`` fails on either, except those listed in
``KNOWN`` (another part of issue 23 removes them), which are printed but not counted.

The graph is built by ``grimp`` (the library behind import-linter) from the source, without
importing gitquarry.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

import grimp

PACKAGE = "gitquarry"

#: top first; one entry per layer, siblings separated by spaces. A module belongs to the
#: layer of its longest matching prefix.
LAYERS: list[str] = [
    "gitquarry.__main__ gitquarry.cli",
    "gitquarry.mcp gitquarry.web",
    "gitquarry.service",
    "gitquarry.indexing gitquarry.corpora_status gitquarry.query.docs gitquarry.query.graph",
    # the corpora; the commit history in three floors: answers over search over index
    "gitquarry.repo_docs gitquarry.graph gitquarry.history gitquarry.history.answers",
    "gitquarry.history.search",
    "gitquarry.history.index gitquarry.history.models",
    "gitquarry.query",
    "gitquarry.workspace",
    "gitquarry.embedding",
    "gitquarry.store gitquarry.gitio",
    "gitquarry.config",
    "gitquarry.retrieval",
    "gitquarry.parsing gitquarry.globs gitquarry.bounded gitquarry.percent gitquarry.token_budget "
    "gitquarry._lazy",
    "gitquarry gitquarry.errors",
]

#: upward arrows and rings owned by other parts of the redesign (printed, not failed on):
#: (importer prefix, imported prefix)
KNOWN: set[tuple[str, str]] = set()  # none left (issue 23 §3 removed the last one)


def _layer_of(module: str, levels: dict[str, int]) -> int | None:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in levels:
            return levels[prefix]
    return None


def rings(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work: list[tuple[str, Iterable[str]]] = []
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work.append((root, iter(sorted(graph.find_modules_directly_imported_by(root)))))
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(
                        graph.find_modules_directly_imported_by(child)))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def upward_arrows(graph: grimp.ImportGraph) -> list[tuple[str, str, int]]:
    """(importer, imported, line) for each import from a lower layer into a higher one."""
    levels = {name: n for n, line in enumerate(LAYERS) for name in line.split()}
    out: list[tuple[str, str, int]] = []
    for importer in sorted(graph.modules):
        low = _layer_of(importer, levels)
        if low is None:
            continue
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            high = _layer_of(imported, levels)
            if high is not None and high < low:
                details = graph.get_import_details(importer=importer, imported=imported)
                line = min((d["line_number"] for d in details), default=0)
                out.append((importer, imported, line))
    return out


def _known(importer: str, imported: str) -> bool:
    return any((importer == a or importer.startswith(a + ".")) and
               (imported == b or imported.startswith(b + ".")) for a, b in KNOWN)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 on a ring or an arrow up")
    parser.add_argument("--runtime", action="store_true",
                        help="leave out imports made only under `if TYPE_CHECKING:`")
    parser.add_argument("--only", default="",
                        help="comma-separated subpackages (e.g. service,web): rings that "
                             "touch them, arrows from them")
    args = parser.parse_args(argv)
    graph = grimp.build_graph(PACKAGE, exclude_type_checking_imports=args.runtime,
                              cache_dir=None)
    only = [f"{PACKAGE}.{p.strip()}" for p in args.only.split(",") if p.strip()]

    def wanted(module: str) -> bool:
        return not only or any(module == p or module.startswith(p + ".") for p in only)

    found = [r for r in rings(graph) if any(wanted(m) for m in r)]
    arrows = [a for a in upward_arrows(graph) if wanted(a[0])]
    kind = "runtime imports" if args.runtime else "all imports, TYPE_CHECKING included"
    print(f"{len(graph.modules)} modules ({kind})")
    print(f"\nimport rings: {len(found)}")
    for ring in found:
        print(f"  {len(ring)} modules: " + ", ".join(m.removeprefix(PACKAGE + ".")
                                                      for m in ring))
    print(f"\narrows up the layers: {len(arrows)}")
    failing = 0
    for importer, imported, line in arrows:
        known = _known(importer, imported)
        failing += not known
        print(f"  {importer}:{line} -> {imported}" + ("  (known: another part)" if known else ""))
    failing += sum(1 for r in found if not all(
        _known(a, b) for a in r for b in r if a != b and b in
        graph.find_modules_directly_imported_by(a)))
    if args.check and failing:
        print(f"\n{failing} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

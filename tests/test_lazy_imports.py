"""What the cold query path no longer imports or compiles at import is still what it stood
for (issue 21 §1, s4-cold): wcmatch's flag values, the default ref globs' patterns as the
installed wcmatch compiles them, and every module pattern made lazy (``_lazy.lazy_re``) as
``re.compile`` makes it; a fresh interpreter answering a lexical ``history --json`` with the
default configuration imports neither wcmatch nor tomllib."""

from __future__ import annotations

import importlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.testkit import GitRepo
from wcmatch import glob as wcglob

from gitquarry._lazy import LazyPattern, lazy_re
from gitquarry.config import DEFAULT_REF_GLOBS
from gitquarry.gitio import refs
from gitquarry.globs import GITIGNORE_FLAGS

#: modules whose module-level patterns are compiled on first use
LAZY_MODULES = ("gitquarry.retrieval.tokenize", "gitquarry.retrieval.fusion",
                "gitquarry.token_budget", "gitquarry.history.search.hunks",
                "gitquarry.history.index.document")


def test_flag_values_are_wcmatchs() -> None:
    flags = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE
    assert flags == GITIGNORE_FLAGS
    assert flags == refs._GLOB_FLAGS


def test_known_ref_glob_patterns_are_what_wcmatch_compiles() -> None:
    assert tuple(DEFAULT_REF_GLOBS) in refs._KNOWN
    for globs, (include, exclude) in refs._KNOWN.items():
        compiled = wcglob.compile(list(globs), flags=refs._GLOB_FLAGS)._matcher
        assert compiled._real is False
        assert [(p.pattern, p.flags) for p in compiled._include] == [
            (p, re.compile(p).flags) for p in include]
        assert [(p.pattern, p.flags) for p in compiled._exclude or ()] == [
            (p, re.compile(p).flags) for p in exclude]


def test_default_ref_matcher_answers_as_wcmatch() -> None:
    rng = random.Random(21)
    parts = ["refs", "heads", "remotes", "tags", "origin", "main", ".", "..", ".hidden", "a/b",
             "notes", "HEAD", "x", "", "heads2", "pull", "ü"]
    names = {"refs/heads/main", "refs/heads", "refs/heads/", "refs/tags/v1.0",
             "refs/remotes/origin/HEAD", "refs/notes/commits", "refs/stash",
             "refs/heads/../x", "refs/heads/./x", "refs/heads//x", "refs//heads/x",
             "refs/headsx/y", "refs/pull/1/head"}
    for _ in range(3000):
        names.add("/".join(rng.choice(parts) for _ in range(rng.randint(1, 5))))
    matcher = refs.RefMatcher(list(DEFAULT_REF_GLOBS))
    assert matcher._matcher is None  # no wcmatch on this path
    for name in sorted(names):
        assert matcher(name) == bool(
            wcglob.globmatch(name, list(DEFAULT_REF_GLOBS), flags=refs._GLOB_FLAGS)), name


@pytest.mark.parametrize("module", LAZY_MODULES)
def test_every_lazy_pattern_is_res_own(module: str) -> None:
    mod = importlib.import_module(module)
    found = 0
    for value in vars(mod).values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, LazyPattern):
                pattern, flags = item.__dict__["_source"]
                expected = re.compile(pattern, flags)
                assert (item.pattern, item.flags, item.groups, item.groupindex) == (
                    expected.pattern, expected.flags, expected.groups, expected.groupindex)
                found += 1
    assert found


def test_lazy_pattern_behaves_as_the_compiled_one() -> None:
    lazy = lazy_re(r"(?P<w>[a-z]+)(\d*)", re.I)
    plain = re.compile(r"(?P<w>[a-z]+)(\d*)", re.I)
    text = "Ab12 cd ef3 ÄX 9"
    assert [m.groups() for m in lazy.finditer(text)] == [m.groups() for m in plain.finditer(text)]
    assert lazy.sub("-", text) == plain.sub("-", text)
    assert lazy.split(text) == plain.split(text)
    assert lazy.fullmatch("ab1") is not None and lazy.match("1") is None
    with pytest.raises(AttributeError):
        lazy.__deepcopy__  # noqa: B018 (dunder look-ups are not forwarded)
    bad = lazy_re("(unclosed")
    with pytest.raises(re.error):
        bad.search("x")


def test_cold_lexical_query_imports_no_wcmatch_nor_tomllib(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    repo = GitRepo(ws / "app")
    for n in range(4):
        repo.commit(f"fix cache step {n}", {f"src/m{n}.py": f"v = {n}\n"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITQUARRY_")}
    env.update(GITQUARRY_CONFIG="/dev/null", GITQUARRY_FAST="local",
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    subprocess.run([sys.executable, "-m", "gitquarry", "index", "--no-embed", "-q", str(ws)],
                   env=env, check=True, capture_output=True, timeout=300)
    probe = ("import json, sys\nfrom gitquarry.cli.entry import main\n"
             "sys.argv = ['gitquarry', 'history', 'cache', '--json', '--mode', 'lexical']\n"
             "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
             "names = ('wcmatch', 'bracex', 'tomllib', 'typer')\n"
             "sys.stderr.write('LOADED ' + json.dumps([n for n in names if n in sys.modules])"
             " + ' CODE ' + str(code) + '\\n')\n")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ws, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.stderr.rsplit("LOADED ", 1)[-1].strip() == "[] CODE 0", proc.stderr[-2000:]
    assert json.loads(proc.stdout)["results"]

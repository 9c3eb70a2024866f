"""The built-in docs policy matches without wcmatch (issue 21 §5: its import is ~20 ms CPU of a
cold docs search), and answers exactly as wcmatch does: the flag value and each preset
pattern's regex are what the installed wcmatch has, every path a Git tree could hold (and
many it could not) is selected or not as wcmatch selects it, and a cold full-text
``repo-docs search --json`` under the built-in policy imports no wcmatch."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable

from wcmatch import glob as wcglob

from gitquarry.repo_docs import policy
from gitquarry.repo_docs.policy import BUILTIN_POLICY, PRESETS, DocsPolicy

from .conftest import Repo


def test_flag_value_is_wcmatchs() -> None:
    assert policy._FLAGS == wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.CASE | wcglob.NOUNIQUE


def test_known_regexes_are_what_wcmatch_compiles() -> None:
    assert set(PRESETS["conventional-docs-v1"]) <= set(policy._KNOWN_REGEXES)
    for pattern, regex in policy._KNOWN_REGEXES.items():
        assert wcglob.translate(pattern, flags=policy._FLAGS) == ([regex], [])
        compiled = wcglob.compile(pattern, flags=policy._FLAGS)._matcher
        assert compiled._real is False and not compiled._exclude
        assert [(p.pattern, p.flags) for p in compiled._include] == [
            (regex, re.compile(regex).flags)]


def test_builtin_policy_selects_as_wcmatch() -> None:
    rng = random.Random(21)
    parts = ["docs", "README", "README.md", "readme.md", "AGENTS.md", "agents.md", "Docs",
             ".", "..", ".hidden", "a", "b.md", "docs2", "README-x", "READMEs", "ü", "x y",
             "\n", "", "AGENTS.mdx", "index.rst", "docs.md"]
    paths = {"docs", "docs/", "docs/a.md", "docs//a.md", "docs/./a.md", "docs/../a.md",
             "docs/.hidden/a.md", "README", "README.md", "README/x", "READMEx/y", "AGENTS.md",
             "AGENTS.md/", "sub/README.md", "sub/docs/a.md", "./docs/a.md", "/docs/a.md",
             "docs\nx", "README\n", "docs/a\n.md"}
    for _ in range(5000):
        paths.add("/".join(rng.choice(parts) for _ in range(rng.randint(1, 5))))
    preset = PRESETS["conventional-docs-v1"]
    reference = [wcglob.compile(p, flags=policy._FLAGS) for p in preset]
    fresh = DocsPolicy()
    selected = 0
    for path in sorted(paths):
        want = any(c.match(path) for c in reference)
        assert (BUILTIN_POLICY.selects(path) is None) == want, path
        assert (fresh.selects(path) is None) == want, path
        selected += want
    assert 100 < selected < len(paths) - 100  # both answers exercised


def test_other_patterns_still_go_to_wcmatch() -> None:
    custom = DocsPolicy(include=("guides/**/*.md",), exclude=("docs/internal/**",))
    assert custom.selects("guides/a/b.md") is None
    assert custom.selects("guides/a/b.txt") == "not_selected"
    assert custom.selects("docs/internal/x.md") == "policy_excluded"
    assert custom.selects("docs/x.md") is None


def test_cold_docs_search_imports_no_wcmatch(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo({"docs/a.md": "# Deploy\n\nThe proxy forwards.\n",
                      "README.md": "# App\n\nDeploy notes.\n"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITQUARRY_")}
    env.update(GITQUARRY_CONFIG="/dev/null", GITQUARRY_FAST="local")
    subprocess.run([sys.executable, "-m", "gitquarry", "repo-docs", "register", "--repo", "o/r",
                    "--repository-path", str(repo.path)], env=env, check=True,
                   capture_output=True, timeout=120)
    probe = ("import json, sys\nfrom gitquarry.cli.entry import main\n"
             "sys.argv = ['gitquarry', 'repo-docs', 'search', 'deploy proxy', '--mode', "
             "'fulltext', '--json']\n"
             "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
             "names = ('wcmatch', 'bracex', 'typer')\n"
             "sys.stderr.write('LOADED ' + json.dumps([n for n in names if n in sys.modules])"
             " + ' CODE ' + str(code) + '\\n')\n")
    proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.stderr.rsplit("LOADED ", 1)[-1].strip() == "[] CODE 0", proc.stderr[-2000:]
    hits = json.loads(proc.stdout)["hits"]
    assert {h["path"] for h in hits} == {"docs/a.md", "README.md"}

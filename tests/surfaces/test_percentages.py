"""Percentages never round up to 100 % while something is missing ("3,335 of 3,336 (100%)"
in ``status``, "100.0 % embedded" on the web page next to a partial-embeddings warning)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from gitquarry.embedding.fake import fake_provider_registered
from gitquarry.percent import floor_percent
from gitquarry.web.app import _env

from .conftest import CLI, fast_import, user_config

N = 201  # one missing vector of 201 is 99.5 %: "100%" when rounded to the nearest per cent


def test_floor_percent() -> None:
    assert floor_percent(3335, 3336) == "99"
    assert floor_percent(3335, 3336, digits=1) == "99.9"
    assert floor_percent(0.9997, digits=1) == "99.9"
    assert floor_percent(0.99999999999) == "99"
    assert floor_percent(5, 5) == floor_percent(1.0) == "100"
    assert floor_percent(1.0, digits=1) == "100.0"
    assert floor_percent(29, 100) == "29" and floor_percent(0.29) == "29"
    assert floor_percent(0, 0) == floor_percent(0, 7) == "0"
    assert floor_percent(7, 5) == "140"  # more than complete is not capped (not a bar)


def test_status_and_warning_and_web_never_say_100_while_incomplete(tmp_path: Path,
                                                                   cli: CLI) -> None:
    repo = tmp_path / "ws" / "repo"
    fast_import(repo, [(f"change {n}", {"f.txt": f"line {n}\n"}) for n in range(N)])
    user_config('[embedding]\nprovider = "fake"\n')
    with fake_provider_registered():
        code, _, err = cli("index", str(tmp_path / "ws"), "-q")
        assert code == 0, err
        db = tmp_path / "ws" / ".gitquarry" / "index.db"
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM commit_vectors").fetchone() == (N,)
            conn.execute("DELETE FROM commit_vectors WHERE commit_id = "
                         "(SELECT min(commit_id) FROM commit_vectors)")
        conn.close()
        code, out, err = cli("status", "--project", str(tmp_path / "ws"))
        assert code == 0, err
        assert f"Embedded:  {N - 1:,} of {N:,} (99%)" in out, out
        code, out, err = cli("history", "change", "--project", str(tmp_path / "ws"), "--json")
        assert code == 0, err
    data = json.loads(out)
    (partial,) = [w for w in data["warning_details"] if w["code"] == "partial_embeddings"]
    assert f"{N - 1:,} of {N:,} commits have vectors (99%)" in partial["message"], partial
    page = _env().from_string("{{ f|percent(1) }} % embedded").render(f=data["embedded_fraction"])
    assert page == "99.5 % embedded"
    assert _env().from_string("{{ f|percent(1) }}").render(f=(N - 1 / 1000) / N) == "99.9"

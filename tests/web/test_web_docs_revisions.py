"""Issue 19 §3 through the web backend: a bad ``rev`` on the Documentation tab is the typed
``revision_not_found`` and never breaks the next search of the same repository (the shared
``cat-file --batch`` reader only receives full object ids and is restarted if it dies)."""

from __future__ import annotations

import json
from urllib.parse import urlencode, urlparse

from .conftest import WebEnv
from .http_client import request, sign_in

BAD = ["HEAD:../../", "HEAD@{upstream}", "HEAD@{100000}", ":../x", "-n", "HEAD^{tree}"]


def test_bad_rev_on_the_docs_tab_never_breaks_the_next_search(web_env: WebEnv) -> None:
    cookie = sign_in(web_env.base, web_env.login_url())
    docs = urlparse(web_env.docs_url("ready"))
    api = f"/api/repos/docs?{docs.query}"

    def search(rev: str = "") -> dict[str, object]:
        query = urlencode({"q": "nginx proxy", "mode": "fulltext", "rev": rev})
        reply = request(web_env.base, "GET", f"{api}&{query}", headers={"Cookie": cookie})
        assert reply.status == 200, reply
        return dict(json.loads(reply.body))

    good = search()
    assert good["search_error"] is None and good["search"], good
    hits = good["search"]["hits"]  # type: ignore[index]
    assert hits
    for rev in BAD:
        bad = search(rev)
        assert bad["search"] is None, rev
        assert bad["search_error"]["code"] == "revision_not_found", (rev, bad)  # type: ignore[index]
        again = search()
        assert again["search_error"] is None, (rev, again)
        assert again["search"]["hits"] == hits, rev  # type: ignore[index]
    # the HTML page shows the typed error too
    page = request(web_env.base, "GET", f"/repos/docs?{docs.query}&" + urlencode(
        {"q": "nginx proxy", "rev": "HEAD:../../"}), headers={"Cookie": cookie})
    assert page.status == 200 and "revision_not_found" in page.body

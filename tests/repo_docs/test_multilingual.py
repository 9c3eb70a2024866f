"""English, Russian and Chinese docs: the right file is first for a query in each language,
in fulltext and hybrid."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.registry import Selector

from .conftest import Repo

FILES = {
    "docs/en/backup.md": "# Backups\n\nNightly snapshots are copied to cold storage and "
                         "verified every Sunday.\n",
    "docs/en/deploy.md": "# Deployment\n\nThe release pipeline builds containers and pushes "
                         "them to the registry.\n",
    "docs/ru/backup.md": "# Резервные копии\n\nЕжедневные снимки базы данных копируются в "
                         "холодное хранилище.\n",
    "docs/ru/deploy.md": "# Развёртывание\n\nКонвейер выпуска собирает контейнеры и "
                         "отправляет их в реестр.\n",
    "docs/zh/backup.md": "# 备份\n\n每晚的数据库快照会复制到冷存储，并在每周日验证。\n",
    "docs/zh/deploy.md": "# 部署\n\n发布流水线构建容器并将其推送到镜像仓库。\n",
}

QUERIES = [
    ("cold storage snapshots", "docs/en/backup.md"),
    ("release pipeline containers", "docs/en/deploy.md"),
    ("холодное хранилище", "docs/ru/backup.md"),
    ("конвейер выпуска", "docs/ru/deploy.md"),
    ("数据库快照", "docs/zh/backup.md"),
    ("镜像仓库", "docs/zh/deploy.md"),
    ("冷存储", "docs/zh/backup.md"),
]


@pytest.mark.parametrize("mode", ["fulltext", "hybrid"])
def test_each_language_top1(service: RepoDocsService, make_repo: Callable[..., Repo],
                            mode: str) -> None:
    repo = make_repo(dict(FILES))
    service.register("o/multi", repo.path)
    sel = Selector("o/multi")
    if mode == "hybrid":
        service.index(sel)
    for query, expected in QUERIES:
        r = service.search(sel, query, mode=mode)
        assert r["effective_mode"] == mode
        assert r["hits"] and r["hits"][0]["citation"]["path"] == expected, (query, r["hits"])

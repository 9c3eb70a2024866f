"""``retrieval.tokenize.index_text`` of two gitquarry source trees over fastapi's docs, one
language at a time, in one process (the two modules alternate per round, ``expand_token``'s
cache cleared before each pass). The outputs are compared text by text. Prints JSON.

    python benchmarks/docs_tokenize_ab.py --old OLD_SRC --new NEW_SRC --fastapi WORK_TREE \
        [--lang de --lang ru ...] [--files 150] [--rounds 8] [--out benchmarks/results/NAME.json]

``WORK_TREE``: a fastapi checkout (``docs/<lang>/docs/**/*.md``); each file's first
``--files`` Markdown files, cut at blank lines (paragraph-sized texts, as chunks are).
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import statistics
import time
from pathlib import Path
from types import ModuleType

LANGS = ["de", "en", "es", "fr", "pt", "tr", "ru", "uk", "zh", "ja", "ko"]


def load(src: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(src, "gitquarry", "retrieval", "tokenize.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--fastapi", required=True)
    parser.add_argument("--lang", action="append")
    parser.add_argument("--files", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    sides = {"old": load(args.old, "tokenize_old"), "new": load(args.new, "tokenize_new")}
    out: dict[str, object] = {"load_1min_start": round(os.getloadavg()[0], 2)}
    per_lang = {}
    for lang in args.lang or LANGS:
        files = sorted(glob.glob(f"{args.fastapi}/docs/{lang}/docs/**/*.md", recursive=True))
        texts = [p for f in files[: args.files]
                 for p in Path(f).read_text(encoding="utf-8").split("\n\n") if p]
        same = [sides["old"].index_text(t) for t in texts] == [
            sides["new"].index_text(t) for t in texts]
        cpu: dict[str, list[float]] = {"old": [], "new": []}
        for r in range(args.rounds):
            for side in ("old", "new") if r % 2 == 0 else ("new", "old"):
                module = sides[side]
                module.expand_token.cache_clear()
                started = time.process_time()
                for text in texts:
                    module.index_text(text)
                cpu[side].append(time.process_time() - started)
        old, new = statistics.median(cpu["old"]), statistics.median(cpu["new"])
        per_lang[lang] = {"texts": len(texts), "chars": sum(map(len, texts)),
                          "non_ascii_texts": sum(not t.isascii() for t in texts),
                          "same_index_text": same, "old_cpu_ms_p50": round(old * 1000, 2),
                          "new_cpu_ms_p50": round(new * 1000, 2),
                          "ratio_new_over_old": round(new / old, 3)}
        print(lang, per_lang[lang], flush=True)
    out["languages"] = per_lang
    out["load_1min_end"] = round(os.getloadavg()[0], 2)
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()

"""How far ``gitquarry.token_budget.estimate_tokens`` lies from real tokenizers on real payloads.

Payloads: JSON results (metadata, message, files, first 200 diff lines) of 60 random commits
from each repository given, plus 40 CJK/Cyrillic/emoji payloads. Tokenizers: ``cl100k_base``
and ``o200k_base`` (ranks shipped in the npm package js-tiktoken) and the public Claude
tokenizer (npm @anthropic-ai/tokenizer, claude.json), loaded into the PyPI package
``tiktoken``; nothing is downloaded at run time:

    npm pack js-tiktoken@1.0.21 @anthropic-ai/tokenizer@0.0.4 && tar xzf each into DIR
    pip install tiktoken
    python benchmarks/bench_token_estimate.py DIR GIT_DIR [GIT_DIR ...]

Prints JSON: per tokenizer, min / p5 / median / max of estimate / real.
"""

from __future__ import annotations

import base64
import json
import random
import subprocess
import sys
from pathlib import Path

from gitquarry.token_budget import estimate_tokens


def _encoding(name: str, data: dict, tiktoken: object) -> object:
    ranks: dict[bytes, int] = {}
    for line in data["bpe_ranks"].split("\n"):
        if line:
            parts = line.split(" ")
            for i, tok in enumerate(parts[2:]):
                ranks[base64.b64decode(tok)] = int(parts[1]) + i
    return tiktoken.Encoding(name=name, pat_str=data["pat_str"],  # type: ignore[attr-defined]
                             mergeable_ranks=ranks, special_tokens=data["special_tokens"])


def encodings(folder: Path) -> dict[str, object]:
    import tiktoken

    out = {}
    for name in ("cl100k_base", "o200k_base"):
        text = next(folder.glob(f"js-tiktoken-*/package/dist/ranks/{name}.js")).read_text()
        out[name] = _encoding(name, json.loads(text[text.index("{"):text.rindex("}") + 1]),
                              tiktoken)
    claude = json.loads(next(folder.glob("anthropic-ai-tokenizer-*/package/claude.json"))
                        .read_text())
    out["claude"] = _encoding("claude", claude, tiktoken)
    return out


def payloads(git_dirs: list[str]) -> list[str]:
    rng = random.Random(7)
    out = []
    for gd in git_dirs:
        hashes = subprocess.run(["git", "--git-dir", gd, "rev-list", "--all",
                                 "--max-count=20000"], capture_output=True, text=True,
                                check=True).stdout.split()
        for h in rng.sample(hashes, min(60, len(hashes))):
            meta = subprocess.run(["git", "--git-dir", gd, "show", "-s",
                                   "--format=%an <%ae>%x00%ct%x00%s%x00%b", h],
                                  capture_output=True).stdout.decode("utf-8", "replace")
            diff = subprocess.run(["git", "--git-dir", gd, "show", "--format=", "-M", h],
                                  capture_output=True).stdout.decode("utf-8", "replace")
            parts = [*meta.split("\x00"), "", "", "", ""]
            out.append(json.dumps({"hash": h, "author": parts[0], "timestamp": parts[1],
                                   "title": parts[2], "message": parts[3],
                                   "delta_truncated": "\n".join(diff.split("\n")[:200])},
                                  ensure_ascii=False))
    extra = ["修复数据库连接超时问题，增加重试次数", "データベース接続のタイムアウトを修正",
             "Исправлена ошибка при разборе конфигурации", "🎉 release 🚀 emoji ✨",
             "Ünïcödé naïve café résumé Straße"]
    for _ in range(40):
        out.append(json.dumps({"title": rng.choice(extra),
                               "message": " ".join(rng.choices(extra, k=20)),
                               "hash": f"{rng.getrandbits(160):040x}"}, ensure_ascii=False))
    return out


def main() -> None:
    encs = encodings(Path(sys.argv[1]))
    texts = payloads(sys.argv[2:])
    report: dict[str, object] = {"payloads": len(texts)}
    for name, enc in encs.items():
        ratios = sorted(estimate_tokens(t) / len(enc.encode(t, disallowed_special=()))  # type: ignore[attr-defined]
                        for t in texts)
        report[name] = {"min": round(ratios[0], 3), "p5": round(ratios[len(ratios) // 20], 3),
                        "median": round(ratios[len(ratios) // 2], 3),
                        "max": round(ratios[-1], 3)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

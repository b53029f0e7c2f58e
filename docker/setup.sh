#!/bin/sh
# One-shot setup of the shared volume, run by the compose `setup` service before the validator starts:
# the catalog index from the official documents file, its knowledge corpus, and the race's suite.
# Idempotent: what exists is kept (a catalog or suite is never rebuilt in place; remove it to rebuild).
#   documents: put documents.jsonl.gz in $ARENA_DATA_DIR (./data by default), mounted read-only at /data.
set -eu
volume=${ARENA_VOLUME:-/var/lib/arena}
data=${ARENA_DATA:-/data}
seed=${SUITE_SEED:?set SUITE_SEED (the partition seed: keep it secret, and the same on every rebuild)}
problems=${SUITE_PROBLEMS:-3000}
# The generator's seed comes from the secret too (60 bits of its sha256): with a public seed anyone could
# regenerate the race bank, gold answers included, from the public catalog and code.
generator_seed=$(printf '%d' "0x$(printf '%s' "generate:$seed" | sha256sum | cut -c1-15)")

if [ ! -f "$volume/catalog/catalog.json" ]; then
  if [ ! -f "$data/documents.jsonl.gz" ]; then
    echo "setup: no $data/documents.jsonl.gz: put the ShoppingBench documents file in \$ARENA_DATA_DIR (docs/operator-guide.md)" >&2
    exit 2
  fi
  arena catalog build --from "$data/documents.jsonl.gz" --out "$volume/catalog"
fi
if [ ! -f "$volume/suite/sealed/manifest.json" ]; then
  rm -rf "$volume/catalog/knowledge" "$volume/problems.jsonl"
  arena problems generate --catalog "$volume/catalog" --n "$problems" --seed "$generator_seed" \
    --knowledge-out "$volume/catalog/knowledge" --out "$volume/problems.jsonl"
  arena suite build --problems "$volume/problems.jsonl" --out "$volume/suite" --seed "$seed"
fi
echo "setup: catalog $volume/catalog, suite $volume/suite"

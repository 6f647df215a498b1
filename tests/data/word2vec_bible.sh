#!/bin/sh
# Word2Vec on real text: the King James Bible that Debian's bible-kjv (and bible-kjv-text) ship,
# printed whole by its `bible` program, trained briefly on the CPU. The loss must fall, and the
# trained vectors must not have collapsed into one direction (each probe word's nearest
# neighbours below cosine 0.9); the run prints the nearest words of five frequent words.
# Usage: word2vec_bible.sh DLBENCH WORK_DIR
# Exit 77 (skipped) where the package is not installed (`make test` installs it).
set -eu
dlbench=$1 work=$2
python=/usr/bin/python3
if ! command -v bible > /dev/null 2>&1; then
  echo "skipped: bible-kjv is not installed (make test installs it)"
  exit 77
fi
mkdir -p "$work"
text="$work/kjv.txt"
[ -s "$text" ] || bible "gen1:1-rev22:21" > "$text"
# One thread, as the NCF real-data test: CI's two cores run other tests beside it.
OMP_NUM_THREADS=1 HOME="$work" XDG_DATA_HOME="$work" "$dlbench" run word2vec --device cpu \
  --data "$text" --batch 4096 --steps 1500 --warmup 1 --lr 0.01 --no-store --no-telemetry \
  --json "$work/word2vec.json"
$python - "$work/word2vec.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
first, last = doc["loss"]["first"], doc["loss"]["last"]
nearest = [n["nearest"][0]["cosine"] for n in doc["neighbours"]]
print(f"loss {first:.3f} -> {last:.3f}; nearest cosines {', '.join(f'{c:.2f}' for c in nearest)}")
if not last < first - 0.15:
    sys.exit("Word2Vec's loss did not fall on the King James Bible")
if len(nearest) != 5 or max(nearest) >= 0.9:
    sys.exit("Word2Vec's vectors collapsed: every word's nearest neighbour is almost parallel")
PY

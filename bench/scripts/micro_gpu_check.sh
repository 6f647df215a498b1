#!/usr/bin/env bash
# The GPU check of issue 19 item 2 (dlbench micro gemm, bandwidth, transfer, p2p), run by hand
# on a GPU machine after `make build`: the gpu-labelled tests of bench/micro (every precision's
# products and every copy checked at small sizes), then the full tables, each stored in a
# database of its own so the user's is not touched. Quote its output in the note.
#
# Targets on an H100: bf16 (and fp16) above 600 TFLOP/s at 8192^3 or 16384x8192x8192, and
# within 85 % of the best cuBLASLt figure for the shape (dlbench times up to 32 of cuBLASLt's
# candidates and keeps the fastest, so its figure is that best); bandwidth best above 85 % of
# the theoretical figure of `dlbench info`. Every table must end with 0 wrong.
#
# Usage: bench/scripts/micro_gpu_check.sh [BUILD_DIR]   (default: build)
set -uo pipefail
build=${1:-build}
dlbench=$build/dlbench
[ -x "$dlbench" ] || { echo "micro_gpu_check: no dlbench at '$dlbench' (make build first)" >&2; exit 2; }
db=$(mktemp -d)/micro.db
status=0
step() { echo; echo "### $*"; "$@" || status=1; }

step ctest --test-dir "$build" -L gpu -R 'Micro' --output-on-failure
step "$dlbench" info
step "$dlbench" --db "$db" micro gemm --device cuda
step "$dlbench" --db "$db" micro gemm --device cuda --precision bf16,fp16 --shapes 8192,16384x8192x8192 --iters 50
step "$dlbench" --db "$db" micro bandwidth --device cuda
step "$dlbench" --db "$db" micro transfer --max-bytes 1G
step "$dlbench" --db "$db" micro p2p
step "$dlbench" --db "$db" runs list
exit $status

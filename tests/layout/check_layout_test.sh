#!/usr/bin/env bash
# Tests scripts/check-layout.py on fake trees: a clean one passes, and each kind of violation
# (an upward include, the store linking the engine, a file over 500 lines, an engine string
# naming a CLI flag, a stale allow-list entry) fails with exit 1, naming the file and line.
# Usage: check_layout_test.sh REPO_ROOT
set -uo pipefail
repo=$1
check="python3 $repo/scripts/check-layout.py"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$repo/tests/support/expect.sh"

# refute NAME TEXT -- COMMAND...: the output must not contain TEXT (what the check must skip).
refute() {
  local name=$1 text=$2
  shift 3
  if "$@" 2>&1 | grep -qF -- "$text"; then
    echo "FAIL $name: output names '$text'"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

# A clean tree that holds what the check must not flag: a generated header, a relative include
# of its own folder, flags in comments, decrements, digit separators, a raw string, a flag in a
# bench/ string, a 500-line file, libraries named only in comments and generator expressions.
clean=$tmp/clean
mkdir -p "$clean"/{engine/core,engine/nn,engine/backend/cpu,bench/store,bench/report,cli,tests,peers}
cat >"$clean/engine/core/build_info.cc" <<'EOF'
#include "dlbench_git_hash.h"
#include "engine/core/error.h"
#include "error.h"
// "use --batch": a comment is no hint
/* nor "--device cpu" here */
const char* kNotAFlag = "x--y, --, -5";
int n = 1'000'000; char quote = '"'; char other = '\'';
const char* kRaw = R"x(no flags here, "quoted" )" text)x";
const char* kHint = "use a smaller batch";
void f(int i) { i--; i --; }
EOF
echo '#pragma once' >"$clean/engine/core/error.h"
echo '#include "engine/core/error.h"' >"$clean/engine/backend/cpu/cpu_ops.cc"
printf '#include "engine/backend/cpu/cpu_ops.h"\n#include "engine/core/error.h"\n' \
  >"$clean/engine/nn/layers.cc"
echo '#include "engine/core/error.h"' >"$clean/bench/store/store.cc"
printf '#include "bench/store/store.h"\nconst char* kFlag = "--batch is fine in bench/";\n' \
  >"$clean/bench/report/report.cc"
printf '#include "bench/report/report.h"\n#include "engine/nn/layers.h"\n' >"$clean/cli/app.cc"
for i in $(seq 500); do echo "// line $i"; done >"$clean/tests/five_hundred_test.cc"
cat >"$clean/CMakeLists.txt" <<'EOF'
add_library(dlbench_core core.cc)
add_library(dlbench_backend backend.cc)
target_link_libraries(dlbench_backend PUBLIC dlbench_core)
add_library(dlbench_nn nn.cc)
target_link_libraries(dlbench_nn PUBLIC dlbench_backend)
add_library(dlbench_result result.cc)
target_link_libraries(dlbench_result PUBLIC dlbench_core)
EOF
cat >"$clean/bench/store/CMakeLists.txt" <<'EOF'
add_library(dlbench_store store.cc)
target_link_libraries(dlbench_store
  PUBLIC dlbench_core dlbench_result  # dlbench_nn would link the engine
  $<$<BOOL:${WITH_ENGINE}>:dlbench_models>
  PRIVATE dlbench_sqlite)
EOF
cat >"$clean/bench/report/CMakeLists.txt" <<'EOF'
add_library(dlbench_report report.cc)
target_link_libraries(dlbench_report PUBLIC dlbench_store)
EOF
: >"$tmp/empty.txt"

expect "a clean tree: passes" 0 "keep to the floors" -- \
  $check --root "$clean" --allow-list "$tmp/empty.txt"
refute "libraries in comments and generator expressions are skipped" "dlbench_models" -- \
  $check --root "$clean" --allow-list "$tmp/empty.txt"

# with_violation NAME: a fresh copy of the clean tree at $tmp/NAME, to add one violation to.
with_violation() { rm -rf "${tmp:?}/$1"; cp -r "$clean" "$tmp/$1"; echo "$tmp/$1"; }

tree=$(with_violation upward)
printf '#include "engine/core/error.h"\n#include "cli/app.h"\n' >"$tree/engine/core/tensor.h"
expect "an engine file includes from cli/: fails at its line" 1 \
  "engine/core/tensor.h:2: includes cli/app.h: engine/core may include only from engine/core" -- \
  $check --root "$tree" --allow-list "$tmp/empty.txt"

tree=$(with_violation sideways)
echo '#include "engine/nn/layers.h"' >"$tree/engine/backend/cpu/cpu_conv.cc"
expect "the backend includes from nn (above it): fails" 1 \
  "engine/backend/cpu/cpu_conv.cc:1: includes engine/nn/layers.h" -- \
  $check --root "$tree" --allow-list "$tmp/empty.txt"

tree=$(with_violation unknown_floor)
mkdir -p "$tree/engine/serving" && echo '#pragma once' >"$tree/engine/serving/x.h"
expect "a folder with no row in the table: fails" 1 \
  "engine/serving/x.h:1: engine/serving is in no floor of the layout table" -- \
  $check --root "$tree" --allow-list "$tmp/empty.txt"

tree=$(with_violation too_long)
for i in $(seq 501); do echo "# line $i"; done >"$tree/peers/long_worker.py"
expect "a 501-line file: fails" 1 "peers/long_worker.py:501: 501 lines, over 500" -- \
  $check --root "$tree" --allow-list "$tmp/empty.txt"

tree=$(with_violation hint)
printf '#include "engine/core/error.h"\nvoid f() {\n  throw Error("out of memory", "use --batch 8");\n}\n' \
  >"$tree/engine/core/memory.cc"
expect "an engine string names a CLI flag: fails at its line" 1 \
  'engine/core/memory.cc:3: the engine names the CLI flag --batch in "use --batch 8"' -- \
  $check --root "$tree" --allow-list "$tmp/empty.txt"

tree=$(with_violation store_links_nn)
cat >"$tree/bench/store/CMakeLists.txt" <<'EOF'
add_library(dlbench_store store.cc)
target_link_libraries(dlbench_store PUBLIC dlbench_core
                      PRIVATE dlbench_nn)
EOF
expect "the store links dlbench_nn (multi-line, PRIVATE): fails at the line" 1 \
  "bench/store/CMakeLists.txt:3: dlbench_store links the engine's dlbench_nn (dlbench_store -> dlbench_nn)" -- \
  $check --root "$tree" --allow-list "$tmp/empty.txt"
expect "the store's closure has the backend below nn: fails" 1 \
  "dlbench_store -> dlbench_nn -> dlbench_backend" -- \
  $check --root "$tree" --allow-list "$tmp/empty.txt"
expect "the report links the engine through the store: fails" 1 \
  "bench/report/CMakeLists.txt:2: dlbench_report links the engine's dlbench_nn (dlbench_report -> dlbench_store -> dlbench_nn)" -- \
  $check --root "$tree" --allow-list "$tmp/empty.txt"

tree=$(with_violation result_links_nn)
sed -i 's/^target_link_libraries(dlbench_result PUBLIC dlbench_core)$/target_link_libraries(dlbench_result PUBLIC dlbench_core dlbench_nn)/' \
  "$tree/CMakeLists.txt"
expect "the results link the engine: fails, and so does their reader" 1 \
  "CMakeLists.txt:7: dlbench_result links the engine's dlbench_nn (dlbench_result -> dlbench_nn)" -- \
  $check --root "$tree" --allow-list "$tmp/empty.txt"
expect "the store reads the results, so it links the engine too" 1 \
  "dlbench_store -> dlbench_result -> dlbench_nn" -- \
  $check --root "$tree" --allow-list "$tmp/empty.txt"

# The allow-list: a listed violation passes, a reason is required, an unused entry is an error.
cat >"$tmp/allow-hint.txt" <<'EOF'
# check | file | subject; then the step that removes it, and why
hint | engine/core/memory.cc | use --batch 8
    step 9 P2: engine hints
    the Error will carry Setting::kBatch
EOF
expect "an allow-listed violation: passes" 0 "1 known violations allow-listed" -- \
  $check --root "$tmp/hint" --allow-list "$tmp/allow-hint.txt"
expect "a stale allow-list entry: fails naming the entry's line" 1 \
  "$tmp/allow-hint.txt:2: stale allow-list entry (hint | engine/core/memory.cc | use --batch 8) matches nothing: remove it" -- \
  $check --root "$clean" --allow-list "$tmp/allow-hint.txt"
head -3 "$tmp/allow-hint.txt" >"$tmp/no-reason.txt"
expect "an allow-list entry without a reason: usage error" 2 "then one saying why" -- \
  $check --root "$tmp/hint" --allow-list "$tmp/no-reason.txt"
sed '3s/.*/    someday/' "$tmp/allow-hint.txt" >"$tmp/no-step.txt"
expect "an allow-list entry that names no step: usage error" 2 "naming the step that removes it" -- \
  $check --root "$tmp/hint" --allow-list "$tmp/no-step.txt"
# Issue 16's steps emptied the built-in allow-list: a tree that keeps to the floors passes with
# it, and a new violation has no entry to hide behind.
expect "the built-in allow-list is empty: a clean tree passes" 0 "keep to the floors" -- \
  $check --root "$clean"
expect "not a source tree: usage error" 2 "is not a dlbench source tree" -- \
  $check --root "$tmp/clean/tests"

echo "$failures failed"
[ "$failures" -eq 0 ]

#!/usr/bin/env bash
# Tests scripts/check-doc-examples.py on fake docs: examples that dlbench takes pass, and each
# kind of stale example (a made-up flag, a made-up subcommand, a value a flag does not allow,
# a synopsis naming a gone flag, a suite that does not exist) fails with exit 1 at its
# FILE:LINE.
# Usage: check_doc_examples_test.sh REPO_ROOT DLBENCH
set -uo pipefail
repo=$1
dlbench=$2
check="python3 $repo/scripts/check-doc-examples.py --dlbench $dlbench --root"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$repo/tests/support/expect.sh"

# A fake repository: README.md and docs/, the suites the dry runs look up.
fake() { rm -rf "${tmp:?}/$1"; mkdir -p "$tmp/$1/docs"; cp -r "$repo/suites" "$tmp/$1/"; echo "$tmp/$1"; }

tree=$(fake clean)
cat >"$tree/README.md" <<'MD'
# fine
```sh
dlbench run resnet50 --device cpu --input 32 --batch 32 --steps 5 --warmup 2
dlbench runs export --format csv --wide > runs.csv   # a comment, a redirection
mpirun -np 2 dlbench micro allreduce --device cpu --dist mpi -b 1K -e 32M
dlbench monitor --interval 0.5 -- python3 -c "print(1)" --not-a-dlbench-flag
dlbench suite quick-cpu --check
```
MD
cat >"$tree/docs/page.md" <<'MD'
```
$ dlbench compare 1 2
dlbench output that mentions --anything is not a command
```

```
dlbench report [--last [N] | --last-suite]
               [--format html|md] [--out FILE]
```
MD
expect "examples dlbench takes: pass" 0 "7 dlbench examples checked" -- $check "$tree"

tree=$(fake flag)
cp "$tmp/clean/README.md" "$tree/README.md"
printf '# page\n\n```sh\ndlbench run resnet50 --device cpu --turbo\n```\n' >"$tree/docs/page.md"
expect "a made-up flag: fails at its line" 1 "docs/page.md:4: 'dlbench run' has no flag --turbo" -- \
  $check "$tree"

tree=$(fake subcommand)
printf '```\n$ dlbench benchmark resnet50\n```\n' >"$tree/README.md"
expect "a made-up subcommand: fails" 1 \
  "README.md:2: 'dlbench' takes no subcommand or argument 'benchmark'" -- $check "$tree"

tree=$(fake choice)
printf '```\nmpirun -np 2 dlbench run vgg16 --dist nccl\n```\n' >"$tree/README.md"
expect "a value the flag does not allow: fails" 1 "README.md:2: --dist takes none, mpi, not 'nccl'" -- \
  $check "$tree"

tree=$(fake synopsis)
printf '```\ndlbench report [--last [N]]\n               [--html-only]\n```\n' >"$tree/README.md"
expect "a synopsis naming a gone flag, on its second line: fails" 1 \
  "README.md:2: 'dlbench report' has no flag --html-only" -- $check "$tree"

tree=$(fake suite)
printf '```\ndlbench suite quick-gpu\n```\n' >"$tree/README.md"
expect "a suite that does not exist: its dry run fails" 1 \
  "README.md:2: 'dlbench suite quick-gpu --check' exited 2" -- $check "$tree"

expect "no binary: usage error" 2 "build dlbench first" -- \
  python3 "$repo/scripts/check-doc-examples.py" --dlbench "$tmp/none" --root "$tree"

echo "$failures failed"
[ "$failures" -eq 0 ]

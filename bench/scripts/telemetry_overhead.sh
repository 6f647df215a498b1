#!/usr/bin/env bash
# What the telemetry sampler costs: runs `dlbench monitor -- sleep SECONDS` at 0.5 s and 0.1 s
# and reports, as % of one core over the run,
#   sampler   - CPU time of the sampler's own reads (thread CPU clocks, from the JSON summary);
#   dlbench   - CPU time of the whole dlbench process (getrusage; includes the few ms of
#               `sleep`, and start-up: loading the CUDA, cuDNN and oneDNN libraries);
#   - start-up - the same less what `dlbench --version` costs, i.e. dlbench while it samples.
# Targets (issue 3): under 1 % of one core at 0.5 s, under 3 % at 0.1 s.
#
# Usage: bench/scripts/telemetry_overhead.sh [DLBENCH_BINARY] [SECONDS] [extra monitor flags...]
#   e.g. bench/scripts/telemetry_overhead.sh build/dlbench 20 --gpus none
set -euo pipefail
dlbench=${1:-build/dlbench}
seconds=${2:-20}
shift $(( $# > 2 ? 2 : $# ))
[ -x "$dlbench" ] || { echo "telemetry_overhead: no dlbench at '$dlbench' (build it first)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "telemetry_overhead: needs python3" >&2; exit 3; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs a command; prints "user+system-CPU-seconds wall-seconds" of it and its children.
cpu_of() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
wall = time.monotonic() - start
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(u.ru_utime + u.ru_stime, wall)
sys.exit(code)
PY
}

read -r startup _ < <(cpu_of "$dlbench" --version)
printf "dlbench monitor -- sleep %s on %s (%s CPUs); dlbench start-up costs %.3f s CPU\n" \
  "$seconds" "$(uname -n)" "$(nproc)" "$startup"
printf "%-9s %8s %13s %8s %13s %8s %8s\n" interval samples "sampler CPU" "% core" "dlbench CPU" \
  "% core" "-startup"
for interval in 0.5 0.1; do
  read -r process wall < <(cpu_of "$dlbench" monitor --interval "$interval" \
    --json "$work/s.json" "$@" -- sleep "$seconds" 2>"$work/table") ||
    { cat "$work/table" >&2; exit 4; }
  python3 - "$work/s.json" "$interval" "$process" "$wall" "$startup" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
interval, process, wall, startup = sys.argv[2], *map(float, sys.argv[3:6])
sampler, duration = s["sampler_cpu_s"], s["duration_s"]
print(f"{interval + ' s':<9} {s['samples']:>8} {sampler:>11.3f} s {100 * sampler / duration:>8.3f} "
      f"{process:>11.3f} s {100 * process / wall:>8.3f} {100 * (process - startup) / wall:>8.3f}")
PY
done
grep "GPU telemetry" "$work/table" | sed 's/^ */note: /' || true

#!/usr/bin/env bash
# Issue 24's measurements on an 8-GPU machine, in one call: where ResNet-50's and VGG16's
# scaling efficiency goes at 8 GPUs. Run by hand after `make build`; quote its output in the
# issue's note. Each part is one command, so a part that fails does not stop the others.
#
# 1. `scale` with telemetry and with --no-telemetry, ResNet-50 fp16 at 256 a GPU and VGG16 fp16
#    at 128: the efficiency, the mean step beside the median, and the slow steps with the replica
#    that started each late and whether a telemetry sample fell in them (the table's lines).
# 2. The same ResNet-50 run as 8 MPI processes (`mpirun -np N dlbench run --dist mpi`): a
#    process per GPU instead of a thread, for host jitter and the launcher's CPU placement.
# 3. `micro allreduce` over every GPU: NCCL's bus bandwidth by message size.
# The runs go into a database of their own, so the user's is not touched; `--json` files of
# the sweeps (every replica's step series) land in OUT_DIR.
#
# Usage: bench/scripts/scaling_probe.sh [BUILD_DIR] [OUT_DIR] [GPUS]
#   defaults: build, a new temporary directory, and 1,2,4,8
set -uo pipefail
build=${1:-build}
out=${2:-$(mktemp -d)}
gpus=${3:-1,2,4,8}
dlbench=$build/dlbench
[ -x "$dlbench" ] || { echo "scaling_probe: no dlbench at '$dlbench' (make build first)" >&2; exit 2; }
mkdir -p "$out" || exit 2
db=$out/scaling.db
most=${gpus##*,}
status=0
step() { echo; echo "### $*"; "$@" || status=1; }

common=(--warmup 10 --steps 40 --precision fp16)
step "$dlbench" --db "$db" scale resnet50 --gpus "$gpus" --batch 256 "${common[@]}" --json "$out/resnet50.json"
step "$dlbench" --db "$db" scale resnet50 --gpus "$gpus" --batch 256 "${common[@]}" --no-telemetry --json "$out/resnet50-no-telemetry.json"
step "$dlbench" --db "$db" scale vgg16 --gpus "$gpus" --batch 128 "${common[@]}" --json "$out/vgg16.json"
step "$dlbench" --db "$db" scale vgg16 --gpus "$gpus" --batch 128 "${common[@]}" --no-telemetry --json "$out/vgg16-no-telemetry.json"
# Open MPI refuses root (the device machines, containers) unless told it is on purpose.
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if command -v mpirun > /dev/null; then
  step mpirun -np "$most" "$dlbench" --db "$db" run resnet50 --dist mpi --batch 256 "${common[@]}" --json "$out/resnet50-mpi.json"
else
  echo; echo "### mpirun is not installed: the MPI run is left out"; status=1
fi
step "$dlbench" --db "$db" micro allreduce --gpus all
echo; echo "### the sweeps' JSON (every replica's steps): $out"
exit $status

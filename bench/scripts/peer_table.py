#!/usr/bin/env python3
"""dlbench against the PyTorch reference script on the same GPU, in one call.

Runs `dlbench run` for every ImageNet row of the PyTorch reference table (docs/measurements/resnet-vgg-early.md),
then the reference script (a stand-alone PyTorch script kept outside this repository, which
prints one JSON line per configuration), and prints one table: model,
mode, precision, batch, dlbench images/s, PyTorch images/s, ratio, and each side's peak memory
after the warm-up (dlbench: `memory/allocated_peak_gib`, what its own allocations held at once;
PyTorch: `torch.cuda.max_memory_allocated`). A benchmark, not a test:

  bench/scripts/peer_table.py --dlbench build/dlbench --peer PEER_SCRIPT

With --baseline OTHER_DLBENCH, every row also runs that binary (say, a build of main before a
change), right after the new one on the same GPU, and the table adds its images/s and the ratio
new/base: "within 2 % of before, measured in one call" is one command.

With --compiled, the headline rows (COMPILED_ROWS) also run compiled PyTorch through dlbench's own
worker (`dlbench run --framework pytorch-compile`, torch.compile before the warm-up, its
compile time not in the throughput), and the table adds its images/s and the ratio
dlbench/compiled: about a minute of compiling per row.

Rows the peer did not print (a missing package, a crash) show "-" and the script exits 1.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from dlbench_run import run_json

# (model, mode, precision, batch) as dlbench names them, and the peer's key for the row:
# (model, mode, torch dtype, batch). The peer's first two rows run with TF32 off, the rest with
# it on, so its float32 rows at batch 256 and VGG16's are TF32. Its last row ("resnet50 at
# 32x32": torchvision's ImageNet ResNet-50 fed 32x32 images) has no dlbench counterpart:
# dlbench's --input 32 is the CIFAR variant (3x3 stride-1 stem, no max-pool), about 16 times
# the work per image, so that row is not compared.
ROWS = [
    ("resnet50", "train", "fp32", 128, ("resnet50", "train", "float32", 128)),
    ("resnet50", "train", "tf32", 256, ("resnet50", "train", "float32", 256)),
    ("resnet50", "train", "fp16", 256, ("resnet50", "train", "float16", 256)),
    ("resnet50", "train", "bf16", 256, ("resnet50", "train", "bfloat16", 256)),
    ("resnet50", "infer", "fp32", 64, ("resnet50", "infer", "float32", 64)),
    ("resnet50", "infer", "tf32", 256, ("resnet50", "infer", "float32", 256)),
    ("resnet50", "infer", "fp16", 256, ("resnet50", "infer", "float16", 256)),
    ("resnet50", "infer", "bf16", 256, ("resnet50", "infer", "bfloat16", 256)),
    ("vgg16", "train", "fp16", 128, ("vgg16", "train", "float16", 128)),
    ("vgg16", "train", "tf32", 128, ("vgg16", "train", "float32", 128)),
]

# The rows #17 holds dlbench to compiled PyTorch on: training and inference of ResNet-50 in the
# half precisions, and VGG16 training.
COMPILED_ROWS = {("resnet50", "train", "fp16", 256), ("resnet50", "train", "bf16", 256),
                 ("resnet50", "infer", "fp16", 256), ("resnet50", "infer", "bf16", 256),
                 ("vgg16", "train", "fp16", 128)}

PRECISION_NAMES = {"fp32": "fp32 strict", "tf32": "tf32", "fp16": "fp16", "bf16": "bf16"}


def run_dlbench(args, binary, model, mode, precision, batch, workdir, framework="native"):
    out = os.path.join(workdir, f"{model}_{mode}_{precision}_{batch}_{framework}.json")
    cmd = [binary, "run", model, "--mode", mode, "--precision", precision, "--batch",
           str(batch), "--device", args.device, "--warmup",
           str(args.warmup), "--steps", str(args.steps), "--no-store", "--json", out]
    if framework != "native":
        cmd += ["--framework", framework]
    started = time.monotonic()
    result = run_json(cmd, out)
    took = time.monotonic() - started
    if result is None:
        progress(f"{model} {mode} {precision} {batch} {framework}: no result ({took:.0f} s)")
        return None
    peak = next((m["value"] for m in result["metrics"] if m["tag"] == "memory/allocated_peak_gib"),
                None)
    speed = result["throughput_samples_per_s"]
    progress(f"{model} {mode} {precision} {batch} {framework}: {speed:.0f} img/s ({took:.0f} s)")
    return speed, peak


def progress(line):
    """Each row as it finishes, on stderr: a long table cut short still shows what it measured."""
    print(f"peer_table: {line}", file=sys.stderr, flush=True)


def run_peer(args):
    progress("the reference script")
    started = time.monotonic()
    done = subprocess.run([sys.executable, args.peer], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        print(f"the peer exited {done.returncode}: {done.stderr.strip()[-2000:]}", file=sys.stderr)
    rows = {}
    for line in done.stdout.splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        rows[(r["model"], r["mode"], r["precision"], r["batch"])] = r
    progress(f"the reference script: {len(rows)} rows ({time.monotonic() - started:.0f} s)")
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dlbench", default=os.path.join(here, "..", "..", "build", "dlbench"))
    parser.add_argument("--peer", default=os.path.join(here, "..", "..", "..", "shared",
                                                       "reference", "torch_peer.py"))
    parser.add_argument("--baseline", help="a second dlbench binary to compare with, row by row")
    parser.add_argument("--compiled", action="store_true",
                        help="also run compiled PyTorch (torch.compile) on the headline rows")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--warmup", type=int, default=10, help="as the peer: 10")
    parser.add_argument("--steps", type=int, default=30, help="as the peer: 30")
    args = parser.parse_args()
    paths = [(args.dlbench, "dlbench binary"), (args.peer, "peer script")]
    if args.baseline:
        paths.append((args.baseline, "baseline dlbench binary"))
    for path, what in paths:
        if not os.path.exists(path):
            sys.exit(f"peer_table: no {what} at {path}")

    ours, base, compiled = {}, {}, {}
    with tempfile.TemporaryDirectory() as workdir:
        for model, mode, precision, batch, _ in ROWS:
            row = (model, mode, precision, batch)
            ours[row] = run_dlbench(args, args.dlbench, *row, workdir)
            if args.baseline:
                base[row] = run_dlbench(args, args.baseline, *row, workdir)
            if args.compiled and row in COMPILED_ROWS:
                compiled[row] = run_dlbench(args, args.dlbench, *row, workdir, "pytorch-compile")
    peer = run_peer(args)

    extra_head = " baseline img/s | new/base |" if args.baseline else ""
    extra_head += " compiled img/s | vs compiled |" if args.compiled else ""
    extra_columns = 2 * (bool(args.baseline) + bool(args.compiled))
    print("| model | mode | precision | batch | dlbench img/s | PyTorch img/s | ratio "
          "| dlbench GiB | PyTorch GiB |" + extra_head)
    print("|---|---|---|---|---|---|---|---|---|" + "---|" * extra_columns)
    complete = True
    for model, mode, precision, batch, key in ROWS:
        mine, theirs = ours[(model, mode, precision, batch)], peer.get(key)
        extra = ""
        if args.baseline:
            before = base[(model, mode, precision, batch)]
            extra = (f" {before[0]:.0f} |" if before else " - |") + (
                f" {mine[0] / before[0]:.3f} |" if mine and before else " - |")
            complete = complete and before is not None
        if args.compiled:
            row = (model, mode, precision, batch)
            fast = compiled.get(row)
            extra += (f" {fast[0]:.0f} |" if fast else " - |") + (
                f" {mine[0] / fast[0]:.2f} |" if mine and fast else " - |")
            complete = complete and (row not in COMPILED_ROWS or fast is not None)
        speed = f"{mine[0]:.0f}" if mine else "-"
        memory = f"{mine[1]:.1f}" if mine and mine[1] is not None else "-"
        peer_speed = f"{theirs['img_per_s']:.0f}" if theirs else "-"
        peer_memory = f"{theirs['peak_mem_gib']:.1f}" if theirs else "-"
        ratio = f"{mine[0] / theirs['img_per_s']:.2f}" if mine and theirs else "-"
        complete = complete and mine is not None and theirs is not None
        print(f"| {model} | {mode} | {PRECISION_NAMES[precision]} | {batch} | {speed} "
              f"| {peer_speed} | {ratio} | {memory} | {peer_memory} |{extra}")
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())

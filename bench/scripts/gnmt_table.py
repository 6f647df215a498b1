#!/usr/bin/env python3
"""GNMT, dlbench against its PyTorch peer on the same GPU, in one call (issue #22's table).

Runs `dlbench run gnmt` natively and then with `--framework pytorch` (peers/pytorch_gnmt.py),
back to back, for every row: training in fp32, fp16 and bf16 at batch 128; inference, greedy and
beam 5, at batch 128 and batch 1 in each --infer-precisions; then one native fp16 training run
with --profile-layers for the by-kind rollup of its step. It prints one Markdown table: the rate
(pairs/s training, sentences/s inference), the ratio native/PyTorch, tokens/s (training: source
and target tokens served, padding left out; inference: tokens translated into, [EOS] included),
each side's allocator peak (native `memory/allocated_peak_gib`, the peer's
`torch.cuda.max_memory_allocated`) and the step time's p50/p95 (a batch-1 row's latency). A
benchmark, not a test:

  bench/scripts/gnmt_table.py --dlbench build/dlbench

The peer's training tokens/s counts its own batch (one drawn from its own generator, of the
same length distribution, trained on every step), so its tokens differ from dlbench's by the
draw: pairs/s is the comparison there. Rows that failed show "-" and the script exits 1.
--frameworks native skips the peer (a dry run of the script on a CPU: --device cpu
--train-batch 2 --infer-batches 2 --input 16 --steps 1 --warmup 0 --train-precisions fp32
--infer-precisions fp32 --profile-precision fp32).
"""
import argparse
import os
import sys
import tempfile

from dlbench_run import run_json


def metric(result, tag):
    return next((m["value"] for m in result.get("metrics", []) if m["tag"] == tag), None)


def run(args, framework, mode, precision, batch, beam, workdir, profile=0):
    name = f"{framework}_{mode}_{precision}_b{batch}_beam{beam}_p{profile}.json"
    out = os.path.join(workdir, name)
    steps = args.steps if batch > 1 else max(args.steps, args.latency_steps)
    cmd = [args.dlbench, "run", "gnmt", "--mode", mode, "--precision", precision, "--batch",
           str(batch), "--device", args.device, "--warmup", str(args.warmup), "--steps",
           str(steps), "--no-store", "--json", out]
    if args.input:
        cmd += ["--input", str(args.input)]
    if beam > 1:
        cmd += ["--beam", str(beam)]
    if profile:
        cmd += ["--profile-layers", str(profile)]
    if framework != "native":
        cmd += ["--framework", framework]
    return run_json(cmd, out)


def number(value, digits=0):
    return "-" if value is None else f"{value:,.{digits}f}"


def latency(result):
    if result is None:
        return "-"
    step = result.get("step_time_ms", {})
    return f"{step.get('median', float('nan')):.1f} / {step.get('p95', float('nan')):.1f}"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dlbench", default=os.path.join(here, "..", "..", "build", "dlbench"))
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--frameworks", default="native,pytorch",
                        help="native,pytorch (default), or native alone")
    parser.add_argument("--train-precisions", default="fp32,fp16,bf16")
    parser.add_argument("--infer-precisions", default="fp16,fp32")
    parser.add_argument("--train-batch", type=int, default=128, help="the published setup's")
    parser.add_argument("--infer-batches", default="128,1")
    parser.add_argument("--beams", default="1,5", help="1 is greedy decoding")
    parser.add_argument("--input", type=int, default=0, help="sentence length (0: gnmt's 50)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--latency-steps", type=int, default=30,
                        help="measured steps of batch-1 rows, for their percentiles")
    parser.add_argument("--profile-steps", type=int, default=3,
                        help="steps of the training profile (0: none)")
    parser.add_argument("--profile-precision", default="fp16")
    args = parser.parse_args()
    if not os.path.exists(args.dlbench):
        sys.exit(f"gnmt_table: no dlbench binary at {args.dlbench}")
    frameworks = args.frameworks.split(",")
    if frameworks[0] != "native" or len(frameworks) > 2:
        sys.exit("gnmt_table: --frameworks is native,pytorch or native")
    peer = frameworks[1] if len(frameworks) == 2 else None

    rows = [("train", p, args.train_batch, 1) for p in args.train_precisions.split(",")]
    rows += [("infer", p, int(b), int(k)) for p in args.infer_precisions.split(",")
             for k in args.beams.split(",") for b in args.infer_batches.split(",")]
    results = {}
    profile = None
    with tempfile.TemporaryDirectory() as workdir:
        for row in rows:
            results[row] = (run(args, "native", *row, workdir),
                            run(args, peer, *row, workdir) if peer else None)
        if args.profile_steps > 0:
            profile = run(args, "native", "train", args.profile_precision, args.train_batch, 1,
                          workdir, args.profile_steps)

    first = next((r for r, _ in results.values() if r), None)
    environment = (first or {}).get("environment", {})
    gpus = environment.get("gpus") or []
    where = gpus[0].get("name", "?") if gpus else environment.get("host", {}).get("cpu_model", "?")
    build = environment.get("dlbench", {})
    print(f"GNMT v2 on {where}; dlbench {build.get('version', '?')} ({build.get('git_hash', '?')})"
          f"; {args.warmup} warm-up and {args.steps} measured steps ({args.latency_steps} at "
          "batch 1)\n")
    print("| mode | precision | batch | search | dlbench /s | PyTorch /s | ratio | dlbench tokens/s "
          "| PyTorch tokens/s | dlbench GiB | PyTorch GiB | dlbench p50/p95 ms "
          "| PyTorch p50/p95 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    complete = True
    for (mode, precision, batch, beam), (mine, theirs) in results.items():
        complete = complete and mine is not None and (theirs is not None or peer is None)
        rate = mine["throughput_samples_per_s"] if mine else None
        their_rate = theirs["throughput_samples_per_s"] if theirs else None
        ratio = f"{rate / their_rate:.2f}x" if rate and their_rate else "-"
        search = "-" if mode == "train" else ("greedy" if beam == 1 else f"beam {beam}")
        unit = (mine or {}).get("sample_unit", "")
        their_tokens = metric(theirs, "throughput/tokens_per_s") if theirs else None
        print(f"| {mode} | {precision} | {batch} | {search} | {number(rate, 1)} {unit} "
              f"| {number(their_rate, 1)} | {ratio} "
              f"| {number(metric(mine, 'throughput/tokens_per_s') if mine else None)} "
              f"| {number(their_tokens)} "
              f"| {number(metric(mine, 'memory/allocated_peak_gib') if mine else None, 2)} "
              f"| {number(metric(theirs, 'memory/peak_gib') if theirs else None, 2)} "
              f"| {latency(mine)} | {latency(theirs) if peer else '-'} |")
    if args.profile_steps > 0:
        print(f"\n{args.profile_precision} training step by layer kind (dlbench --profile-layers "
              f"{args.profile_steps}, batch {args.train_batch}):\n")
        layer_profile = (profile or {}).get("layer_profile")
        if not layer_profile:
            print("(the profiled run failed)")
            complete = False
        else:
            print(f"step {layer_profile['step_ms']:.1f} ms; layers {layer_profile['layers_ms']:.1f} "
                  f"ms, parts {layer_profile['parts_ms']:.1f} ms, gaps "
                  f"{layer_profile['gaps_ms']:.1f} ms\n")
            # The kinds hold the step's parts too (loss, update, gaps), with 0 layers.
            print("| kind | layers | ms | share |")
            print("|---|---|---|---|")
            for k in sorted(layer_profile["kinds"], key=lambda k: -k["ms"]):
                print(f"| {k['kind']} | {k['layers']} | {k['ms']:.2f} | {100 * k['share']:.1f} % |")
    sys.exit(0 if complete else 1)


if __name__ == "__main__":
    main()

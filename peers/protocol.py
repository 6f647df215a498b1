"""The dlbench peer protocol, shared by every framework worker in this folder (stdlib only).

A worker is started by `dlbench run --framework NAME` (bench/peers/peer_runner.cc) as

    python3 peers/NAME_worker.py --model resnet50 --mode train --batch 256 --precision fp16
        --device cuda:0 --input 224 --inputs '[...]' --warmup 5 --steps 20 --seconds 0
        --seed 42 --lr 0.001 --momentum 0.9 --expect-parameters 25557032

where --inputs lists the model's inputs as dlbench's graph declares them, in order:

    [{"name": "images", "shape": [256, 224, 224, 3], "dtype": "f16", "meaning": "images (NHWC)",
      "distribution": {"kind": "normal", "mean": 0, "stddev": 1}},
     {"name": "labels", "shape": [256], "dtype": "i32", "meaning": "class labels",
      "distribution": {"kind": "uniform_int", "low": 0, "high": 1000}}]

The worker builds its synthetic data from these. A model the worker does not have is a usage
error (check_model), so dlbench's model list lives in dlbench alone.

and writes JSON lines on its stdout, in this order:

    {"type": "hello", "protocol": 2, "framework": "pytorch", "versions": {...},
     "device": "NVIDIA H100 80GB HBM3", "parameters": 25557032}
    {"type": "measure"}                                 the measured phase begins
    {"type": "step", "index": 0, "duration_ms": 81.2}   one per measured step
    {"type": "summary", "steps": 20, "measured_seconds": 1.63,
     "peak_memory_bytes": 21474836480, "first_loss": 6.9, "last_loss": 6.8,
     "compile_seconds": 41.7}

compile_seconds only from a worker run with --compile (`--framework pytorch-compile`): the
wall time of one step run before the warm-up, compilation included, which no measured step
contains. A worker of a translation model adds its tokens: translated_tokens, the tokens its
measured steps translated into when it decodes (inference), [EOS] included, padding not; else
tokens_per_step, the source and target tokens of one step's sentence pairs, counted the same
way (its synthetic batch is drawn once, so every step has as many). The harness turns either
into tokens/s.

or, instead of whatever would come next, one error line and a non-zero exit:

    {"type": "error", "kind": "missing_package", "package": "torch", "message": "..."}

kind is missing_package (with package), usage (the configuration is not supported),
out_of_memory, mismatch (the architecture differs from dlbench's) or runtime.

Timing rules, the same as dlbench's native runner: each measured step is timed from before
it is issued to after the device has finished it (synchronized), and measured_seconds is the
wall time from the start of the first measured step to the end of the last. The harness, not
the worker, turns these into throughput and step statistics.

Everything else the worker or its libraries print goes to stderr: `Channel` moves file
descriptor 1 onto stderr and keeps the protocol on a private copy of the original stdout.
"""

import argparse
import importlib
import json
import os
import platform
import sys
import time

PROTOCOL = 2  # 2: --inputs replaced --classes
EXIT_ERROR = 3


class Channel:
    """The protocol's output: a private copy of stdout; fd 1 itself now goes to stderr."""

    def __init__(self):
        sys.stdout.flush()
        self._out = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr

    def send(self, message_type, **fields):
        self._out.write(json.dumps({"type": message_type, **fields}) + "\n")
        self._out.flush()

    def fail(self, kind, message, package=None):
        fields = {"kind": kind, "message": message}
        if package:
            fields["package"] = package
        self.send("error", **fields)
        sys.exit(EXIT_ERROR)


def parse_args(framework):
    p = argparse.ArgumentParser(description=f"dlbench {framework} peer worker (see protocol.py)")
    p.add_argument("--model", required=True)
    p.add_argument("--mode", default="train", choices=["train", "infer"])
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "fp16", "bf16"])
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--input", type=int, default=224)
    p.add_argument("--inputs", type=parse_inputs, required=True)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--seconds", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--lr", type=float, default=0.001)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--class-weights", type=parse_floats, default=None,
                   help="one weight per class for a segmenter's cross-entropy (W0,W1,...)")
    p.add_argument("--expect-parameters", type=int, default=0)
    p.add_argument("--beam", type=int, default=1,
                   help="a translation model's inference: hypotheses kept per sentence")
    p.add_argument("--compile", action="store_true",
                   help="compile the step first (pytorch: torch.compile); workers that have "
                        "no compiler of their own fail with a usage error")
    return p.parse_args()


def parse_floats(text):
    """--class-weights: comma-separated numbers (argparse type)."""
    try:
        return [float(v) for v in text.split(",")]
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"not numbers separated by commas: {e}")


def parse_inputs(text):
    """--inputs: a JSON array of {name, shape, dtype, distribution} objects (argparse type)."""
    try:
        inputs = json.loads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"not JSON: {e}")
    if not isinstance(inputs, list) or not all(
            isinstance(i, dict) and {"name", "shape", "dtype", "distribution"} <= i.keys()
            for i in inputs):
        raise argparse.ArgumentTypeError(
            "must be a list of {name, shape, dtype, distribution} objects")
    return inputs


def check_model(channel, args, known):
    """Fails with a usage error unless this worker builds args.model."""
    if args.model not in known:
        channel.fail("usage", f"this worker has no model '{args.model}' "
                              f"(it has {', '.join(sorted(known))})")


def input_named(channel, args, name):
    """The --inputs entry called `name`, or a usage error naming what the model takes."""
    for spec in args.inputs:
        if spec["name"] == name:
            return spec
    channel.fail("usage", f"{args.model}'s inputs have no '{name}' "
                          f"(they are {', '.join(i['name'] for i in args.inputs)})")


def classes(channel, args):
    """The class count of the "labels" input: labels are uniform integers in [0, classes)."""
    d = input_named(channel, args, "labels")["distribution"]
    if d.get("kind") != "uniform_int" or d.get("low", 0) != 0:
        channel.fail("usage", f"labels must be uniform integers from 0, not {d}")
    return int(d["high"])


def require(channel, package):
    """Imports `package`, or reports it missing by name and exits."""
    try:
        return importlib.import_module(package)
    except ImportError as e:
        channel.fail("missing_package", f"{sys.executable} cannot import {package}: {e}",
                     package=package)


def versions(**libraries):
    found = {"python": platform.python_version()}
    found.update({k: str(v) for k, v in libraries.items() if v is not None})
    return found


def check_parameters(channel, args, count):
    if args.expect_parameters and count != args.expect_parameters:
        channel.fail("mismatch", f"{args.model} has {count} parameters here, dlbench's has "
                                 f"{args.expect_parameters}")


def measure(channel, args, step, synchronize):
    """Warm-up, then measured steps, each synchronized; sends measure, step and summary lines.

    step() runs one training or inference step and returns the loss (a device value, read only
    at the end so reading it costs no step time) or None. Returns the summary's fields so the
    worker can add its peak memory."""
    for _ in range(args.warmup):
        step()
    synchronize()
    channel.send("measure")
    losses = []
    durations = []
    start = time.perf_counter()
    while True:
        if args.seconds > 0:
            if durations and time.perf_counter() - start >= args.seconds:
                break
        elif len(durations) >= args.steps:
            break
        t = time.perf_counter()
        loss = step()
        synchronize()
        elapsed = time.perf_counter() - t
        if not losses:
            losses.append(loss)
        durations.append(elapsed)
        channel.send("step", index=len(durations) - 1, duration_ms=elapsed * 1e3)
    measured = time.perf_counter() - start
    losses.append(loss)
    summary = {"steps": len(durations), "measured_seconds": measured}
    if losses[0] is not None:
        summary["first_loss"] = float(losses[0])
        summary["last_loss"] = float(losses[-1])
    return summary


def run_worker(framework, run, out_of_memory_markers=("out of memory",)):
    """The body of every worker's main(): parse the arguments, run, and turn any exception into
    one protocol error line (the traceback goes to stderr)."""
    channel = Channel()
    args = parse_args(framework)
    try:
        run(channel, args)
    except SystemExit:
        raise
    except Exception as e:
        import traceback
        traceback.print_exc()
        text = str(e)
        lowered = text.lower()
        kind = "out_of_memory" if any(m.lower() in lowered for m in out_of_memory_markers) \
            else "runtime"
        channel.fail(kind, f"{type(e).__name__}: {text.splitlines()[0] if text else ''}")

"""A stand-in framework worker for the harness tests: takes the real workers' flags and plays
the scenario named by $DLBENCH_FAKE_PEER (stdlib only, no framework, no GPU):

  valid      hello, measure, one step line per --steps (10 ms each), summary (with
             compile_seconds 1.5 when run with --compile)
  malformed  hello, then a line that is not JSON (line 2)
  crash      hello and one step, a traceback on stderr, exit 1
  hang       hello, then sleeps with a child process holding stdout open; writes both pids to
             $DLBENCH_FAKE_PEER_PIDS so the test can check the group was killed
  missing    an error line: the Python package $DLBENCH_FAKE_PEER_PACKAGE (torch) is missing
  mismatch   hello with one parameter too many
  noisy      valid, plus chatter on stderr (which the harness must ignore)

With $DLBENCH_FAKE_PEER_TOKENS set, the valid summary also says a step's tokens
(tokens_per_step), as a translation model's worker does.
"""

import argparse
import json
import os
import subprocess
import sys
import time


def send(**message):
    print(json.dumps(message), flush=True)


def hello(args, extra=0):
    send(type="hello", protocol=2, framework=args.framework,
         versions={args.framework: "0.0-test", "python": sys.version.split()[0]},
         device="Fake Device", parameters=args.expect_parameters + extra)


def session(args):
    hello(args)
    send(type="measure")
    step_s = 0.01
    for i in range(args.steps):
        time.sleep(step_s)
        send(type="step", index=i, duration_ms=step_s * 1e3)
    extra = {"compile_seconds": 1.5} if args.compile else {}
    if os.environ.get("DLBENCH_FAKE_PEER_TOKENS"):
        extra["tokens_per_step"] = float(os.environ["DLBENCH_FAKE_PEER_TOKENS"])
    # Class weights, where given, come back as the first loss, so a test sees they arrived.
    first_loss = sum(map(float, args.class_weights.split(","))) if args.class_weights else 6.9
    send(type="summary", steps=args.steps, measured_seconds=args.steps * step_s * 1.02,
         peak_memory_bytes=3 * 2 ** 30, first_loss=first_loss, last_loss=6.8, **extra)


def main():
    p = argparse.ArgumentParser()
    for flag in ("--model", "--mode", "--precision", "--device", "--seconds", "--lr",
                 "--momentum", "--class-weights"):
        p.add_argument(flag)
    p.add_argument("--inputs", type=json.loads, required=True)
    p.add_argument("--compile", action="store_true")
    for flag in ("--batch", "--input", "--warmup", "--steps", "--seed",
                 "--expect-parameters"):
        p.add_argument(flag, type=int, default=0)
    args = p.parse_args()
    # The harness's --inputs must describe this batch: every input's first dimension is it, or
    # a sequence model's rows of tokens, one per position of every sample (--input positions).
    for spec in args.inputs:
        first = spec.get("shape", [0])[0]
        if first not in (args.batch, args.batch * args.input) or "distribution" not in spec:
            send(type="error", kind="usage", message=f"bad --inputs entry {spec}")
            sys.exit(3)
    args.framework = os.environ.get("DLBENCH_FAKE_FRAMEWORK", "pytorch")
    scenario = os.environ.get("DLBENCH_FAKE_PEER", "valid")
    if scenario == "valid":
        session(args)
    elif scenario == "noisy":
        print("some library warning", file=sys.stderr, flush=True)
        session(args)
    elif scenario == "malformed":
        hello(args)
        print("this is not json", flush=True)
        time.sleep(30)
    elif scenario == "crash":
        hello(args)
        send(type="step", index=0, duration_ms=10.0)
        print("Traceback (most recent call last):\nRuntimeError: CUDA error: fake crash",
              file=sys.stderr, flush=True)
        sys.exit(1)
    elif scenario == "hang":
        hello(args)
        child = subprocess.Popen(["sleep", "300"])
        with open(os.environ["DLBENCH_FAKE_PEER_PIDS"], "w") as f:
            f.write(f"{os.getpid()} {child.pid}\n")
        print("hanging now", file=sys.stderr, flush=True)
        time.sleep(300)
    elif scenario == "missing":
        package = os.environ.get("DLBENCH_FAKE_PEER_PACKAGE", "torch")
        send(type="error", kind="missing_package", package=package,
             message=f"No module named '{package}'")
        sys.exit(3)
    elif scenario == "mismatch":
        hello(args, extra=1)
        time.sleep(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())

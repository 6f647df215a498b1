"""One `dlbench run ... --json FILE` for the benchmark scripts: its result, or None (the command
and its error said on stderr) when it failed."""
import json
import subprocess
import sys


def run_json(cmd, out):
    """Runs cmd, which writes its result to `out`; returns that result, or None on failure."""
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        print(f"dlbench failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr.strip()}",
              file=sys.stderr)
        return None
    with open(out) as f:
        return json.load(f)

"""PyTorch's normalized Bahdanau attention at the shape the op harness times (dlbench_ops --perf
--filter additive): the composition NVIDIA's GNMT reference runs after its projections, batch
first, which materializes tanh(q + k) as a [batch, queries, keys, width] tensor; forward, and
forward + backward (the gradients of the projected queries and keys, the values, v and g), the
numbers to set beside dlbench's additive_attention_forward and _backward perf cases (whose
backward case also runs its forward). A benchmark, not a test; on a machine with a GPU:
    python3 bench/scripts/bahdanau_peer.py [--dtype f32|f16|bf16] [--repeats 20]
Prints ms per call, timed as peer_timing.py says.
"""
import argparse

import torch

from peer_timing import time_ms

# GNMT at batch 128 and 50 tokens, 1024 wide; source lengths as the op harness's perf case.
BATCH, QUERIES, KEYS, WIDTH, VALUE_WIDTH = 128, 50, 50, 1024, 1024
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def attention(q, k, values, v, g, mask, b):
    """NVIDIA GNMT's BahdanauAttention.calc_score (normalize=True), masking, softmax and bmm."""
    scores = torch.tanh(q.unsqueeze(2) + k.unsqueeze(1) + b)  # [batch, queries, keys, width]
    u = g * v / v.norm()
    scores = (scores @ u).masked_fill(mask, float("-inf"))  # [batch, queries, keys]
    probs = torch.softmax(scores, dim=-1)
    return torch.bmm(probs, values)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", choices=DTYPES, default="f16")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    dtype = DTYPES[args.dtype]
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {args.dtype}")

    def tensor(*shape):
        return torch.randn(*shape, device="cuda", dtype=dtype).requires_grad_()

    q, k, values = tensor(BATCH, QUERIES, WIDTH), tensor(BATCH, KEYS, WIDTH), tensor(BATCH, KEYS, VALUE_WIDTH)
    v, g = tensor(WIDTH), torch.full((1,), WIDTH ** -0.5, device="cuda", dtype=dtype, requires_grad=True)
    b = torch.zeros(WIDTH, device="cuda", dtype=dtype, requires_grad=True)  # normalize_bias
    lengths = torch.tensor([50 - b % 40 for b in range(BATCH)], device="cuda")
    mask = (torch.arange(KEYS, device="cuda")[None, :] >= lengths[:, None]).unsqueeze(1)
    dout = torch.randn(BATCH, QUERIES, VALUE_WIDTH, device="cuda", dtype=dtype)

    def forward():
        attention(q, k, values, v, g, mask, b)

    def forward_backward():
        attention(q, k, values, v, g, mask, b).backward(dout)

    name = f"b{BATCH}_q{QUERIES}_k{KEYS}_w{WIDTH}_v{VALUE_WIDTH}"
    torch.cuda.reset_peak_memory_stats()
    fwd = time_ms(forward, args.repeats)
    both = time_ms(forward_backward, args.repeats)
    peak = torch.cuda.max_memory_allocated() / 2**20
    print(f"additive_attention {name} forward {fwd:.4f} ms  forward + backward {both:.4f} ms"
          f"  (peak memory {peak:.0f} MiB)")


if __name__ == "__main__":
    main()

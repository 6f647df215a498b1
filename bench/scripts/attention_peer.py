"""PyTorch's attention at the shapes the op harness times (dlbench_ops --perf --filter
attention): torch.nn.functional.scaled_dot_product_attention on [batch, heads, seq, head_dim]
views of [batch * seq, heads * head_dim] tensors (the layout dlbench's op takes, as the
projections write it), forward and forward + backward, once per SDPA backend PyTorch has here
(flash, memory-efficient, cuDNN, math). A benchmark, not a test; on a machine with a GPU:
    python3 bench/scripts/attention_peer.py [--dtype f16|bf16|f32] [--repeats 20]
Prints ms per call of forward and of backward alone (forward + backward minus forward), timed
with CUDA events over `repeats` calls after warm-up, as the op harness's perf mode does.
"""
import argparse

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from peer_timing import time_ms

SHAPES = [(64, 12, 128, 64), (8, 16, 512, 64)]  # BERT-base s128 b64; BERT-large s512 b8
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "math": SDPBackend.MATH,
}



def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="f16", choices=DTYPES)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    dtype = DTYPES[args.dtype]
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {args.dtype}")
    for batch, heads, seq, dim in SHAPES:
        def tokens():
            t = torch.randn(batch * seq, heads * dim, device="cuda", dtype=dtype)
            return t.requires_grad_()
        q, k, v = tokens(), tokens(), tokens()
        view = lambda t: t.view(batch, seq, heads, dim).transpose(1, 2)
        dout = torch.randn(batch, heads, seq, dim, device="cuda", dtype=dtype)
        flops = 4.0 * batch * heads * seq * seq * dim
        for name, backend in BACKENDS.items():
            def forward():
                with sdpa_kernel(backend):
                    return torch.nn.functional.scaled_dot_product_attention(view(q), view(k), view(v))
            def both():
                forward().backward(dout)
            try:
                fwd = time_ms(forward, args.repeats)
                bwd = time_ms(both, args.repeats) - fwd
            except RuntimeError as e:  # a backend that does not take this shape or dtype
                print(f"b{batch}_h{heads}_s{seq}_d{dim} {name:9s} not available: {str(e).splitlines()[0][:80]}")
                continue
            print(f"b{batch}_h{heads}_s{seq}_d{dim} {name:9s} forward {fwd:.4f} ms ({flops / fwd / 1e9:.1f} TFLOP/s)"
                  f"  backward {bwd:.4f} ms ({2.5 * flops / bwd / 1e9:.1f} TFLOP/s)")


if __name__ == "__main__":
    main()

"""PyTorch's LSTM at the shape the op harness times (dlbench_ops --perf --filter b128_t50):
one torch.nn.LSTM layer, time-major, on cuDNN as PyTorch calls it, forward in training mode and
forward + backward (input and weight gradients), the numbers to set beside dlbench's
lstm_forward and lstm_backward perf cases (whose backward case also runs its forward). A
benchmark, not a test; on a machine with a GPU:
    python3 bench/scripts/lstm_peer.py [--dtype f32|tf32|f16|bf16] [--repeats 20]
Prints ms per call, timed with CUDA events over `repeats` calls after warm-up.
"""
import argparse

import torch

from peer_timing import time_ms

# GNMT's decoder layer: batch 128, 50 steps, the embedding and the context in, 1024 out.
SHAPES = [(128, 50, 2048, 1024)]
DTYPES = {"f32": torch.float32, "tf32": torch.float32, "f16": torch.float16,
          "bf16": torch.bfloat16}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", choices=DTYPES, default="f16")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    tf32 = args.dtype == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    dtype = DTYPES[args.dtype]
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {args.dtype}")
    for batch, steps, inputs, hidden in SHAPES:
        lstm = torch.nn.LSTM(inputs, hidden).to(device="cuda", dtype=dtype)
        lstm.flatten_parameters()
        x = torch.randn(steps, batch, inputs, device="cuda", dtype=dtype, requires_grad=True)
        dy = torch.randn(steps, batch, hidden, device="cuda", dtype=dtype)

        def forward():
            lstm(x)

        def forward_backward():
            y, _ = lstm(x)
            y.backward(dy)

        name = f"b{batch}_t{steps}_i{inputs}_h{hidden}"
        print(f"lstm {name} forward (training) {time_ms(forward, args.repeats):.4f} ms")
        print(f"lstm {name} forward + backward {time_ms(forward_backward, args.repeats):.4f} ms")


if __name__ == "__main__":
    main()

"""PyTorch's own cuDNN on ResNet-50's stem convolution (7x7, stride 2, padding 3, 3 -> 64
channels, 224x224) at batch 256: forward and weight gradient (the stem has no input gradient)
per dtype and memory format, with cudnn.benchmark on so cuDNN picks by timing, as dlbench's
routes do. Answers whether a slow stem in some dtype is cuDNN's or dlbench's. A benchmark, not a
test; on a machine with a GPU:
    python3 bench/scripts/stem_conv_peer.py [--batch 256] [--repeats 20]
Prints ms per call, timed with CUDA events after warm-up (peer_timing.time_ms).
"""
import argparse

import torch

from peer_timing import time_ms

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}
FORMATS = {"NHWC": torch.channels_last, "NCHW": torch.contiguous_format}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name()}; stem at batch {args.batch}")
    for dname, dtype in DTYPES.items():
        for fname, fmt in FORMATS.items():
            x = torch.randn(args.batch, 3, 224, 224, device="cuda", dtype=dtype)
            x = x.contiguous(memory_format=fmt)
            w = torch.randn(64, 3, 7, 7, device="cuda", dtype=dtype).contiguous(memory_format=fmt)
            dy = torch.randn_like(torch.nn.functional.conv2d(x, w, stride=2, padding=3))

            def forward():
                return torch.nn.functional.conv2d(x, w, stride=2, padding=3)

            def weight_grad():
                return torch.ops.aten.convolution_backward(
                    dy, x, w, None, (2, 2), (3, 3), (1, 1), False, (0, 0), 1,
                    (False, True, False))

            print(f"{dname} {fname}: forward {time_ms(forward, args.repeats):.3f} ms, "
                  f"weight gradient {time_ms(weight_grad, args.repeats):.3f} ms")


if __name__ == "__main__":
    main()

"""How the PyTorch peer scripts beside this file time a call: CUDA events around `repeats` calls
after three warm-up calls, as the op harness's perf mode times dlbench's ops."""
import torch


def time_ms(fn, repeats):
    """Milliseconds per call of fn(), averaged over `repeats` calls."""
    for _ in range(3):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(repeats):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / repeats

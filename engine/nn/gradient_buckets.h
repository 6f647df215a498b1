// Gradient buckets for data parallelism: which contiguous ranges of the flat gradient buffers
// are all-reduced together, and when each may start.
//
// Backward runs the nodes last to first, so a parameter's gradient is final once its node's
// backward has run. A bucket is a contiguous run of parameters of one group (same buffer,
// same weight-decay class); it is ready after the backward of the earliest node it holds.
// Buckets are cut from the end of each group (the last layers finish first) at about
// `bucket_bytes`, so the first all-reduces start while backward is still early. A parameter
// larger than a bucket is a bucket of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dlbench::nn {

// One parameter's place in the flat buffers.
struct GradientSlot {
  std::int64_t offset = 0;  // elements from the start of the flat buffers
  std::int64_t count = 0;
  std::size_t node = 0;  // the graph node that owns it
  int group = 0;         // slots of one group are contiguous and reduced only with each other
  std::size_t element_bytes = 4;  // of the group's gradient dtype
};

struct GradientBucket {
  int group = 0;
  std::int64_t begin = 0, end = 0;  // elements [begin, end)
  std::size_t ready_after = 0;      // the node whose backward completes it
};

// Buckets in launch order (ready_after descending). Every slot falls in exactly one bucket.
std::vector<GradientBucket> plan_gradient_buckets(std::vector<GradientSlot> slots,
                                                  std::size_t bucket_bytes);

}  // namespace dlbench::nn

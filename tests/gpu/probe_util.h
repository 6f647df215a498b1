// What the #17 probes (conv_prologue_probe.cc, dgrad_bn_probe.cc) share: device buffers of f16
// and f32 values, reproducible random inputs, a median device time, and a cuDNN graph built
// node by node and planned with its first engine, as FusedConvForward chooses.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bench/micro/micro_cuda.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cudnn_graph.h"
#include "engine/backend/op_params.h"

namespace dlbench::backend::cuda::probe {

// A convolution of ResNet-50 (v1.5) that reads a batch norm + ReLU's output, and how many of it a
// step runs: each bottleneck's conv2 (3x3, strided in a stage's first block) reads bn1 + ReLU,
// its conv3 (1x1) bn2 + ReLU.
struct Layer {
  const char* name;
  std::int64_t hw, c, k, rs;
  int stride;
  int count;
};
inline constexpr Layer kBnReluConvs[] = {
    {"layer1 conv2 3x3", 56, 64, 64, 3, 1, 3},
    {"layer1 conv3 1x1", 56, 64, 256, 1, 1, 3},
    {"layer2.0 conv2 3x3/2", 56, 128, 128, 3, 2, 1},
    {"layer2 conv2 3x3", 28, 128, 128, 3, 1, 3},
    {"layer2 conv3 1x1", 28, 128, 512, 1, 1, 4},
    {"layer3.0 conv2 3x3/2", 28, 256, 256, 3, 2, 1},
    {"layer3 conv2 3x3", 14, 256, 256, 3, 1, 5},
    {"layer3 conv3 1x1", 14, 256, 1024, 1, 1, 6},
    {"layer4.0 conv2 3x3/2", 14, 512, 512, 3, 2, 1},
    {"layer4 conv2 3x3", 7, 512, 512, 3, 1, 2},
    {"layer4 conv3 1x1", 7, 512, 2048, 1, 1, 3},
};
// The layer's convolution at `batch`, padded to keep its size ("same" before the stride).
inline ConvParams conv_params(const Layer& l, std::int64_t batch) {
  ConvParams p;
  p.n = batch, p.h = p.w = l.hw, p.c = l.c, p.k = l.k, p.r = p.s = l.rs;
  p.stride_h = p.stride_w = l.stride;
  p.pad_h = p.pad_w = l.rs / 2;
  return p;
}

// A device buffer of `count` f16 (or f32) values, freed with the object.
template <class T>
class DeviceValues {
 public:
  // `count` zeros.
  explicit DeviceValues(std::size_t count) : count_(count) {
    CUDA_CHECK(cudaMalloc(&data_, std::max<std::size_t>(bytes(), 16)));
    CUDA_CHECK(cudaMemset(data_, 0, bytes()));
  }
  explicit DeviceValues(const std::vector<float>& values) : count_(values.size()) {
    std::vector<T> h(values.size());
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<T>(values[i]);
    CUDA_CHECK(cudaMalloc(&data_, std::max<std::size_t>(bytes(), 16)));
    CUDA_CHECK(cudaMemcpy(data_, h.data(), bytes(), cudaMemcpyHostToDevice));
  }
  ~DeviceValues() { CUDA_CHECK_NOTHROW(cudaFree(data_)); }
  DeviceValues(const DeviceValues&) = delete;
  DeviceValues& operator=(const DeviceValues&) = delete;
  void* get() const { return data_; }
  std::size_t bytes() const { return count_ * sizeof(T); }
  std::vector<float> download() const {
    std::vector<T> h(count_);
    CUDA_CHECK(cudaMemcpy(h.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    std::vector<float> v(count_);
    for (std::size_t i = 0; i < count_; ++i) v[i] = static_cast<float>(h[i]);
    return v;
  }

 private:
  void* data_ = nullptr;
  std::size_t count_;
};
using Half = DeviceValues<__half>;
using Float = DeviceValues<float>;

// Uniform in [lo, hi), rounded to f16 (so the host sees what the device reads).
inline std::vector<float> random_values(std::size_t count, std::uint32_t seed, float lo, float hi) {
  std::vector<float> v(count);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = __half2float(__float2half(lo + (hi - lo) * static_cast<float>(seed >> 8) / 16777216.0f));
  }
  return v;
}

// Median device time of `work` in ms: 20 runs after 5 warm-up runs, on the default stream.
template <class Work>
float median_ms(Work&& work) {
  constexpr int kWarmup = 5, kRuns = 20;
  Event start, stop;
  for (int i = 0; i < kWarmup; ++i) work();
  std::vector<double> ms;
  for (int i = 0; i < kRuns; ++i) ms.push_back(micro::time_ms(nullptr, start, stop, work));
  std::nth_element(ms.begin(), ms.begin() + kRuns / 2, ms.end());
  return static_cast<float>(ms[kRuns / 2]);
}

// Logical dims [a, b, c, d], laid out channels-last by tensor().
inline std::vector<std::int64_t> dims(std::int64_t a, std::int64_t b, std::int64_t c,
                                      std::int64_t d) {
  return {a, b, c, d};
}

// A cuDNN graph built node by node, then planned with its first engine that finalizes
// (heuristic A, then fallback), any workspace allowed.
class Graph {
 public:
  // A channels-last tensor; memory tensors are bound by uid in run().
  const BackendDescriptor& tensor(const char* name, std::int64_t uid, std::vector<std::int64_t> d,
                                  cudnnDataType_t type, Storage storage = Storage::kMemory) {
    std::vector<std::int64_t> strides = channels_last_strides(d);
    return part(make_tensor({name, uid, std::move(d), std::move(strides), type, storage}));
  }
  // Keeps a descriptor alive as long as the graph.
  const BackendDescriptor& part(BackendDescriptor descriptor) {
    return parts_.emplace_back(std::move(descriptor));
  }
  void add(BackendDescriptor operation) { operations_.push_back(&part(std::move(operation))); }

  // Plans the graph; ok() says whether an engine took it, refusal() why not.
  void plan(cudnnHandle_t handle) {
    Refusable graph = make_operation_graph(handle, operations_);
    if (!graph.descriptor) {
      refusal_ = "cuDNN has no pattern for this graph: " + graph.refusal;
      return;
    }
    chosen_ = choose_plan(handle, part(std::move(*graph.descriptor)),
                          std::numeric_limits<std::size_t>::max(), false);
    if (!chosen_.plan) refusal_ = chosen_.refusal;
  }
  bool ok() const { return chosen_.plan.has_value(); }
  const std::string& refusal() const { return refusal_; }
  std::size_t workspace_bytes() const { return chosen_.workspace_bytes; }
  std::string engine() const { return chosen_.chosen.describe(); }
  void run(cudnnHandle_t handle, std::span<const std::int64_t> uids,
           std::span<void* const> pointers, void* workspace) const {
    execute(handle, *chosen_.plan, uids, pointers, workspace);
  }

 private:
  std::deque<BackendDescriptor> parts_;
  std::vector<const BackendDescriptor*> operations_;
  ChosenPlan chosen_;
  std::string refusal_;
};

// Device scratch of at least 16 bytes, freed with the object.
class Scratch {
 public:
  explicit Scratch(std::size_t bytes) {
    CUDA_CHECK(cudaMalloc(&data_, std::max<std::size_t>(bytes, 16)));
  }
  ~Scratch() { CUDA_CHECK_NOTHROW(cudaFree(data_)); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
};

// A probe's main: the batch from argv[1] (256 by default), checked, and a GPU present; then
// `probe(batch)`'s exit code.
inline int run_main(int argc, char** argv, const char* name, int (*probe)(std::int64_t)) {
  const std::int64_t batch = argc > 1 ? std::atoll(argv[1]) : 256;
  if (batch <= 0) {
    std::fprintf(stderr, "usage: %s [BATCH > 0]\n", name);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "%s: no CUDA GPU\n", name);
    return 1;
  }
  return probe(batch);
}

}  // namespace dlbench::backend::cuda::probe

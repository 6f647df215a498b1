// Greedy decoding's choice per sentence on the device (Backend::greedy_pick), as the CPU backend
// makes it (cpu_decoding.cc): a block per sentence reduces (score, id) keys to their maximum, then
// one block counts the sentences still open. No atomics: the same choice on every run.
#include <cstdint>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_kernels.cuh"

namespace dlbench::backend::cuda {
namespace {

// A score and its id as one key whose maximum is the highest score, and among equal scores the
// lowest id: the score's bits made to order as unsigned integers above, the id inverted below.
// NaN counts as -inf, so it is never above another score.
__device__ __forceinline__ unsigned long long pick_key(float score, std::int64_t id) {
  if (isnan(score)) score = -INFINITY;
  unsigned int bits = __float_as_uint(score);
  bits = (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
  return (static_cast<unsigned long long>(bits) << 32) | (0xffffffffu - static_cast<unsigned>(id));
}

struct MaxKey {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const {
    return a > b ? a : b;
  }
};

template <class T>
__global__ void greedy_pick_kernel(const T* logits, std::int64_t vocabulary, std::int32_t eos,
                                   std::int32_t pad, std::int32_t* tokens, std::int32_t* finished,
                                   std::int32_t* lengths) {
  const std::int64_t n = blockIdx.x;
  if (finished[n] != 0) {  // the same for every thread of the block
    if (threadIdx.x == 0) tokens[n] = pad;
    return;
  }
  const T* row = logits + n * vocabulary;
  // -inf at id 0: what a row without any score above -inf chooses.
  unsigned long long best = pick_key(-INFINITY, 0);
  for (std::int64_t j = threadIdx.x; j < vocabulary; j += blockDim.x)
    best = MaxKey{}(best, pick_key(to_f32(row[j]), j));
  best = block_reduce(best, MaxKey{});
  if (threadIdx.x != 0) return;
  const auto id = static_cast<std::int32_t>(0xffffffffu - static_cast<unsigned>(best));
  tokens[n] = id;
  lengths[n] += 1;
  finished[n] = id == eos ? 1 : 0;
}

__global__ void count_unfinished_kernel(const std::int32_t* finished, std::int64_t batch,
                                        std::int32_t* unfinished) {
  int open = 0;
  for (std::int64_t n = threadIdx.x; n < batch; n += blockDim.x) open += finished[n] == 0 ? 1 : 0;
  open = block_reduce(open, Add{});
  if (threadIdx.x == 0) unfinished[0] = open;
}

}  // namespace

void CudaBackend::greedy_pick_impl(const GreedyParams& p, const Tensor& logits,
                                   const Tensor& tokens, const Tensor& finished,
                                   const Tensor& lengths, const Tensor& unfinished) {
  activate();
  const char* op = "greedy_pick";
  require_here(logits, op, "logits"), require_here(tokens, op, "tokens");
  require_here(finished, op, "finished"), require_here(lengths, op, "lengths");
  require_here(unfinished, op, "unfinished");
  DLBENCH_CHECK(p.batch <= std::int64_t{0x7fffffff},
                std::string(op) + ": at most 2^31 - 1 sentences on CUDA");
  dispatch_float(logits.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    greedy_pick_kernel<T><<<static_cast<unsigned>(p.batch), kBlock, 0, stream_>>>(
        static_cast<const T*>(logits.data()), p.vocabulary, p.eos, p.pad,
        tokens.data_as<std::int32_t>(), finished.data_as<std::int32_t>(),
        lengths.data_as<std::int32_t>());
    CUDA_CHECK_LAUNCH();
  });
  count_unfinished_kernel<<<1, kBlock, 0, stream_>>>(finished.data_as<std::int32_t>(), p.batch,
                                                     unfinished.data_as<std::int32_t>());
  CUDA_CHECK_LAUNCH();
}

}  // namespace dlbench::backend::cuda

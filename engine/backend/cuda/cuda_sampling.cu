// Negative sampling on the device, as the CPU backend does it (cpu_sampling.cc): NCF's
// (Backend::sample_negatives) and Word2Vec's (Backend::sample_candidates). A one-thread kernel
// advances the step counter on the device, then one thread per element copies a positive or
// draws a negative, so a recorded device graph draws anew at every replay.
#include "engine/backend/cuda/cuda_kernels.cuh"
#include "engine/backend/sampled_negatives.h"

namespace dlbench::backend::cuda {
namespace {

template <class T>
__global__ void sample_negatives_kernel(NegativeSamplingParams p, const std::int32_t* step,
                                        const std::int32_t* users_pos,
                                        const std::int32_t* items_pos, std::int64_t positives,
                                        std::int32_t* users, std::int32_t* items, T* labels,
                                        std::int64_t batch) {
  const std::uint64_t key = negatives_key(p.seed, *step);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < batch;
       r += stride) {
    const bool positive = r < positives;
    const std::int64_t j = r - positives;
    users[r] = users_pos[positive ? r : j % positives];
    items[r] = positive ? items_pos[r] : negative_item(key, j, p.items);
    labels[r] = from_f32<T>(positive ? 1.0f : 0.0f);
  }
}

template <class T>
__global__ void sample_candidates_kernel(CandidateSamplingParams p, const std::int32_t* step,
                                         const std::int32_t* contexts, const float* cdf,
                                         std::int64_t vocab, std::int64_t pairs, std::int64_t m,
                                         std::int32_t* ids, T* labels) {
  const std::uint64_t key = negatives_key(p.seed, *step);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       e < pairs * m; e += stride) {
    const std::int64_t pair = e / m, column = e % m;
    ids[e] = column == 0 ? contexts[pair]
                         : table_draw(cdf, vocab, unit_uniform(key, pair * (m - 1) + column - 1));
    labels[e] = from_f32<T>(column == 0 ? 1.0f : 0.0f);
  }
}

}  // namespace

void CudaBackend::sample_candidates_impl(const CandidateSamplingParams& p, const Tensor& step,
                                         const Tensor& contexts, const Tensor& cdf,
                                         const Tensor& ids, const Tensor& labels) {
  const char* op = "sample_candidates";
  activate();
  for (const Tensor* t : {&step, &contexts, &cdf, &ids, &labels}) require_here(*t, op, "operand");
  increment_on_device(step.data_as<std::int32_t>(), stream_);
  const std::int64_t pairs = ids.dim(0), m = ids.dim(1);
  dispatch_float(labels.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    sample_candidates_kernel<T><<<grid_for(pairs * m), kBlock, 0, stream_>>>(
        p, step.data_as<std::int32_t>(), contexts.data_as<std::int32_t>(), cdf.data_as<float>(),
        cdf.dim(0), pairs, m, ids.data_as<std::int32_t>(), static_cast<T*>(labels.data()));
  });
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::sample_negatives_impl(const NegativeSamplingParams& p, const Tensor& step,
                                        const Tensor& users_pos, const Tensor& items_pos,
                                        const Tensor& users, const Tensor& items,
                                        const Tensor& labels) {
  const char* op = "sample_negatives";
  activate();
  for (const Tensor* t : {&step, &users_pos, &items_pos, &users, &items, &labels})
    require_here(*t, op, "operand");
  increment_on_device(step.data_as<std::int32_t>(), stream_);
  const std::int64_t batch = users.dim(0);
  dispatch_float(labels.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    sample_negatives_kernel<T><<<grid_for(batch), kBlock, 0, stream_>>>(
        p, step.data_as<std::int32_t>(), users_pos.data_as<std::int32_t>(),
        items_pos.data_as<std::int32_t>(), users_pos.dim(0), users.data_as<std::int32_t>(),
        items.data_as<std::int32_t>(), static_cast<T*>(labels.data()), batch);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace dlbench::backend::cuda

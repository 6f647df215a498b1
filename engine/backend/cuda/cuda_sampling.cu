// Negative sampling for implicit feedback (Backend::sample_negatives), as the CPU backend does it
// (cpu_sampling.cc): a one-thread kernel advances the step counter on the device, then one
// thread per row copies a positive or draws a negative with negative_item(), so a recorded
// device graph draws anew at every replay.
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

}  // namespace

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

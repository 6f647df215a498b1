// Batch norm on our own kernels: launch geometry and the backend's three batch norm ops. The math,
// the kernels and why they sum the way they do are in cuda_batch_norm_kernels.cuh.
#include <string>
#include <type_traits>

#include "engine/backend/cuda/cuda_batch_norm_apply.cuh"

namespace dlbench::backend::cuda {
namespace {

// Forward apply and backward's sums walk their rows last to first, for the L2 cache (50 MB on an
// H200, less than most of ResNet-50's activations): a pass that reads what the pass before it
// wrote or read finds the rows that pass touched last still cached, if it starts there. The
// convolution before a batch norm writes its output first row to last, so forward apply starts
// at the last row (and leaves y's first rows cached for the next convolution), and so do
// backward's sums over the dgrad's dy; backward apply then starts at the first row, where the
// sums ended. Against every pass first to last, ResNet-50 at batch 256 on an H200 (2026-12-01,
// two runs each, one call): fp16 median step 29.07 -> 28.84 ms, bf16 32.14 -> 31.98; reversing
// backward apply as well measured in between, reversing the forward sums (bf16) within noise, so
// those two keep their order. No sum changes: a chunk's partial sums go to its own slot whenever
// its block runs.
constexpr bool kForwardApplyReversed = true;
constexpr bool kBackwardSumsReversed = true;

unsigned finalize_blocks(std::int64_t channels) {
  return static_cast<unsigned>((channels + kLanes - 1) / kLanes);
}

// A tail needs whole mask bytes per row (see cuda_batch_norm_kernels.cuh): supports() says no
// to other shapes, so a pass never asks for one.
void require_tail_channels(const BatchNormParams& p, const char* op) {
  DLBENCH_CHECK(!p.has_tail() || p.channels % 8 == 0,
                std::string(op) + ": a fused residual or ReLU needs channels in multiples of 8");
}

template <class T>
ForwardTail<T> forward_tail(const BatchNormParams& p, const Tensor& residual, const Tensor& mask,
                            const float* residual_coef = nullptr) {
  return {p.residual ? static_cast<const T*>(residual.data()) : nullptr,
          p.activation == Activation::kRelu,
          mask.defined() ? static_cast<unsigned char*>(mask.data()) : nullptr, residual_coef};
}

}  // namespace

void CudaBackend::batch_norm_forward_training_impl(
    const BatchNormParams& p, const Tensor& x, const Tensor& gamma, const Tensor& beta,
    const Tensor& y, const Tensor& saved_mean, const Tensor& saved_inv_std,
    const Tensor& running_mean, const Tensor& running_var, const Tensor& residual,
    const Tensor& relu_mask, const Tensor& statistics, const ResidualNorm& rn) {
  const char* op = "batch_norm_forward_training";
  activate();
  require_float(x, op, "x");
  require_tail_channels(p, op);
  for (const Tensor* t :
       {&x, &gamma, &beta, &y, &saved_mean, &saved_inv_std, &running_mean, &running_var})
    require_here(*t, op, "operand");
  for (const Tensor* t : {&residual, &relu_mask})
    if (t->defined()) require_here(*t, op, "tail operand");
  if (p.statistics) require_here(statistics, op, "statistics");
  if (p.residual_norm)
    for (const Tensor* t : {&rn.gamma, &rn.beta, &rn.saved_mean, &rn.saved_inv_std,
                            &rn.running_mean, &rn.running_var})
      require_here(*t, op, "the residual's batch norm operand");
  if (p.rows == 0 || p.channels == 0) return;
  dispatch_packs(
      x.dtype(), p.channels, {x.data(), y.data(), residual.data()}, op, [&](auto tag, auto vec) {
        using T = typename decltype(tag)::type;
        constexpr int kVec = decltype(vec)::value;
        const Tiling t = tiling(p, kVec);
        const ForwardChannels channels{
            gamma.data_as<float>(),        beta.data_as<float>(),
            saved_mean.data_as<float>(),   saved_inv_std.data_as<float>(),
            running_mean.data_as<float>(), running_var.data_as<float>()};
        const ForwardChannels residual_channels =
            p.residual_norm ? ForwardChannels{rn.gamma.data_as<float>(),
                                              rn.beta.data_as<float>(),
                                              rn.saved_mean.data_as<float>(),
                                              rn.saved_inv_std.data_as<float>(),
                                              rn.running_mean.data_as<float>(),
                                              rn.running_var.data_as<float>()}
                            : ForwardChannels{};
        // With the convolution's sums, apply turns them into its coefficients itself (one
        // launch where a finalize and an apply were: H200, ResNet-50 fp16 at batch 256,
        // 2026-12-01, median step 29.16 -> 29.02 ms). Without them, steps 1 and 2 run first:
        // partial sums over x, then the finalize writes the coefficients into the workspace.
        FoldedStatistics folded;
        float* coef = nullptr;
        float* residual_coef = nullptr;
        if (p.statistics) {
          folded.sums = statistics.data_as<float>(), folded.ch = channels, folded.p = p;
          if (p.residual_norm)
            folded.residual_sums = rn.statistics.data_as<float>(),
            folded.residual_ch = residual_channels;
        } else {
          const Chunking k = chunking(p, t, kForwardPartialBlocks);
          // Coefficients and partials per batch norm: x's, then the residual's.
          const std::int64_t per_norm = p.channels * (kCoefficients + 2 * k.chunks);
          coef =
              static_cast<float*>(workspace(sizeof(float) * per_norm * (p.residual_norm ? 2 : 1)));
          auto statistics_of = [&](const Tensor& in, const ForwardChannels& ch, float* c) {
            const auto* pin = static_cast<const T*>(in.data());
            float* partial = c + kCoefficients * p.channels;
            bn_partial_kernel<T, kVec, SumKind::kForward>
                <<<dim3(t.tiles, static_cast<unsigned>(k.chunks)), t.block, 0, stream_>>>(
                    pin, nullptr, nullptr, nullptr, p.rows, p.channels, k.rows_per_chunk, partial);
            CUDA_CHECK_LAUNCH();
            bn_forward_finalize_kernel<T>
                <<<finalize_blocks(p.channels), dim3(kLanes, kLanes), 0, stream_>>>(
                    partial, k.chunks, pin, p.rows, p.channels, p, ch, c);
            CUDA_CHECK_LAUNCH();
          };
          statistics_of(x, channels, coef);
          if (p.residual_norm) {
            residual_coef = coef + per_norm;
            statistics_of(residual, residual_channels, residual_coef);
          }
        }
        // Apply with its tail where it has one: the plain kernels keep no tail code.
        dispatch_bool(p.has_tail(), [&](auto tail) {
          dispatch_bool(p.statistics, [&](auto folds) {
            const auto kernel = bn_forward_apply_kernel<T, kVec, decltype(tail)::value, kApplyRows,
                                                        kMinBlocksPerSm, decltype(folds)::value>;
            kernel<<<apply_grid(t, resident_blocks(kernel, t.block)), t.block, 0, stream_>>>(
                static_cast<const T*>(x.data()), coef, p.rows, p.channels,
                forward_tail<T>(p, residual, relu_mask, residual_coef), static_cast<T*>(y.data()),
                kForwardApplyReversed, folded);
          });
          CUDA_CHECK_LAUNCH();
        });
      });
}

void CudaBackend::batch_norm_forward_inference_impl(const BatchNormParams& p, const Tensor& x,
                                                    const Tensor& gamma, const Tensor& beta,
                                                    const Tensor& running_mean,
                                                    const Tensor& running_var, const Tensor& y,
                                                    const Tensor& residual) {
  const char* op = "batch_norm_forward_inference";
  activate();
  require_float(x, op, "x");
  require_tail_channels(p, op);
  for (const Tensor* t : {&x, &gamma, &beta, &y, &running_mean, &running_var})
    require_here(*t, op, "operand");
  if (residual.defined()) require_here(residual, op, "residual");
  if (p.rows == 0 || p.channels == 0) return;
  auto* coef = static_cast<float*>(workspace(sizeof(float) * p.channels * kCoefficients));
  bn_inference_coefficients_kernel<<<grid_for(p.channels), kBlock, 0, stream_>>>(
      gamma.data_as<float>(), beta.data_as<float>(), running_mean.data_as<float>(),
      running_var.data_as<float>(), p.channels, p.epsilon, coef);
  CUDA_CHECK_LAUNCH();
  dispatch_packs(
      x.dtype(), p.channels, {x.data(), y.data(), residual.data()}, op, [&](auto tag, auto vec) {
        using T = typename decltype(tag)::type;
        constexpr int kVec = decltype(vec)::value;
        const Tiling t = tiling(p, kVec);
        dispatch_bool(p.has_tail(), [&](auto tail) {
          const auto kernel = bn_forward_apply_kernel<T, kVec, decltype(tail)::value>;
          kernel<<<apply_grid(t, resident_blocks(kernel, t.block)), t.block, 0, stream_>>>(
              static_cast<const T*>(x.data()), coef, p.rows, p.channels,
              forward_tail<T>(p, residual, Tensor()), static_cast<T*>(y.data()), false,
              FoldedStatistics{});
          CUDA_CHECK_LAUNCH();
        });
      });
}

void CudaBackend::batch_norm_backward_impl(
    const BatchNormParams& p, const Tensor& x, const Tensor& dy, const Tensor& gamma,
    const Tensor& saved_mean, const Tensor& saved_inv_std, const Tensor& dx, const Tensor& dgamma,
    const Tensor& dbeta, GradMode grad_mode, const Tensor& relu_mask, const Tensor& dresidual,
    GradMode residual_mode, const Tensor& residual, const ResidualNorm& rn) {
  const char* op = "batch_norm_backward";
  activate();
  require_float(x, op, "x");
  require_tail_channels(p, op);
  for (const Tensor* t : {&x, &dy, &gamma, &saved_mean, &saved_inv_std, &dx, &dgamma, &dbeta})
    require_here(*t, op, "operand");
  for (const Tensor* t : {&relu_mask, &dresidual, &residual})
    if (t->defined()) require_here(*t, op, "tail operand");
  if (p.residual_norm)
    for (const Tensor* t : {&rn.gamma, &rn.saved_mean, &rn.saved_inv_std, &rn.dgamma, &rn.dbeta})
      require_here(*t, op, "the residual's batch norm operand");
  if (p.rows == 0 || p.channels == 0) return;
  const auto* mask = static_cast<const unsigned char*>(relu_mask.data());
  dispatch_packs(
      x.dtype(), p.channels, {x.data(), dy.data(), dx.data(), dresidual.data(), residual.data()},
      op, [&](auto tag, auto vec) {
        using T = typename decltype(tag)::type;
        constexpr int kVec = decltype(vec)::value;
        const Tiling t = tiling(p, kVec);
        const Chunking k = chunking(p, t, kBackwardPartialBlocks);
        // Coefficients and partials per batch norm: x's, then the residual's.
        const std::int64_t per_norm = p.channels * (kCoefficients + 2 * k.chunks);
        auto* coef =
            static_cast<float*>(workspace(sizeof(float) * per_norm * (p.residual_norm ? 2 : 1)));
        float* partial = coef + kCoefficients * p.channels;
        float* residual_coef = p.residual_norm ? coef + per_norm : nullptr;
        const auto* px = static_cast<const T*>(x.data());
        const auto* pdy = static_cast<const T*>(dy.data());
        const ResidualSums<T> pair{
            static_cast<const T*>(residual.data()),
            p.residual_norm ? rn.saved_mean.data_as<float>() : nullptr,
            p.residual_norm ? residual_coef + kCoefficients * p.channels : nullptr};
        const dim3 partial_grid(t.tiles, static_cast<unsigned>(k.chunks));
        auto sums = [&](auto relu, auto both) {
          bn_partial_kernel<T, kVec, SumKind::kBackward, decltype(relu)::value,
                            decltype(both)::value><<<partial_grid, t.block, 0, stream_>>>(
              px, pdy, saved_mean.data_as<float>(), mask, p.rows, p.channels, k.rows_per_chunk,
              partial, pair, kBackwardSumsReversed);
          CUDA_CHECK_LAUNCH();
        };
        dispatch_bool(mask != nullptr, [&](auto relu) {
          dispatch_bool(p.residual_norm, [&](auto both) { sums(relu, both); });
        });
        auto finalize = [&](const float* part, const BackwardChannels& ch, float* c) {
          bn_backward_finalize_kernel<<<finalize_blocks(p.channels), dim3(kLanes, kLanes), 0,
                                        stream_>>>(part, k.chunks, p.rows, p.channels, ch, c);
          CUDA_CHECK_LAUNCH();
        };
        finalize(partial,
                 {gamma.data_as<float>(), saved_mean.data_as<float>(),
                  saved_inv_std.data_as<float>(), dgamma.data_as<float>(), dbeta.data_as<float>()},
                 coef);
        if (p.residual_norm)
          finalize(pair.partial,
                   {rn.gamma.data_as<float>(), rn.saved_mean.data_as<float>(),
                    rn.saved_inv_std.data_as<float>(), rn.dgamma.data_as<float>(),
                    rn.dbeta.data_as<float>()},
                   residual_coef);
        const BackwardTail<T> tail_out{mask, static_cast<T*>(dresidual.data()),
                                       residual_mode == GradMode::kAccumulate, pair.x,
                                       residual_coef};
        dispatch_bool(p.has_tail(), [&](auto tail) {
          const auto kernel = bn_backward_apply_kernel<T, kVec, decltype(tail)::value>;
          kernel<<<apply_grid(t, resident_blocks(kernel, t.block)), t.block, 0, stream_>>>(
              px, pdy, coef, p.rows, p.channels, grad_mode == GradMode::kAccumulate, tail_out,
              static_cast<T*>(dx.data()));
          CUDA_CHECK_LAUNCH();
        });
      });
}

void CudaBackend::batch_norm_fold_impl(const BatchNormParams& p, const Tensor& w,
                                       const Tensor& bias, const Tensor& gamma, const Tensor& beta,
                                       const Tensor& running_mean, const Tensor& running_var,
                                       const Tensor& folded_w, const Tensor& folded_bias) {
  const char* op = "batch_norm_fold";
  activate();
  require_float(w, op, "w");
  for (const Tensor* t : {&w, &gamma, &beta, &running_mean, &running_var, &folded_w, &folded_bias})
    require_here(*t, op, "operand");
  if (bias.defined()) require_here(bias, op, "bias");
  if (w.numel() == 0) return;
  dispatch_float(w.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    bn_fold_kernel<T><<<grid_for(w.numel()), kBlock, 0, stream_>>>(
        static_cast<const T*>(w.data()), static_cast<const T*>(bias.data()),
        {gamma.data_as<float>(), beta.data_as<float>(), running_mean.data_as<float>(),
         running_var.data_as<float>()},
        p.channels, w.numel() / p.channels, p.epsilon, static_cast<T*>(folded_w.data()),
        static_cast<T*>(folded_bias.data()));
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace dlbench::backend::cuda

// Matmul (inner product) on cuBLASLt: forward with bias/ReLU epilogues, backward-data and
// backward-weights side by side.
//
//   y[m, n]  = act(x[m, k] · W[n, k]ᵀ + b[n])
//   dx[m, k] = dy[m, n] · W[n, k]
//   dW[n, k] = dy[m, n]ᵀ · x[m, k],   db[n] = sum_m dy[m, n]
//
// cuBLASLt is column-major: a row-major [r, c] matrix is, in the same memory, a column-major
// [c, r] matrix with leading dimension c, i.e. its transpose. So every product is computed
// transposed, with the operands swapped, and nothing is copied:
//   forward:          yᵀ[n, m]  = (W as col-major [k, n])ᵀ · (x as col-major [k, m])
//   backward-data:    dxᵀ[k, m] = (W as col-major [k, n])  · (dy as col-major [n, m])
//   backward-weights: dWᵀ[k, n] = (x as col-major [k, m])  · (dy as col-major [n, m])ᵀ
// The forward bias is a vector over the rows of yᵀ, which is what cuBLASLt's BIAS epilogue
// adds; ReLU is fused behind it. The bias gradient is our column-sum kernel. Backward-data's
// GELU gradient is cuBLASLt's DGELU epilogue, its auxiliary input the GELU's input laid out as
// dxᵀ (leading dimension k). The forward's GELU is GELU_BIAS, or GELU_AUX_BIAS writing the
// pre-activation as yᵀ (leading dimension n). cuBLASLt's GELU is the tanh form, as ours. D = alpha
// A·B + beta C with C = D: GradMode::kAccumulate is beta = 1. Compute types: strict f32 is
// CUBLAS_COMPUTE_32F (no TF32), kTf32 is 32F_FAST_TF32, and f16/bf16 inputs accumulate in f32
// (CUBLAS_COMPUTE_32F); the scale type is always f32.
#include <string>

#include "engine/backend/cuda/cuda_backend.h"

namespace dlbench::backend::cuda {
namespace {

// The workspace cuBLASLt's heuristic may plan for: split-K and stream-K kernels use it; 32 MiB
// is what cuBLAS itself reserves per stream on Hopper.
constexpr std::size_t kMatmulWorkspace = std::size_t{32} << 20;

cublasComputeType_t compute_type(DType dtype, MathMode math) {
  if (dtype == DType::kF32 && math == MathMode::kTf32) return CUBLAS_COMPUTE_32F_FAST_TF32;
  return CUBLAS_COMPUTE_32F;
}

// `aux`: the forward keeps GELU's input.
cublasLtEpilogue_t epilogue(MatmulDirection direction, const MatmulParams& p, bool aux) {
  if (direction == MatmulDirection::kBackwardData)
    return p.gelu_gradient ? CUBLASLT_EPILOGUE_DGELU : CUBLASLT_EPILOGUE_DEFAULT;
  if (direction != MatmulDirection::kForward) return CUBLASLT_EPILOGUE_DEFAULT;
  if (p.gelu) {
    if (p.bias) return aux ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_BIAS;
    return aux ? CUBLASLT_EPILOGUE_GELU_AUX : CUBLASLT_EPILOGUE_GELU;
  }
  const bool relu = p.activation == Activation::kRelu;
  if (p.bias) return relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  return relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT;
}

bool reads_or_writes_gelu_input(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS || e == CUBLASLT_EPILOGUE_GELU_AUX ||
         e == CUBLASLT_EPILOGUE_DGELU;
}

MatrixLayout layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols) {
  cublasLtMatrixLayout_t l{};
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, static_cast<std::uint64_t>(rows),
                                          static_cast<std::uint64_t>(cols), rows));
  return MatrixLayout(l);
}

template <class T>
void set_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                   const T& value) {
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)));
}

MatmulKey matmul_key(MatmulDirection direction, const MatmulParams& p, DType dtype, bool aux) {
  return {static_cast<std::int64_t>(direction),
          static_cast<std::int64_t>(dtype),
          static_cast<std::int64_t>(compute_type(dtype, p.math)),
          p.m,
          p.k,
          p.n,
          static_cast<std::int64_t>(epilogue(direction, p, aux)),
          0};
}

}  // namespace

MatmulPlan& CudaBackend::matmul_plan(MatmulDirection direction, const MatmulParams& p, DType dtype,
                                     bool aux) {
  return matmul_plan(matmul_key(direction, p, dtype, aux));
}

// Builds the descriptor and layouts for a key and asks the heuristic for its best algorithm.
MatmulPlan& CudaBackend::matmul_plan(const MatmulKey& key) {
  if (auto it = matmul_plans_.find(key); it != matmul_plans_.end()) return *it->second;
  const auto direction = static_cast<MatmulDirection>(key[0]);
  const auto dtype = static_cast<DType>(key[1]);
  const auto compute = static_cast<cublasComputeType_t>(key[2]);
  const std::int64_t m = key[3], k = key[4], n = key[5];
  const cudaDataType_t type = cuda_dtype(dtype, "matmul");

  auto plan = std::make_unique<MatmulPlan>();
  cublasLtMatmulDesc_t desc{};
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F));
  plan->desc = MatmulDesc(desc);
  cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  switch (direction) {
    case MatmulDirection::kForward:
      trans_a = CUBLAS_OP_T;
      plan->a = layout(type, k, n), plan->b = layout(type, k, m), plan->c = layout(type, n, m);
      break;
    case MatmulDirection::kBackwardData:
      plan->a = layout(type, k, n), plan->b = layout(type, n, m), plan->c = layout(type, k, m);
      break;
    case MatmulDirection::kBackwardWeights:
      trans_b = CUBLAS_OP_T;
      plan->a = layout(type, k, m), plan->b = layout(type, n, m), plan->c = layout(type, k, n);
      break;
  }
  set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, trans_a);
  set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, trans_b);
  const auto chosen = static_cast<cublasLtEpilogue_t>(key[6]);
  if (chosen != CUBLASLT_EPILOGUE_DEFAULT)
    set_attribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, chosen);
  // The GELU input is laid out as the output: yᵀ [n, m] forward, dxᵀ [k, m] backward-data.
  if (reads_or_writes_gelu_input(chosen))
    set_attribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                  direction == MatmulDirection::kForward ? n : k);

  MatmulPreference preference;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference,
                                                    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &kMatmulWorkspace, sizeof(kMatmulWorkspace)));
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(cublaslt_, desc, plan->a.get(), plan->b.get(),
                                              plan->c.get(), plan->c.get(), preference, 1, &result,
                                              &returned));
  if (returned == 0)
    throw Error(ErrorKind::kExternal,
                "cuBLASLt has no algorithm for a " + std::string(to_string(dtype)) + " matmul of " +
                    std::to_string(m) + "x" + std::to_string(k) + " by " + std::to_string(k) + "x" +
                    std::to_string(n),
                "check the CUDA version with `dlbench info`");
  plan->algorithm = result.algo;
  plan->workspace_bytes = result.workspaceSize;
  return *matmul_plans_.emplace(key, std::move(plan)).first->second;
}

void CudaBackend::run_matmul(MatmulPlan& plan, const void* a, const void* b, void* d, float beta,
                             const void* bias, void* ws, const void* c, const void* aux) {
  if (bias != nullptr) set_attribute(plan.desc.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  if (aux != nullptr)
    set_attribute(plan.desc.get(), CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux);
  const float alpha = 1.0f;
  CUBLAS_CHECK(cublasLtMatmul(cublaslt_, plan.desc.get(), &alpha, a, plan.a.get(), b, plan.b.get(),
                              &beta, c != nullptr ? c : d, plan.c.get(), d, plan.c.get(),
                              &plan.algorithm, ws, plan.workspace_bytes, stream_));
}

void CudaBackend::matmul_forward_impl(const MatmulParams& p, const Tensor& x, const Tensor& w,
                                      const Tensor& bias, const Tensor& y, const Tensor& pre) {
  const char* op = "matmul_forward";
  activate();
  require_float(x, op, "x"), require_here(x, op, "x"), require_here(w, op, "w");
  require_here(y, op, "y");
  if (p.bias) require_here(bias, op, "bias");
  if (pre.defined()) require_here(pre, op, "pre");
  MatmulPlan& plan = matmul_plan(MatmulDirection::kForward, p, x.dtype(), pre.defined());
  run_matmul(plan, w.data(), x.data(), y.data(), 0.0f, p.bias ? bias.data() : nullptr,
             workspace(plan.workspace_bytes), nullptr, pre.defined() ? pre.data() : nullptr);
}

void CudaBackend::matmul_backward_data_impl(const MatmulParams& p, const Tensor& dy,
                                            const Tensor& w, const Tensor& dx, GradMode mode,
                                            const Tensor& gelu_input) {
  const char* op = "matmul_backward_data";
  activate();
  require_float(dy, op, "dy"), require_here(dy, op, "dy"), require_here(w, op, "w");
  require_here(dx, op, "dx");
  if (p.gelu_gradient) require_here(gelu_input, op, "gelu_input");
  MatmulPlan& plan = matmul_plan(MatmulDirection::kBackwardData, p, dy.dtype());
  run_matmul(plan, w.data(), dy.data(), dx.data(), mode == GradMode::kAccumulate ? 1.0f : 0.0f,
             nullptr, workspace(plan.workspace_bytes), nullptr,
             p.gelu_gradient ? gelu_input.data() : nullptr);
}

void CudaBackend::matmul_backward_weights_impl(const MatmulParams& p, const Tensor& x,
                                               const Tensor& dy, const Tensor& dw,
                                               const Tensor& dbias, GradMode mode) {
  const char* op = "matmul_backward_weights";
  activate();
  require_float(x, op, "x"), require_same_dtype(x, dw, op, "dw");
  require_here(x, op, "x"), require_here(dy, op, "dy"), require_here(dw, op, "dw");
  MatmulPlan& plan = matmul_plan(MatmulDirection::kBackwardWeights, p, x.dtype());
  run_matmul(plan, x.data(), dy.data(), dw.data(), mode == GradMode::kAccumulate ? 1.0f : 0.0f,
             nullptr, workspace(plan.workspace_bytes));
  if (p.bias) {
    require_here(dbias, op, "dbias");
    column_sums(dy, p.m, p.n, dbias, mode, op);
  }
}

}  // namespace dlbench::backend::cuda

// The backend descriptors behind cudnn_graph.h: the owner, errors, tensors and operations.
// Attribute names and element types follow cuDNN's "Backend Descriptor Types" reference; a
// scalar attribute is passed as an array of one element.
#include "engine/backend/cuda/cudnn_graph.h"

#include <array>
#include <utility>

#include "engine/backend/cuda/cuda_check.h"
#include "engine/core/error.h"

namespace dlbench::backend::cuda {
// --- the descriptor -----------------------------------------------------------------------

BackendDescriptor::BackendDescriptor(cudnnBackendDescriptorType_t type, std::string name)
    : name_(std::move(name)) {
  const cudnnStatus_t status = cudnnBackendCreateDescriptor(type, &descriptor_);
  if (status != CUDNN_STATUS_SUCCESS)
    throw_graph_error("creating the " + name_ + " descriptor (type " + std::to_string(type) + ")",
                      status);
}

BackendDescriptor::~BackendDescriptor() {
  if (descriptor_ != nullptr) CUDNN_CHECK_NOTHROW(cudnnBackendDestroyDescriptor(descriptor_));
}

BackendDescriptor::BackendDescriptor(BackendDescriptor&& other) noexcept
    : descriptor_(std::exchange(other.descriptor_, nullptr)), name_(std::move(other.name_)) {}

BackendDescriptor& BackendDescriptor::operator=(BackendDescriptor&& other) noexcept {
  if (this != &other) {
    if (descriptor_ != nullptr) CUDNN_CHECK_NOTHROW(cudnnBackendDestroyDescriptor(descriptor_));
    descriptor_ = std::exchange(other.descriptor_, nullptr);
    name_ = std::move(other.name_);
  }
  return *this;
}

BackendDescriptor& BackendDescriptor::set(cudnnBackendAttributeName_t attribute,
                                          cudnnBackendAttributeType_t type, std::int64_t count,
                                          const void* values) {
  const cudnnStatus_t status =
      cudnnBackendSetAttribute(descriptor_, attribute, type, count, values);
  if (status != CUDNN_STATUS_SUCCESS)
    throw_graph_error("setting attribute " + std::to_string(attribute) + " (type " +
                          std::to_string(type) + ") of the " + name_ + " descriptor",
                      status);
  return *this;
}

BackendDescriptor& BackendDescriptor::set_int64(cudnnBackendAttributeName_t attribute,
                                                std::int64_t value) {
  return set(attribute, CUDNN_TYPE_INT64, 1, &value);
}
BackendDescriptor& BackendDescriptor::set_int64s(cudnnBackendAttributeName_t attribute,
                                                 std::span<const std::int64_t> values) {
  return set(attribute, CUDNN_TYPE_INT64, static_cast<std::int64_t>(values.size()), values.data());
}
BackendDescriptor& BackendDescriptor::set_float(cudnnBackendAttributeName_t attribute,
                                                float value) {
  return set(attribute, CUDNN_TYPE_FLOAT, 1, &value);
}
BackendDescriptor& BackendDescriptor::set_bool(cudnnBackendAttributeName_t attribute, bool value) {
  return set(attribute, CUDNN_TYPE_BOOLEAN, 1, &value);
}
BackendDescriptor& BackendDescriptor::set_data_type(cudnnBackendAttributeName_t attribute,
                                                    cudnnDataType_t value) {
  return set(attribute, CUDNN_TYPE_DATA_TYPE, 1, &value);
}
BackendDescriptor& BackendDescriptor::set_handle(cudnnBackendAttributeName_t attribute,
                                                 cudnnHandle_t handle) {
  return set(attribute, CUDNN_TYPE_HANDLE, 1, &handle);
}
BackendDescriptor& BackendDescriptor::set_descriptor(cudnnBackendAttributeName_t attribute,
                                                     const BackendDescriptor& value) {
  cudnnBackendDescriptor_t raw = value.get();
  return set(attribute, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
}
BackendDescriptor& BackendDescriptor::set_descriptors(
    cudnnBackendAttributeName_t attribute, std::span<const BackendDescriptor* const> values) {
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const BackendDescriptor* value : values) raw.push_back(value->get());
  return set(attribute, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<std::int64_t>(raw.size()),
             raw.data());
}
BackendDescriptor& BackendDescriptor::set_pointers(cudnnBackendAttributeName_t attribute,
                                                   std::span<void* const> values) {
  return set(attribute, CUDNN_TYPE_VOID_PTR, static_cast<std::int64_t>(values.size()),
             values.data());
}

void BackendDescriptor::finalize() {
  const cudnnStatus_t status = try_finalize();
  if (status != CUDNN_STATUS_SUCCESS)
    throw_graph_error("finalizing the " + name_ + " descriptor", status);
}

cudnnStatus_t BackendDescriptor::try_finalize() {
  return cudnnBackendFinalize(descriptor_);
}

// --- errors -------------------------------------------------------------------------------

void throw_graph_error(const std::string& action, cudnnStatus_t status) {
  throw_library_error("cuDNN graph", status_name(status), is_out_of_memory(status), action.c_str(),
                      __FILE__, __LINE__);
}

// --- tensors and operations ---------------------------------------------------------------

std::vector<std::int64_t> channels_last_strides(std::span<const std::int64_t> nchw) {
  DLBENCH_CHECK(nchw.size() >= 3, "channels-last strides need [N, C, spatial...] dims");
  // The channels are innermost, then the spatial dims from the last out, then the batch.
  std::vector<std::int64_t> strides(nchw.size());
  std::int64_t stride = nchw[1];
  strides[1] = 1;
  for (std::size_t i = nchw.size() - 1; i >= 2; --i) {
    strides[i] = stride;
    stride *= nchw[i];
  }
  strides[0] = stride;
  return strides;
}

BackendDescriptor make_tensor(const TensorSpec& spec) {
  DLBENCH_CHECK(spec.dims.size() == spec.strides.size(), "tensor '" + spec.name + "'");
  BackendDescriptor tensor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor '" + spec.name + "'");
  tensor.set_int64(CUDNN_ATTR_TENSOR_UNIQUE_ID, spec.uid)
      .set_data_type(CUDNN_ATTR_TENSOR_DATA_TYPE, spec.data_type)
      .set_int64s(CUDNN_ATTR_TENSOR_DIMENSIONS, spec.dims)
      .set_int64s(CUDNN_ATTR_TENSOR_STRIDES, spec.strides)
      .set_int64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, kTensorAlignment)
      .set_bool(CUDNN_ATTR_TENSOR_IS_VIRTUAL, spec.storage == Storage::kVirtual);
  if (spec.storage == Storage::kByValue) tensor.set_bool(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true);
  tensor.finalize();
  return tensor;
}

BackendDescriptor make_convolution(const Conv2dGeometry& g) {
  const std::array<std::int64_t, 2> pads{g.pad_h, g.pad_w};
  const std::array<std::int64_t, 2> strides{g.stride_h, g.stride_w};
  const std::array<std::int64_t, 2> dilations{g.dilation_h, g.dilation_w};
  return make_convolution(pads, strides, dilations);
}

BackendDescriptor make_convolution(std::span<const std::int64_t> pads,
                                   std::span<const std::int64_t> strides,
                                   std::span<const std::int64_t> dilations) {
  DLBENCH_CHECK(pads.size() == strides.size() && strides.size() == dilations.size(),
                "a convolution's pads, strides and dilations name the same dimensions");
  const auto kSpatialDims = static_cast<std::int64_t>(pads.size());
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  BackendDescriptor conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, "convolution");
  conv.set_data_type(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_DATA_FLOAT)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode)
      .set_int64(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, kSpatialDims)
      .set_int64s(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, pads)
      .set_int64s(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, pads)
      .set_int64s(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, strides)
      .set_int64s(CUDNN_ATTR_CONVOLUTION_DILATIONS, dilations)
      .finalize();
  return conv;
}

BackendDescriptor make_pointwise(cudnnPointwiseMode_t mode) {
  return make_pointwise(mode, CUDNN_DATA_FLOAT);
}

BackendDescriptor make_pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t compute,
                                 std::int64_t axis) {
  BackendDescriptor pointwise(CUDNN_BACKEND_POINTWISE_DESCRIPTOR,
                              "pointwise mode " + std::to_string(mode));
  pointwise.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
      .set_data_type(CUDNN_ATTR_POINTWISE_MATH_PREC, compute);
  if (axis >= 0) pointwise.set_int64(CUDNN_ATTR_POINTWISE_AXIS, axis);
  pointwise.finalize();
  return pointwise;
}

BackendDescriptor make_conv_forward_op(const BackendDescriptor& convolution,
                                       const BackendDescriptor& x, const BackendDescriptor& w,
                                       const BackendDescriptor& y, float beta) {
  // alpha and beta are float because the compute type is (double only for double compute).
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                       "convolution forward operation");
  op.set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, convolution)
      .set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x)
      .set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w)
      .set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y)
      .set_float(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, 1.0f)
      .set_float(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, beta)
      .finalize();
  return op;
}

BackendDescriptor make_conv_backward_data_op(const BackendDescriptor& convolution,
                                             const BackendDescriptor& dx,
                                             const BackendDescriptor& w,
                                             const BackendDescriptor& dy, float beta) {
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                       "convolution backward-data operation");
  op.set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, convolution)
      .set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, dx)
      .set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w)
      .set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, dy)
      .set_float(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, 1.0f)
      .set_float(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, beta)
      .finalize();
  return op;
}

BackendDescriptor make_conv_backward_filter_op(const BackendDescriptor& convolution,
                                               const BackendDescriptor& x,
                                               const BackendDescriptor& dw,
                                               const BackendDescriptor& dy, float beta) {
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
                       "convolution backward-filter operation");
  op.set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, convolution)
      .set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x)
      .set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, dw)
      .set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, dy)
      .set_float(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, 1.0f)
      .set_float(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, beta)
      .finalize();
  return op;
}

BackendDescriptor make_select_op(const BackendDescriptor& select, const BackendDescriptor& x,
                                 const BackendDescriptor& b, const BackendDescriptor& t,
                                 const BackendDescriptor& y) {
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "select operation");
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, select)
      .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x)
      .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b)
      .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t)
      .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y)
      .finalize();
  return op;
}

BackendDescriptor make_matmul(std::optional<double> padding) {
  BackendDescriptor matmul(CUDNN_BACKEND_MATMUL_DESCRIPTOR, "matmul");
  matmul.set_data_type(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT);
  if (padding) matmul.set(CUDNN_ATTR_MATMUL_PADDING_VALUE, CUDNN_TYPE_DOUBLE, 1, &*padding);
  matmul.finalize();
  return matmul;
}

BackendDescriptor make_matmul_op(const BackendDescriptor& matmul, const BackendDescriptor& a,
                                 const BackendDescriptor& b, const BackendDescriptor& c,
                                 const MatmulExtents& extents) {
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, "matmul operation");
  op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_DESC, matmul)
      .set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
      .set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
      .set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
  if (extents.m != nullptr)
    op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, *extents.m);
  if (extents.n != nullptr)
    op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, *extents.n);
  if (extents.k != nullptr)
    op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, *extents.k);
  op.finalize();
  return op;
}

BackendDescriptor make_reduction(cudnnReduceTensorOp_t operation) {
  BackendDescriptor reduction(CUDNN_BACKEND_REDUCTION_DESCRIPTOR,
                              "reduction " + std::to_string(operation));
  reduction.set_data_type(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT)
      .set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &operation)
      .finalize();
  return reduction;
}

BackendDescriptor make_reduction_op(const BackendDescriptor& reduction, const BackendDescriptor& x,
                                    const BackendDescriptor& y) {
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
                       "reduction operation (" + reduction.name() + ")");
  op.set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_DESC, reduction)
      .set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
      .set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
      .finalize();
  return op;
}

BackendDescriptor make_reshape_op(const BackendDescriptor& x, const BackendDescriptor& y) {
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, "reshape operation");
  op.set_descriptor(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x)
      .set_descriptor(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y)
      .finalize();
  return op;
}

BackendDescriptor make_gen_stats_op(const BackendDescriptor& x, const BackendDescriptor& sum,
                                    const BackendDescriptor& sqsum) {
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR, "statistics operation");
  const cudnnGenStatsMode_t mode = CUDNN_GENSTATS_SUM_SQSUM;
  op.set(CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, 1, &mode)
      .set_data_type(CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_DATA_FLOAT)
      .set_descriptor(CUDNN_ATTR_OPERATION_GENSTATS_XDESC, x)
      .set_descriptor(CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, sum)
      .set_descriptor(CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, sqsum)
      .finalize();
  return op;
}

BackendDescriptor make_pointwise_op(const BackendDescriptor& pointwise, const BackendDescriptor& x,
                                    const BackendDescriptor* b, const BackendDescriptor& y,
                                    float alpha2) {
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                       "pointwise operation (" + pointwise.name() + ")");
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pointwise)
      .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x)
      .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
  if (b != nullptr) op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
  if (alpha2 != 1.0f) op.set_float(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, alpha2);
  op.finalize();
  return op;
}

BackendDescriptor make_pointwise_backward_op(const BackendDescriptor& pointwise,
                                             const BackendDescriptor& dy,
                                             const BackendDescriptor& x,
                                             const BackendDescriptor& dx) {
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                       "pointwise backward operation (" + pointwise.name() + ")");
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pointwise)
      .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, dy)
      .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x)
      .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, dx)
      .finalize();
  return op;
}

BackendDescriptor make_bn_backward_weights_op(const BatchNormWeightGradients& t) {
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR,
                       "batch-norm weight-gradient operation");
  op.set_data_type(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MATH_PREC, CUDNN_DATA_FLOAT)
      .set_descriptor(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC, *t.x)
      .set_descriptor(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC, *t.dy)
      .set_descriptor(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC, *t.mean)
      .set_descriptor(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC, *t.invstd)
      .set_descriptor(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC, *t.scale)
      .set_descriptor(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC, *t.dscale)
      .set_descriptor(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC, *t.dbias)
      .set_descriptor(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC, *t.eq_dy_scale)
      .set_descriptor(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC, *t.eq_x_scale)
      .set_descriptor(CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS, *t.eq_bias)
      .finalize();
  return op;
}

}  // namespace dlbench::backend::cuda

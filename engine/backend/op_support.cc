#include "engine/backend/op_support.h"

namespace dlbench::backend {

const char* to_string(OpKind op) {
  switch (op) {
    case OpKind::kConvForward:
      return "conv_forward";
    case OpKind::kConvBackwardData:
      return "conv_backward_data";
    case OpKind::kConvBackwardWeights:
      return "conv_backward_weights";
    case OpKind::kBatchNormTraining:
      return "batch_norm_forward_training";
    case OpKind::kBatchNormInference:
      return "batch_norm_forward_inference";
    case OpKind::kBatchNormBackward:
      return "batch_norm_backward";
    case OpKind::kBatchNormFold:
      return "batch_norm_fold";
    case OpKind::kPoolForward:
      return "pool_forward";
    case OpKind::kPoolBackward:
      return "pool_backward";
    case OpKind::kMatmulForward:
      return "matmul_forward";
    case OpKind::kMatmulBackwardData:
      return "matmul_backward_data";
    case OpKind::kMatmulBackwardWeights:
      return "matmul_backward_weights";
    case OpKind::kActivationForward:
      return "activation_forward";
    case OpKind::kActivationBackward:
      return "activation_backward";
    case OpKind::kAdd:
      return "add";
    case OpKind::kAccumulate:
      return "accumulate";
    case OpKind::kMultiply:
      return "multiply";
    case OpKind::kSoftmaxCrossEntropy:
      return "softmax_cross_entropy";
    case OpKind::kSgdMomentumUpdate:
      return "sgd_momentum_update";
    case OpKind::kCast:
      return "cast";
    case OpKind::kAllFinite:
      return "all_finite";
    case OpKind::kFill:
      return "fill";
    case OpKind::kFillNormal:
      return "fill_normal";
    case OpKind::kFillUniformInt:
      return "fill_uniform_int";
    case OpKind::kCopy:
      return "copy";
    case OpKind::kEmbeddingForward:
      return "embedding_forward";
    case OpKind::kEmbeddingBackward:
      return "embedding_backward";
    case OpKind::kCopyColumns:
      return "copy_columns";
    case OpKind::kSigmoidBinaryCrossEntropy:
      return "sigmoid_binary_cross_entropy";
    case OpKind::kGeluForward:
      return "gelu_forward";
    case OpKind::kGeluBackward:
      return "gelu_backward";
    case OpKind::kLayerNormForward:
      return "layer_norm_forward";
    case OpKind::kLayerNormBackward:
      return "layer_norm_backward";
    case OpKind::kDropoutForward:
      return "dropout_forward";
    case OpKind::kDropoutBackward:
      return "dropout_backward";
    case OpKind::kSoftDice:
      return "soft_dice";
    case OpKind::kAdamUpdate:
      return "adam_update";
    case OpKind::kSampleNegatives:
      return "sample_negatives";
    case OpKind::kRowDotsForward:
      return "row_dots_forward";
    case OpKind::kRowDotsBackward:
      return "row_dots_backward";
    case OpKind::kSampleCandidates:
      return "sample_candidates";
    case OpKind::kSparseAdamUpdate:
      return "sparse_adam_update";
  }
  return "?";
}

}  // namespace dlbench::backend

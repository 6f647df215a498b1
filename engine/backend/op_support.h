// What a backend can run, asked before running it: a graph pass rewrites only into ops the
// backend supports, and a test skips (with the reason) what a backend does not have. The op
// doors still refuse what they cannot run; this is the question, not the check.
#pragma once

#include <string>
#include <variant>

#include "engine/backend/op_params.h"
#include "engine/core/dtype.h"

namespace dlbench::backend {

enum class OpKind {
  kConvForward,
  kConvBackwardData,
  kConvBackwardWeights,
  kBatchNormTraining,
  kBatchNormInference,
  kBatchNormBackward,
  kBatchNormFold,
  kPoolForward,
  kPoolBackward,
  kMatmulForward,
  kMatmulBackwardData,
  kMatmulBackwardWeights,
  kActivationForward,
  kActivationBackward,
  kAdd,
  kAccumulate,
  kMultiply,
  kSoftmaxCrossEntropy,
  kSgdMomentumUpdate,
  kCast,
  kAllFinite,
  kFill,
  kFillNormal,
  kFillUniformInt,
  kCopy,
  kEmbeddingForward,
  kEmbeddingBackward,
  kCopyColumns,
  kSigmoidBinaryCrossEntropy,
  kAdamUpdate,
  kSparseAdamUpdate,
  kSampleNegatives,
  kRowDotsForward,
  kRowDotsBackward,
  kSampleCandidates,
  kSoftDice,
  kGeluForward,
  kGeluBackward,
  kLayerNormForward,
  kLayerNormBackward,
  kDropoutForward,
  kDropoutBackward,
  kAttentionForward,
  kAttentionBackward,
  kTanhForward,
  kTanhBackward,
  kPositionalEncoding,
  kLstmForward,
  kLstmBackward,
  kReverseSequences,
  kSumSquares,
  kAdditiveAttentionForward,
  kAdditiveAttentionBackward,
  kFillUniform,
  kGreedyPick,
  kBeamPick,
};
// The last kind: tests walk every kind up to it.
constexpr OpKind kLastOpKind = OpKind::kBeamPick;
const char* to_string(OpKind op);

// The parameters that decide support, where an op has them (a matmul's epilogue, say).
using OpParams = std::variant<std::monostate, ConvParams, BatchNormParams, PoolParams, MatmulParams,
                              Activation, SgdParams, AdamParams, SoftDiceParams, AttentionParams,
                              LstmParams, AdditiveAttentionParams>;

struct Support {
  bool supported = true;
  std::string reason;  // why not, in words: "the CPU backend computes in f32"
  explicit operator bool() const { return supported; }
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

}  // namespace dlbench::backend

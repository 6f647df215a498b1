// Decoding on the GPU: a small GNMT decodes one position at a time on CUDA (device graphs
// replaying its steps), and the whole-sentence graph on the same GPU, fed the decoded tokens as
// its target, scores each of them highest with greedy decoding, and among its beam best with a
// beam of 4 (within the precision's rounding), in fp32, fp16 and bf16. Labelled gpu.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/memory.h"
#include "engine/models/registry.h"
#include "engine/nn/sequence_decoder.h"
#include "engine/nn/trainer.h"

namespace dlbench {
namespace {

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

class DecodingGpuTest : public ::testing::TestWithParam<std::tuple<Precision, int>> {};

TEST_P(DecodingGpuTest, EachTokenIsAmongWhatTheWholeSentenceGraphScoresBest) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const auto [precision, beam] = GetParam();
  auto be = backend::make_backend(Device::cuda(0));
  const models::ModelSpec& spec = models::find_model("gnmt");
  constexpr std::int64_t kBatch = 5, kSteps = 16, kVocabulary = 32320;
  models::ModelConfig mc;
  mc.batch = kBatch, mc.size = kSteps, mc.width_divisor = 16, mc.mode = Mode::kInfer;
  mc.compute = compute_dtype(precision);
  mc = models::resolve(spec, mc);
  nn::TrainerConfig config;
  config.mode = Mode::kInfer;
  config.precision = precision;
  // Weights wider than the model's own start, so that sentences and positions differ.
  nn::Trainer scorer(spec.build(mc), *be, config);
  Buffer weights(be->allocator(), static_cast<std::size_t>(scorer.parameter_count()) * 4);
  const Tensor w(weights.data(), {scorer.parameter_count()}, DType::kF32, be->device());
  be->fill_uniform(w, -0.5f, 0.5f, 77);
  scorer.load_weights(w);
  nn::SequenceDecoder decoder(spec.build_decoding(mc, beam), *be, config);
  decoder.load_weights(scorer);

  const std::vector<std::int32_t> lengths = {16, 3, 9, 1, 12};
  std::vector<std::int32_t> source(kBatch * kSteps, 0);
  for (std::int64_t t = 0; t < kSteps; ++t)
    for (std::int64_t n = 0; n < kBatch; ++n)
      if (t < lengths[n]) source[t * kBatch + n] = static_cast<std::int32_t>(10 + 7 * t + 3 * n);
  be->from_host(source.data(), decoder.inputs()[0]);
  be->from_host(lengths.data(), decoder.inputs()[1]);
  for (int i = 0; i < 3; ++i) decoder.decode();  // the second and third replay device graphs
  ASSERT_EQ(decoder.positions(), kSteps);
  std::vector<std::int32_t> decoded(kBatch * kSteps);
  be->to_host(decoder.tokens(), decoded.data());

  std::vector<std::int32_t> target(kBatch * kSteps, 1);  // [BOS], then the decoded tokens
  for (std::size_t i = kBatch; i < target.size(); ++i) target[i] = decoded[i - kBatch];
  be->from_host(source.data(), scorer.inputs()[0]);
  be->from_host(lengths.data(), scorer.inputs()[1]);
  be->from_host(target.data(), scorer.inputs()[2]);
  scorer.infer_step();
  const Tensor logits = scorer.logits();
  std::vector<float> scores(static_cast<std::size_t>(logits.numel()));
  if (logits.dtype() == DType::kF32) {
    be->to_host(logits, scores.data());
  } else {
    Buffer f32(be->allocator(), scores.size() * 4);
    const Tensor cast(f32.data(), logits.shape(), DType::kF32, be->device());
    be->cast(logits, cast);
    be->to_host(cast, scores.data());
  }
  // Scores reach about 10 here: fp32 rounds to 1e-6 of that, fp16 and bf16 to 1e-2 and 1e-1
  // (the step graph's products and the whole-sentence graph's are shaped differently).
  const float tolerance = precision == Precision::kFp32   ? 1e-3f
                          : precision == Precision::kFp16 ? 0.05f
                                                          : 0.25f;
  for (std::size_t row = 0; row < decoded.size(); ++row) {
    const float* s = scores.data() + row * kVocabulary;
    const float chosen = s[decoded[row]];
    const auto above =
        std::count_if(s, s + kVocabulary, [&](float v) { return v > chosen + tolerance; });
    EXPECT_LT(above, beam) << "position " << row / kBatch << " of sentence " << row % kBatch;
  }
  EXPECT_GT(std::set<std::int32_t>(decoded.begin(), decoded.end()).size(), 5u);
  EXPECT_EQ(decoder.graph_status().rfind("on", 0), 0u) << decoder.graph_status();
}

INSTANTIATE_TEST_SUITE_P(Searches, DecodingGpuTest,
                         ::testing::Combine(::testing::Values(Precision::kFp32, Precision::kFp16,
                                                              Precision::kBf16),
                                            ::testing::Values(1, 4)),
                         [](const auto& info) {
                           return std::string(to_string(std::get<0>(info.param))) + "_beam" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace dlbench

// Layer cases: every layer's backward against central finite differences of its forward
// (tests/ops/harness/layer_case.h), on tiny shapes: convolution, transposed convolution, batch norm
// (also with its fused tails), ReLU, pooling, Add, Linear, and the layers of the sparse-ids
// contract (Embedding with repeated ids, SplitColumns, the SigmoidBinaryCrossEntropy loss).
#include <cmath>
#include <memory>

#include "engine/nn/layers/add.h"
#include "engine/nn/layers/attention.h"
#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/concat_columns.h"
#include "engine/nn/layers/conv_transpose.h"
#include "engine/nn/layers/convolution.h"
#include "engine/nn/layers/embedding.h"
#include "engine/nn/layers/gelu.h"
#include "engine/nn/layers/instance_norm.h"
#include "engine/nn/layers/layer_norm.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/layers/multiply.h"
#include "engine/nn/layers/pool.h"
#include "engine/nn/layers/positional_encoding.h"
#include "engine/nn/layers/relu.h"
#include "engine/nn/layers/row_dots.h"
#include "engine/nn/layers/select_position.h"
#include "engine/nn/layers/split_columns.h"
#include "engine/nn/layers/tanh.h"
#include "engine/nn/losses/sigmoid_binary_cross_entropy.h"
#include "engine/nn/losses/soft_dice.h"
#include "engine/nn/losses/softmax_cross_entropy.h"
#include "tests/ops/harness/layer_case.h"

namespace dlbench::op_harness {
namespace {

using nn::Layer;

backend::ConvParams conv(int n, int h, int c, int k, int r, int stride, int pad, bool bias) {
  backend::ConvParams p;
  p.n = n, p.h = p.w = h, p.c = c, p.k = k, p.r = p.s = r;
  p.stride_h = p.stride_w = stride, p.pad_h = p.pad_w = pad, p.bias = bias;
  return p;
}

template <typename L, typename... Args>
std::function<std::unique_ptr<Layer>()> make(Args... args) {
  return [=] { return std::unique_ptr<Layer>(std::make_unique<L>(args...)); };
}

// The layer with a ReLU folded into its op, as the fuse_*_relu passes leave it.
template <typename L, typename OpParams>
LayerCase with_relu_epilogue(const char* layer, const char* params, OpParams p, Shape input,
                             backend::OpKind op) {
  LayerCase c{layer,
              params,
              [p] {
                auto l = std::make_unique<L>(p);
                l->fuse_relu(Mode::kTrain);
                return std::unique_ptr<Layer>(std::move(l));
              },
              {std::move(input)},
              {},
              {},
              true};
  p.activation = backend::Activation::kRelu;
  c.needs = nn::ReluEpilogue{op, p};
  return c;
}

// The transposed convolution by its definition: each input voxel scatters its channels through
// the kernel into a stride-spaced window of the output, y[n, o*sd + e, i*sh + a, j*sw + b, c]
// += x[n, o, i, j, k] W[k, e, a, b, c] (`p`: the convolution it transposes, no padding; 2D is
// depth 1).
std::vector<std::vector<float>> conv_transpose_reference(
    const backend::ConvParams& p, const std::vector<std::vector<float>>& inputs,
    const std::vector<std::vector<float>>& params) {
  const std::vector<float>&x = inputs[0], &w = params[0];
  std::vector<float> y(static_cast<std::size_t>(p.input_shape().numel()), 0.0f);
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t o = 0; o < p.out_d(); ++o)
      for (std::int64_t i = 0; i < p.out_h(); ++i)
        for (std::int64_t j = 0; j < p.out_w(); ++j)
          for (std::int64_t k = 0; k < p.k; ++k)
            for (std::int64_t e = 0; e < p.t; ++e)
              for (std::int64_t a = 0; a < p.r; ++a)
                for (std::int64_t b = 0; b < p.s; ++b)
                  for (std::int64_t c = 0; c < p.c; ++c) {
                    const std::int64_t z = o * p.stride_d + e, row = i * p.stride_h + a,
                                       col = j * p.stride_w + b;
                    y[(((n * p.d + z) * p.h + row) * p.w + col) * p.c + c] +=
                        x[(((n * p.out_d() + o) * p.out_h() + i) * p.out_w() + j) * p.k + k] *
                        w[(((k * p.t + e) * p.r + a) * p.s + b) * p.c + c];
                  }
  return {y};
}

LayerCase conv_transpose_case(const char* params, const backend::ConvParams& p) {
  return {p.volumetric() ? "conv_transpose3d" : "conv_transpose2d",
          params,
          make<nn::ConvTranspose>(p),
          {p.output_shape()},
          {},
          {},
          false,
          0,
          std::nullopt,
          [p](const auto& inputs, const auto& weights) {
            return conv_transpose_reference(p, inputs, weights);
          }};
}

// Instance norm by its definition: per sample and channel, (x - mean) / sqrt(var + 1e-5) over the
// sample's positions (biased variance), then gamma and beta.
std::vector<std::vector<float>> instance_norm_reference(
    const Shape& shape, const std::vector<std::vector<float>>& inputs,
    const std::vector<std::vector<float>>& params) {
  const std::vector<float>&x = inputs[0], &gamma = params[0], &beta = params[1];
  const std::int64_t samples = shape[0], channels = shape[shape.rank() - 1];
  const std::int64_t positions = shape.numel() / (samples * channels);
  std::vector<float> y(x.size());
  for (std::int64_t n = 0; n < samples; ++n)
    for (std::int64_t c = 0; c < channels; ++c) {
      auto at = [&](std::int64_t q) {
        return static_cast<std::size_t>((n * positions + q) * channels + c);
      };
      double sum = 0, squares = 0;
      for (std::int64_t q = 0; q < positions; ++q) sum += x[at(q)];
      const double mean = sum / static_cast<double>(positions);
      for (std::int64_t q = 0; q < positions; ++q) squares += (x[at(q)] - mean) * (x[at(q)] - mean);
      const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(positions) + 1e-5);
      for (std::int64_t q = 0; q < positions; ++q)
        y[at(q)] = static_cast<float>(gamma[c] * (x[at(q)] - mean) * inv_std + beta[c]);
    }
  return {y};
}

// Rows of each input's last axis side by side.
std::vector<std::vector<float>> concat_reference(const std::vector<Shape>& shapes,
                                                 const std::vector<std::vector<float>>& inputs) {
  const std::int64_t rows = shapes[0].numel() / shapes[0][shapes[0].rank() - 1];
  std::vector<float> y;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const std::int64_t width = shapes[k][shapes[k].rank() - 1];
      y.insert(y.end(), inputs[k].begin() + r * width, inputs[k].begin() + (r + 1) * width);
    }
  return {y};
}

LayerCase concat_case(const char* params, std::vector<Shape> shapes) {
  const int n = static_cast<int>(shapes.size());
  return {"concat_columns",
          params,
          make<nn::ConcatColumns>(n),
          shapes,
          {},
          {},
          true,
          0,
          std::nullopt,
          [shapes](const auto& inputs, const auto&) { return concat_reference(shapes, inputs); }};
}

std::vector<LayerCase> dense_layers() {
  std::vector<LayerCase> out;
  out.push_back({"conv2d",
                 "3x3_padded",
                 make<nn::Convolution>(conv(2, 5, 3, 4, 3, 1, 1, false)),
                 {{2, 5, 5, 3}},
                 {},
                 {},
                 false});
  out.push_back({"conv2d",
                 "strided_with_bias",
                 make<nn::Convolution>(conv(2, 6, 2, 3, 3, 2, 1, true)),
                 {{2, 6, 6, 2}},
                 {},
                 {},
                 true});

  // U-Net's upsampling (2x2 at stride 2: each output from one tap), and overlapping taps (3x3
  // at stride 2). Input gradients overwrite only (the layer says so), hence no accumulate pass.
  out.push_back(
      conv_transpose_case("2x2_stride2", nn::ConvTranspose::upsampling({2, 3, 3, 4}, 3, 2, 2)));
  out.push_back(conv_transpose_case("3x3_stride2_overlapping",
                                    nn::ConvTranspose::upsampling({1, 3, 3, 2}, 3, 3, 2)));
  // 3D U-Net's: 2x2x2 at stride 2 on a non-cubic input, and overlapping 3x3x3 taps.
  out.push_back(conv_transpose_case("2x2x2_stride2",
                                    nn::ConvTranspose::upsampling({2, 2, 3, 2, 4}, 3, 2, 2)));
  out.push_back(conv_transpose_case("3x3x3_stride2_overlapping",
                                    nn::ConvTranspose::upsampling({1, 2, 2, 3, 2}, 2, 3, 2)));
  // A 3D convolution, strided, through the layer (the op's own cases are in conv_cases.cc).
  backend::ConvParams c3 = conv(2, 5, 2, 3, 3, 2, 1, true);
  c3.spatial_dims = 3, c3.d = 4, c3.t = 3, c3.stride_d = 2, c3.pad_d = 1;
  out.push_back(
      {"conv3d", "strided_with_bias", make<nn::Convolution>(c3), {c3.input_shape()}, {}, {}, true});
  // Instance norm: each sample normalized over its own voxels, gamma's and beta's gradients
  // summed over the samples (three, so a later sample adds to an earlier one's twice).
  const Shape volumes{3, 2, 3, 2, 4};
  out.push_back({"instance_norm",
                 "three_volumes",
                 make<nn::InstanceNorm>(volumes),
                 {volumes},
                 {},
                 {},
                 true,
                 0,
                 std::nullopt,
                 [volumes](const auto& inputs, const auto& params) {
                   return instance_norm_reference(volumes, inputs, params);
                 }});

  backend::BatchNormParams bn;
  bn.rows = 2 * 3 * 3, bn.channels = 4;
  out.push_back({"batch_norm", "training", make<nn::BatchNorm>(bn), {{2, 3, 3, 4}}, {}, {}, true});

  out.push_back({"relu", "3x7", make<nn::Relu>(), {{3, 7}}, {}, {}, true});
  out.push_back({"gelu", "3x7", make<nn::Gelu>(), {{3, 7}}, {}, {}, true});
  out.push_back({"tanh", "3x7", make<nn::Tanh>(), {{3, 7}}, {}, {}, true});
  // The Transformer's embedding scale and positions: two sequences of 3 rows, 4 wide.
  out.push_back({"positional_encoding",
                 "2x3x4_scaled",
                 make<nn::PositionalEncoding>(3, 2.0f),
                 {{6, 4}},
                 {},
                 {},
                 true});
  // Layer norm over the last dimension of [batch, sequence, hidden].
  const Shape tokens{2, 3, 5};
  out.push_back(
      {"layer_norm", "2x3x5", make<nn::LayerNorm>(tokens, 1e-5f), {tokens}, {}, {}, true});

  // Attention over padded sequences (one length per sample for queries and keys, causal), and
  // cross-attention (lengths of its own for each side): q, k and v each probed, the lengths
  // fixed. Accumulate mode is not asked: the layer writes all three gradients in one mode.
  backend::AttentionParams self;
  self.batch = 2, self.heads = 2, self.seq_q = self.seq_kv = 3, self.head_dim = 2;
  self.scale = 0.7f, self.causal = true;
  const Shape self_tokens{6, 4};
  out.push_back({"attention",
                 "self_causal_padded",
                 make<nn::Attention>(self, nn::AttentionLengths::kShared),
                 {self_tokens, self_tokens, self_tokens, {2}},
                 {{3, {3, 2}}},
                 {3}});
  backend::AttentionParams cross = self;
  cross.seq_kv = 4, cross.causal = false;
  out.push_back({"attention",
                 "cross_padded",
                 make<nn::Attention>(cross, nn::AttentionLengths::kSeparate),
                 {self_tokens, {8, 4}, {8, 4}, {2}, {2}},
                 {{3, {3, 1}}, {4, {4, 2}}},
                 {3, 4}});

  backend::PoolParams max;
  max.kind = backend::PoolKind::kMax;
  max.n = 2, max.h = max.w = 5, max.c = 3, max.window_h = max.window_w = 3;
  max.stride_h = max.stride_w = 2, max.pad_h = max.pad_w = 1;
  out.push_back({"pool", "max_3x3_stride2", make<nn::Pool>(max), {{2, 5, 5, 3}}, {}, {}, true});
  // 3D with 2x2x2 windows: 27-element windows of random values hold near-ties that finite
  // differences step across (the op harness checks the overlapping 3x3x3 case against its
  // reference instead).
  backend::PoolParams max3d;
  max3d.spatial_dims = 3, max3d.n = 2, max3d.d = 4, max3d.h = max3d.w = 5, max3d.c = 3;
  max3d.window_d = max3d.window_h = max3d.window_w = 2;
  max3d.stride_d = max3d.stride_h = max3d.stride_w = 2;
  out.push_back(
      {"pool3d", "max_2x2x2_stride2", make<nn::Pool>(max3d), {{2, 4, 5, 5, 3}}, {}, {}, true});
  out.push_back({"pool",
                 "global_average",
                 make<nn::Pool>(backend::PoolParams::global_average(2, 3, 3, 4)),
                 {{2, 3, 3, 4}},
                 {},
                 {},
                 false});

  // The gradient goes to both inputs.
  out.push_back({"add", "two_inputs", make<nn::Add>(), {{2, 3, 4}, {2, 3, 4}}, {}, {}, true});
  out.push_back(
      {"multiply", "two_inputs", make<nn::Multiply>(), {{2, 3, 4}, {2, 3, 4}}, {}, {}, true});
  // Word2Vec's scores: 3 rows of width 4 against 1 + 2 candidates each.
  out.push_back({"row_dots",
                 "3_rows_3_candidates",
                 make<nn::RowDots>(3, 3, 4),
                 {{3, 4}, {9, 4}},
                 {},
                 {},
                 true});
  // Three blocks of different widths; each input's gradient is its own columns of dy. Then U-Net's
  // skip connection: NHWC activations joined along their channels.
  out.push_back(concat_case("three_inputs", {{3, 2}, {3, 5}, {3, 1}}));
  out.push_back(concat_case("nhwc_channels", {{2, 2, 3, 3}, {2, 2, 3, 2}}));

  backend::MatmulParams fc;
  fc.m = 3, fc.k = 5, fc.n = 4, fc.bias = true;
  out.push_back({"linear", "with_bias", make<nn::Linear>(fc), {{3, 5}}, {}, {}, true});
  backend::MatmulParams flat;
  flat.m = 2, flat.k = 2 * 2 * 3, flat.n = 3, flat.bias = true;
  out.push_back(
      {"linear", "flattens_an_nhwc_input", make<nn::Linear>(flat), {{2, 2, 2, 3}}, {}, {}, false});

  // A ReLU epilogue: the ReLU's backward runs in place on the output gradient first. Few
  // outputs, each a sum of many taps, so none sits within a probe's step of the ReLU's kink.
  out.push_back(with_relu_epilogue<nn::Convolution>("conv2d+relu", "3x3_deep_with_bias",
                                                    conv(1, 3, 8, 2, 3, 1, 1, true), {1, 3, 3, 8},
                                                    backend::OpKind::kConvForward));
  out.push_back(with_relu_epilogue<nn::Linear>("linear+relu", "with_bias", fc, {3, 5},
                                               backend::OpKind::kMatmulForward));

  // Batch norm's tails (fuse_bn_relu, fuse_bn_add_relu): backward reads the ReLU's bits. Eight
  // channels, as the CUDA kernels need. A probe of gamma or beta moves a whole channel, and one
  // that carries an output across the ReLU's kink (0 +- the probe's step) measures the kink, not
  // the gradient: these inputs have no output that close (at [2, 2, 2, 8] one has).
  backend::BatchNormParams bn8;
  bn8.rows = 2 * 3 * 3, bn8.channels = 8;
  out.push_back(with_relu_epilogue<nn::BatchNorm>("batch_norm+relu", "training", bn8, {2, 3, 3, 8},
                                                  backend::OpKind::kBatchNormTraining));
  LayerCase tail{"batch_norm+add+relu",
                 "training",
                 [bn8] {
                   auto l = std::make_unique<nn::BatchNorm>(bn8);
                   l->fuse_residual_relu(Mode::kTrain);
                   return std::unique_ptr<Layer>(std::move(l));
                 },
                 {{2, 3, 3, 8}, {2, 3, 3, 8}},
                 {},
                 {},
                 true};
  tail.needs = nn::BatchNorm(bn8).residual_relu_epilogue();
  out.push_back(std::move(tail));
  // A downsampling tail (fuse_dual_bn_add_relu): the residual normalized by a batch norm of its
  // own, whose gamma and beta are probed as well.
  LayerCase dual{"dual_batch_norm+add+relu",
                 "training",
                 [bn8] {
                   auto l = std::make_unique<nn::BatchNorm>(bn8);
                   l->fuse_normalized_residual_relu(Mode::kTrain);
                   return std::unique_ptr<Layer>(std::move(l));
                 },
                 {{2, 3, 3, 8}, {2, 3, 3, 8}},
                 {},
                 {},
                 true};
  dual.needs = nn::BatchNorm(bn8).normalized_residual_relu_epilogue(nn::BatchNorm(bn8));
  out.push_back(std::move(dual));
  return out;
}
DLBENCH_LAYER_CASES(dense_layers);

// Every probed gradient of these tiny f32 layers agrees with central differences this closely.
constexpr double kGradientTolerance = 1e-2;

std::vector<LayerCase> sparse_layers() {
  std::vector<LayerCase> out;
  // Two lookups of one table, left {0, 2, 2, 1} then right {2, 3, 0, 2}, as one of 8 ids: row 4
  // is read by no id (its gradient must stay 0); rows 0 and 2 more than once, across the two
  // lookups too. Accumulate: a later user of the shared table adds its rows' gradients.
  LayerCase embedding{"embedding",
                      "shared_table_repeated_ids",
                      make<nn::Embedding>(nn::EmbeddingShape{8, 5, 3}, DType::kF32, 0.5f),
                      {{8}},
                      {{0, {0, 2, 2, 1, 2, 3, 0, 2}}},
                      {0},
                      true,
                      kGradientTolerance};
  out.push_back(std::move(embedding));
  // A node with two outputs: both blocks' gradients go back into their columns of dx.
  out.push_back({"split_columns",
                 "2_4_of_6",
                 make<nn::SplitColumns>(std::vector<std::int64_t>{2, 4}),
                 {{4, 6}},
                 {},
                 {},
                 true,
                 kGradientTolerance});
  // One position of each of 3 sequences of 4 (the first, BERT's [CLS], and the last): the other
  // rows' gradients are 0, and accumulate mode leaves them as they were.
  for (std::int64_t position : {0, 3})
    out.push_back({"select_position",
                   position == 0 ? "first_of_3x4" : "last_of_3x4",
                   make<nn::SelectPosition>(4, position),
                   {{12, 5}},
                   {},
                   {},
                   true,
                   kGradientTolerance,
                   std::nullopt,
                   [position](const auto& inputs, const auto&) {
                     std::vector<float> y;
                     for (std::int64_t n = 0; n < 3; ++n) {
                       const auto row = inputs[0].begin() + (n * 4 + position) * 5;
                       y.insert(y.end(), row, row + 5);
                     }
                     return std::vector<std::vector<float>>{y};
                   }});
  // The loss of logits [4, 1] against targets of both kinds.
  out.push_back({"sigmoid_binary_cross_entropy",
                 "4_rows",
                 make<nn::SigmoidBinaryCrossEntropy>(),
                 {{4, 1}, {4, 1}},
                 {{1, {1, 0, 0, 1}}},
                 {},
                 false,
                 kGradientTolerance});
  // Segmentation's losses over NHWC scores per pixel against a label per pixel (two samples of
  // 2 x 3 pixels, 3 classes). Cross-entropy's reference: the mean of log-sum-exp minus the
  // label's score. Dice's (the background left out): 1 - the mean over samples and classes 1, 2
  // of (2 sum q g + s) / (sum q + sum g + s).
  const std::vector<float> pixel_labels = {0, 2, 1, 1, 0, 2, 2, 2, 0, 1, 0, 1};
  auto pixel_loss = [&](const char* name, std::function<std::unique_ptr<Layer>()> layer,
                        std::function<double(const std::vector<float>& z)> loss,
                        const char* params = "nhwc_pixels") {
    out.push_back({name,
                   params,
                   std::move(layer),
                   {{2, 2, 3, 3}, {2, 2, 3}},
                   {{1, pixel_labels}},
                   {1},
                   false,
                   kGradientTolerance,
                   std::nullopt,
                   [loss](const auto& inputs, const auto&) {
                     return std::vector<std::vector<float>>{{static_cast<float>(loss(inputs[0]))}};
                   }});
  };
  // Softmax probability of class c in pixel r.
  auto prob = [](const std::vector<float>& z, int r, int c) {
    double sum = 0;
    for (int j = 0; j < 3; ++j) sum += std::exp(z[3 * r + j]);
    return std::exp(z[3 * r + c]) / sum;
  };
  pixel_loss("softmax_cross_entropy", make<nn::SoftmaxCrossEntropy>(),
             [pixel_labels, prob](const std::vector<float>& z) {
               double total = 0;
               for (int r = 0; r < 12; ++r)
                 total -= std::log(prob(z, r, static_cast<int>(pixel_labels[r])));
               return total / 12;
             });
  // With class weights: PyTorch's weighted mean, sum w[label] (-log p[label]) / sum w[label].
  const std::vector<float> weights = {0.5f, 3.0f, 1.25f};
  pixel_loss(
      "softmax_cross_entropy", make<nn::SoftmaxCrossEntropy>(weights),
      [pixel_labels, prob, weights](const std::vector<float>& z) {
        double total = 0, weight = 0;
        for (int r = 0; r < 12; ++r) {
          const auto label = static_cast<int>(pixel_labels[r]);
          total -= weights[label] * std::log(prob(z, r, label));
          weight += weights[label];
        }
        return total / weight;
      },
      "nhwc_pixels_class_weights");
  // A masked-token loss: per-token scores [2, 3, 3] against labels [2, 3] of which two are
  // ignored (-100), smoothed by 0.1: the mean over the four counted tokens of
  // -sum_j (0.9 [j == label] + 0.1 / 3) log q_j.
  const std::vector<float> token_labels = {2, -100, 0, 1, 1, -100};
  backend::CrossEntropyParams smoothed;
  smoothed.label_smoothing = 0.1f;
  out.push_back({"softmax_cross_entropy",
                 "tokens_ignored_smoothed",
                 make<nn::SoftmaxCrossEntropy>(smoothed),
                 {{2, 3, 3}, {2, 3}},
                 {{1, token_labels}},
                 {1},
                 false,
                 kGradientTolerance,
                 std::nullopt,
                 [token_labels, prob](const auto& inputs, const auto&) {
                   double total = 0;
                   for (int r = 0; r < 6; ++r) {
                     const auto label = static_cast<int>(token_labels[r]);
                     if (label < 0) continue;
                     for (int j = 0; j < 3; ++j)
                       total -=
                           ((j == label ? 0.9 : 0.0) + 0.1 / 3) * std::log(prob(inputs[0], r, j));
                   }
                   return std::vector<std::vector<float>>{{static_cast<float>(total / 4)}};
                 }});
  pixel_loss("soft_dice", make<nn::SoftDice>(1), [pixel_labels, prob](const std::vector<float>& z) {
    double mean = 0;
    for (int n = 0; n < 2; ++n)
      for (int c = 1; c < 3; ++c) {
        double inter = 0, pred = 0, truth = 0;
        for (int r = 6 * n; r < 6 * n + 6; ++r) {
          const double q = prob(z, r, c), g = static_cast<int>(pixel_labels[r]) == c ? 1 : 0;
          inter += q * g, pred += q, truth += g;
        }
        mean += (2 * inter + 1e-6) / (pred + truth + 1e-6) / 4;
      }
    return 1 - mean;
  });
  return out;
}
DLBENCH_LAYER_CASES(sparse_layers);

}  // namespace
}  // namespace dlbench::op_harness

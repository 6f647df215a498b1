#include "engine/models/builder.h"

#include "engine/nn/layers/add.h"
#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/concat_columns.h"
#include "engine/nn/layers/conv2d.h"
#include "engine/nn/layers/conv_transpose2d.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/layers/pool.h"
#include "engine/nn/layers/relu.h"
#include "engine/nn/losses/soft_dice.h"
#include "engine/nn/losses/softmax_cross_entropy.h"

namespace dlbench::models {

ValueId Builder::input(std::int64_t batch, std::int64_t height, std::int64_t width,
                       std::int64_t channels, data::Distribution values) {
  return g_.add_input(
      {"images", {batch, height, width, channels}, g_.compute_dtype(), values, "images (NHWC)"});
}

void Builder::classifier_loss(ValueId logits, std::int64_t batch, std::int64_t classes) {
  DLBENCH_CHECK(shape(logits) == (Shape{batch, classes}), "logits must be [batch, classes]");
  const ValueId labels =
      g_.add_input({"labels", {batch}, DType::kI32, data::uniform_int(0, classes), "class labels"});
  g_.add("loss", std::make_unique<nn::SoftmaxCrossEntropy>(), {logits, labels});
  g_.mark_output(logits);
}

void Builder::segmentation_loss(ValueId scores) {
  const Shape& s = shape(scores);
  DLBENCH_CHECK(s.rank() == 4, "scores must be [n, h, w, classes]");
  const ValueId labels = g_.add_input(
      {"labels", {s[0], s[1], s[2]}, DType::kI32, data::scene_labels(s[3]), "a class per pixel"});
  // Losses run last first: the cross-entropy writes the scores' gradient, the Dice adds to it.
  g_.add("dice_loss", std::make_unique<nn::SoftDice>(1), {scores, labels});
  g_.add("loss", std::make_unique<nn::SoftmaxCrossEntropy>(), {scores, labels});
  g_.mark_output(scores);
}

ValueId Builder::conv_transpose(const std::string& name, ValueId x, std::int64_t out_channels,
                                int kernel, int stride) {
  const Shape& s = shape(x);
  return g_.add(name,
                std::make_unique<nn::ConvTranspose2d>(nn::ConvTranspose2d::upsampling(
                    s[0], s[1], s[2], s[3], out_channels, kernel, stride)),
                {x});
}

ValueId Builder::concat(const std::string& name, std::vector<ValueId> inputs) {
  const int n = static_cast<int>(inputs.size());
  return g_.add(name, std::make_unique<nn::ConcatColumns>(n), std::move(inputs));
}

ValueId Builder::conv(const std::string& name, ValueId x, std::int64_t out_channels, int kernel,
                      int stride, int pad, bool bias) {
  const Shape& s = shape(x);
  backend::Conv2dParams p;
  p.n = s[0], p.h = s[1], p.w = s[2], p.c = s[3];
  p.k = out_channels, p.r = kernel, p.s = kernel;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  p.bias = bias;
  return g_.add(name, std::make_unique<nn::Conv2d>(p), {x});
}

ValueId Builder::batch_norm(const std::string& name, ValueId x) {
  const Shape& s = shape(x);
  backend::BatchNormParams p;
  p.channels = s[s.rank() - 1];
  p.rows = s.numel() / p.channels;
  return g_.add(name, std::make_unique<nn::BatchNorm>(p), {x});
}

ValueId Builder::relu(const std::string& name, ValueId x) {
  return g_.add(name, std::make_unique<nn::Relu>(), {x});
}

ValueId Builder::max_pool(const std::string& name, ValueId x, int window, int stride, int pad) {
  const Shape& s = shape(x);
  backend::PoolParams p;
  p.kind = backend::PoolKind::kMax;
  p.n = s[0], p.h = s[1], p.w = s[2], p.c = s[3];
  p.window_h = p.window_w = window;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  return g_.add(name, std::make_unique<nn::Pool>(p), {x});
}

ValueId Builder::global_avg_pool(const std::string& name, ValueId x) {
  const Shape& s = shape(x);
  return g_.add(
      name, std::make_unique<nn::Pool>(backend::PoolParams::global_average(s[0], s[1], s[2], s[3])),
      {x});
}

ValueId Builder::add(const std::string& name, ValueId a, ValueId b) {
  return g_.add(name, std::make_unique<nn::Add>(), {a, b});
}

ValueId Builder::linear(const std::string& name, ValueId x, std::int64_t out_features,
                        float init_stddev) {
  const Shape& s = shape(x);
  backend::MatmulParams p;
  p.m = s[0];
  p.k = s.numel() / s[0];
  p.n = out_features;
  p.bias = true;
  return g_.add(name, std::make_unique<nn::Linear>(p, init_stddev), {x});
}

}  // namespace dlbench::models

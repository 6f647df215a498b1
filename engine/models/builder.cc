#include "engine/models/builder.h"

#include "engine/nn/layers/add.h"
#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/concat_columns.h"
#include "engine/nn/layers/conv_transpose.h"
#include "engine/nn/layers/convolution.h"
#include "engine/nn/layers/instance_norm.h"
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

ValueId Builder::volume_input(std::int64_t batch, std::int64_t depth, std::int64_t height,
                              std::int64_t width, std::int64_t channels,
                              data::Distribution values) {
  return g_.add_input({"images",
                       {batch, depth, height, width, channels},
                       g_.compute_dtype(),
                       values,
                       "volumes (NDHWC)"});
}

void Builder::classifier_loss(ValueId logits, std::int64_t batch, std::int64_t classes) {
  DLBENCH_CHECK(shape(logits) == (Shape{batch, classes}), "logits must be [batch, classes]");
  const ValueId labels =
      g_.add_input({"labels", {batch}, DType::kI32, data::uniform_int(0, classes), "class labels"});
  g_.add("loss", std::make_unique<nn::SoftmaxCrossEntropy>(), {logits, labels});
  g_.mark_output(logits);
}

void Builder::segmentation_loss(ValueId scores, const std::vector<float>& class_weights) {
  const Shape& s = shape(scores);
  DLBENCH_CHECK(s.rank() == 4 || s.rank() == 5,
                "scores must be [n, h, w, classes] or [n, d, h, w, classes]");
  // A class per pixel (voxel): the scores' shape without the classes.
  const Shape label_shape = s.rank() == 4 ? Shape{s[0], s[1], s[2]} : Shape{s[0], s[1], s[2], s[3]};
  const ValueId labels =
      g_.add_input({"labels", label_shape, DType::kI32, data::scene_labels(s[s.rank() - 1]),
                    s.rank() == 4 ? "a class per pixel" : "a class per voxel"});
  // Losses run last first: the cross-entropy writes the scores' gradient, the Dice adds to it.
  g_.add("dice_loss", std::make_unique<nn::SoftDice>(1), {scores, labels});
  const std::int64_t classes = s[s.rank() - 1];
  if (!class_weights.empty() && static_cast<std::int64_t>(class_weights.size()) != classes)
    throw Error(ErrorKind::kUsage,
                "the model has " + std::to_string(classes) + " classes, so it takes " +
                    std::to_string(classes) + " class weights, not " +
                    std::to_string(class_weights.size()),
                "give one weight per class, the background's first");
  g_.add("loss", std::make_unique<nn::SoftmaxCrossEntropy>(class_weights), {scores, labels});
  g_.mark_output(scores);
}

ValueId Builder::conv_transpose(const std::string& name, ValueId x, std::int64_t out_channels,
                                int kernel, int stride) {
  const Shape& s = shape(x);
  return g_.add(name,
                std::make_unique<nn::ConvTranspose>(
                    nn::ConvTranspose::upsampling(s, out_channels, kernel, stride)),
                {x});
}

ValueId Builder::concat(const std::string& name, std::vector<ValueId> inputs) {
  const int n = static_cast<int>(inputs.size());
  return g_.add(name, std::make_unique<nn::ConcatColumns>(n), std::move(inputs));
}

ValueId Builder::conv(const std::string& name, ValueId x, std::int64_t out_channels, int kernel,
                      int stride, int pad, bool bias) {
  const Shape& s = shape(x);
  DLBENCH_CHECK(s.rank() == 4 || s.rank() == 5, "conv: the input must be NHWC or NDHWC");
  backend::ConvParams p;
  p.n = s[0], p.h = s[s.rank() - 3], p.w = s[s.rank() - 2], p.c = s[s.rank() - 1];
  p.k = out_channels, p.r = kernel, p.s = kernel;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  if (s.rank() == 5) {  // a cubic kernel over NDHWC
    p.spatial_dims = 3;
    p.d = s[1], p.t = kernel, p.stride_d = stride, p.pad_d = pad;
  }
  p.bias = bias;
  return g_.add(name, std::make_unique<nn::Convolution>(p), {x});
}

ValueId Builder::instance_norm(const std::string& name, ValueId x) {
  return g_.add(name, std::make_unique<nn::InstanceNorm>(shape(x)), {x});
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
  if (s.rank() == 5) {  // NDHWC: the same window, stride and padding along the depth
    p.spatial_dims = 3;
    p.n = s[0], p.d = s[1], p.h = s[2], p.w = s[3], p.c = s[4];
    p.window_d = window, p.stride_d = stride, p.pad_d = pad;
  } else {
    p.n = s[0], p.h = s[1], p.w = s[2], p.c = s[3];
  }
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

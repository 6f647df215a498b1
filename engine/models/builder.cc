#include "engine/models/builder.h"

#include "engine/nn/layers/add.h"
#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/conv2d.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/layers/pool.h"
#include "engine/nn/layers/relu.h"
#include "engine/nn/losses/softmax_cross_entropy.h"

namespace dlbench::models {

ValueId Builder::input(std::int64_t batch, std::int64_t height, std::int64_t width,
                       std::int64_t channels) {
  return g_.add_input({"images",
                       {batch, height, width, channels},
                       g_.compute_dtype(),
                       data::normal(0.0, 1.0),
                       "images (NHWC)"});
}

void Builder::classifier_loss(ValueId logits, std::int64_t batch, std::int64_t classes) {
  DLBENCH_CHECK(shape(logits) == (Shape{batch, classes}), "logits must be [batch, classes]");
  const ValueId labels =
      g_.add_input({"labels", {batch}, DType::kI32, data::uniform_int(0, classes), "class labels"});
  g_.add("loss", std::make_unique<nn::SoftmaxCrossEntropy>(), {logits, labels});
  g_.mark_output(logits);
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

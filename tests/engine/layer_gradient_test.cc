// Every layer's backward against central finite differences of its forward, on tiny shapes,
// through the CPU backend. The scalar probed is L = Σ y ⊙ R for a fixed random R, so dL/dy = R.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/nn/layers/add.h"
#include "engine/nn/layers/batch_norm.h"
#include "engine/nn/layers/conv2d.h"
#include "engine/nn/layers/linear.h"
#include "engine/nn/layers/pool.h"
#include "engine/nn/layers/relu.h"

namespace dlbench::nn {
namespace {

using backend::GradMode;

// f32 forward passes: a step of 1e-2 keeps rounding noise (~1e-6 / 1e-2) well under the
// tolerance while staying in the linear regime of these smooth (or piecewise-linear) layers.
constexpr float kStep = 1e-2f;
constexpr double kTolerance = 2e-2;  // on the relative error of the whole gradient vector

struct HostTensor {
  std::vector<float> data;
  Tensor view;
  explicit HostTensor(const Shape& shape) : data(static_cast<std::size_t>(shape.numel())) {
    view = Tensor(data.data(), shape, DType::kF32, Device::cpu());
  }
};

class LayerHarness {
 public:
  LayerHarness(std::unique_ptr<Layer> layer, std::vector<Shape> input_shapes, Mode mode)
      : layer_(std::move(layer)), backend_(backend::make_backend(Device::cpu())), mode_(mode) {
    std::mt19937 rng(1234);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    auto random = [&](HostTensor& t) {
      for (float& v : t.data) v = normal(rng);
    };
    for (const Shape& s : input_shapes) {
      inputs_.emplace_back(std::make_unique<HostTensor>(s));
      random(*inputs_.back());
      input_grads_.emplace_back(std::make_unique<HostTensor>(s));
    }
    Shape out = layer_->output_shape(input_shapes);
    output_ = std::make_unique<HostTensor>(out);
    output_grad_ = std::make_unique<HostTensor>(out);
    random(*output_grad_);  // R
    for (const ParamDecl& d : layer_->params()) {
      params_.emplace_back(std::make_unique<HostTensor>(d.shape));
      random(*params_.back());
      param_grads_.emplace_back(std::make_unique<HostTensor>(d.shape));
    }
    for (const StateDecl& d : layer_->state(*backend_)) {
      state_.emplace_back(std::make_unique<HostTensor>(Shape{
          std::max<std::int64_t>(1, static_cast<std::int64_t>((d.bytes + 3) / sizeof(float)))}));
      if (d.init == Init::kOnes)
        std::fill(state_.back()->data.begin(), state_.back()->data.end(), 1.0f);
    }
  }

  double loss() {
    layer_->forward(context());
    double sum = 0;
    for (std::size_t i = 0; i < output_->data.size(); ++i)
      sum += static_cast<double>(output_->data[i]) * output_grad_->data[i];
    return sum;
  }

  void backward(GradMode mode) {
    loss();
    modes_.assign(inputs_.size(), mode);
    layer_->backward(context());
  }

  // Relative error between the analytic gradient and central differences of loss().
  double check(std::vector<float>& values, const std::vector<float>& analytic) {
    double diff = 0, norm_a = 0, norm_n = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      float saved = values[i];
      values[i] = saved + kStep;
      double up = loss();
      values[i] = saved - kStep;
      double down = loss();
      values[i] = saved;
      double numeric = (up - down) / (2.0 * kStep);
      diff += (numeric - analytic[i]) * (numeric - analytic[i]);
      norm_a += analytic[i] * analytic[i];
      norm_n += numeric * numeric;
    }
    EXPECT_GT(norm_n, 0.0) << "the probe never moved the loss";
    return std::sqrt(diff) / std::max(std::sqrt(std::max(norm_a, norm_n)), 1e-12);
  }

  void expect_gradients_match() {
    backward(GradMode::kOverwrite);
    std::vector<std::vector<float>> input_grads, param_grads;
    for (auto& g : input_grads_) input_grads.push_back(g->data);
    for (auto& g : param_grads_) param_grads.push_back(g->data);
    for (std::size_t i = 0; i < inputs_.size(); ++i)
      EXPECT_LT(check(inputs_[i]->data, input_grads[i]), kTolerance) << "input " << i;
    for (std::size_t i = 0; i < params_.size(); ++i)
      EXPECT_LT(check(params_[i]->data, param_grads[i]), kTolerance)
          << "parameter " << layer_->params()[i].name;
  }

  // Accumulate mode adds the same gradient on top of what was there.
  void expect_accumulate_adds() {
    backward(GradMode::kOverwrite);
    std::vector<float> once = input_grads_[0]->data;
    backward(GradMode::kAccumulate);
    for (std::size_t i = 0; i < once.size(); ++i)
      ASSERT_NEAR(input_grads_[0]->data[i], 2 * once[i], 1e-4 + 1e-4 * std::fabs(once[i])) << i;
  }

 private:
  StepContext context() {
    in_.clear(), grads_.clear(), params_v_.clear(), state_v_.clear(), param_grads_v_.clear();
    for (auto& t : inputs_) in_.push_back(t->view);
    for (auto& t : input_grads_) grads_.push_back(t->view);
    for (auto& t : params_) params_v_.push_back(t->view);
    for (auto& t : param_grads_) param_grads_v_.push_back(t->view);
    for (auto& t : state_) state_v_.push_back(t->view);
    if (modes_.size() != inputs_.size()) modes_.assign(inputs_.size(), GradMode::kOverwrite);
    out_ = {output_->view};
    out_grad_ = {output_grad_->view};
    param_modes_.assign(params_.size(), GradMode::kOverwrite);
    return StepContext{*backend_, mode_,  in_,    out_,           params_v_,   state_v_,
                       out_grad_, grads_, modes_, param_grads_v_, param_modes_};
  }

  std::unique_ptr<Layer> layer_;
  std::unique_ptr<backend::Backend> backend_;
  Mode mode_;
  std::vector<std::unique_ptr<HostTensor>> inputs_, input_grads_, params_, param_grads_, state_;
  std::unique_ptr<HostTensor> output_, output_grad_;
  std::vector<Tensor> in_, grads_, params_v_, state_v_, param_grads_v_, out_, out_grad_;
  std::vector<GradMode> modes_, param_modes_;
};

backend::Conv2dParams conv(int n, int h, int c, int k, int r, int stride, int pad, bool bias) {
  backend::Conv2dParams p;
  p.n = n, p.h = p.w = h, p.c = c, p.k = k, p.r = p.s = r;
  p.stride_h = p.stride_w = stride, p.pad_h = p.pad_w = pad, p.bias = bias;
  return p;
}

TEST(LayerGradientTest, Conv2d3x3Padded) {
  LayerHarness h(std::make_unique<Conv2d>(conv(2, 5, 3, 4, 3, 1, 1, false)), {{2, 5, 5, 3}},
                 Mode::kTrain);
  h.expect_gradients_match();
}

TEST(LayerGradientTest, Conv2dStridedWithBias) {
  LayerHarness h(std::make_unique<Conv2d>(conv(2, 6, 2, 3, 3, 2, 1, true)), {{2, 6, 6, 2}},
                 Mode::kTrain);
  h.expect_gradients_match();
  h.expect_accumulate_adds();
}

TEST(LayerGradientTest, BatchNormTraining) {
  backend::BatchNormParams p;
  p.rows = 2 * 3 * 3, p.channels = 4;
  LayerHarness h(std::make_unique<BatchNorm>(p), {{2, 3, 3, 4}}, Mode::kTrain);
  h.expect_gradients_match();
  h.expect_accumulate_adds();
}

TEST(LayerGradientTest, Relu) {
  LayerHarness h(std::make_unique<Relu>(), {{3, 7}}, Mode::kTrain);
  h.expect_gradients_match();
  h.expect_accumulate_adds();
}

TEST(LayerGradientTest, MaxPool3x3Stride2) {
  backend::PoolParams p;
  p.kind = backend::PoolKind::kMax;
  p.n = 2, p.h = p.w = 5, p.c = 3, p.window_h = p.window_w = 3, p.stride_h = p.stride_w = 2;
  p.pad_h = p.pad_w = 1;
  LayerHarness h(std::make_unique<Pool>(p), {{2, 5, 5, 3}}, Mode::kTrain);
  h.expect_gradients_match();
  h.expect_accumulate_adds();
}

TEST(LayerGradientTest, GlobalAveragePool) {
  LayerHarness h(std::make_unique<Pool>(backend::PoolParams::global_average(2, 3, 3, 4)),
                 {{2, 3, 3, 4}}, Mode::kTrain);
  h.expect_gradients_match();
}

TEST(LayerGradientTest, AddPassesTheGradientToBothInputs) {
  LayerHarness h(std::make_unique<Add>(), {{2, 3, 4}, {2, 3, 4}}, Mode::kTrain);
  h.expect_gradients_match();
  h.expect_accumulate_adds();
}

TEST(LayerGradientTest, LinearWithBias) {
  backend::MatmulParams p;
  p.m = 3, p.k = 5, p.n = 4, p.bias = true;
  LayerHarness h(std::make_unique<Linear>(p), {{3, 5}}, Mode::kTrain);
  h.expect_gradients_match();
  h.expect_accumulate_adds();
}

TEST(LayerGradientTest, LinearFlattensAnNhwcInput) {
  backend::MatmulParams p;
  p.m = 2, p.k = 2 * 2 * 3, p.n = 3, p.bias = true;
  LayerHarness h(std::make_unique<Linear>(p), {{2, 2, 2, 3}}, Mode::kTrain);
  h.expect_gradients_match();
}

}  // namespace
}  // namespace dlbench::nn

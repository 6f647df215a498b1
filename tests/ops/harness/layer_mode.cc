#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tests/ops/harness/layer_case.h"

namespace dlbench::op_harness {

std::vector<LayerCaseMaker>& layer_makers() {
  static std::vector<LayerCaseMaker> makers;
  return makers;
}

namespace {

// f32 forward passes: a step of 1e-2 keeps rounding noise (~1e-6 / 1e-2) well under the
// tolerance while staying in the linear regime of these smooth (or piecewise-linear) layers.
constexpr float kStep = 1e-2f;
constexpr double kTolerance = 2e-2;  // on the relative error of the whole gradient vector

// One layer on one backend: its inputs, outputs, parameters, state and their gradients as one
// list of host tensors (the values) mirrored on the backend (DeviceTensors).
class LayerRunner {
 public:
  LayerRunner(const LayerCase& c, backend::Backend& be)
      : c_(c), be_(be), layer_(c.make()), n_in_(c.inputs.size()) {
    std::mt19937 rng(1234);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    auto random = [&](HostTensor& t) {
      for (float& v : t.data) v = normal(rng);
    };
    auto add = [&](std::string name, const Shape& shape, Kind kind) -> HostTensor& {
      host_.push_back(
          HostTensor{std::move(name), shape, Role::kIn, kind,
                     std::vector<float>(static_cast<std::size_t>(shape.numel()), 0.0f)});
      return host_.back();
    };
    std::vector<nn::ValueInfo> infos;
    for (std::size_t i = 0; i < n_in_; ++i) {
      const bool ids = std::count(c.i32_inputs.begin(), c.i32_inputs.end(), i) > 0;
      HostTensor& t = add("input " + std::to_string(i), c.inputs[i], ids ? Kind::kI32 : Kind::kF32);
      if (auto fixed = c.fixed.find(i); fixed != c.fixed.end())
        t.data = fixed->second;
      else
        random(t);
      infos.push_back({t.name, t.shape, ids ? DType::kI32 : DType::kF32});
    }
    for (std::size_t i = 0; i < n_in_; ++i)
      add("input gradient " + std::to_string(i), c.inputs[i], Kind::kF32);
    const std::vector<nn::OutputInfo> outs = layer_->outputs(infos);
    n_out_ = outs.size();
    for (std::size_t k = 0; k < n_out_; ++k)
      add("output " + std::to_string(k), outs[k].shape, Kind::kF32);
    for (std::size_t k = 0; k < n_out_; ++k)
      random(add("R " + std::to_string(k), outs[k].shape, Kind::kF32));
    decls_ = layer_->params();
    for (const nn::ParamDecl& d : decls_) random(add(d.name, d.shape, Kind::kF32));
    for (const nn::ParamDecl& d : decls_) add(d.name + " gradient", d.shape, Kind::kF32);
    for (const nn::ParamDecl& d : decls_)
      add(d.name + " rows", d.group == nn::ParamGroup::kSparseRows ? Shape{d.shape[0]} : Shape{1},
          Kind::kI32);
    for (const nn::StateDecl& d : layer_->state(be_)) {
      HostTensor& t = add(d.name,
                          Shape{std::max<std::int64_t>(
                              1, static_cast<std::int64_t>((d.bytes + 3) / sizeof(float)))},
                          Kind::kF32);
      if (d.init == nn::Init::kOnes) std::fill(t.data.begin(), t.data.end(), 1.0f);
      if (d.init == nn::Init::kValues) std::copy(d.values.begin(), d.values.end(), t.data.begin());
    }
    dev_ = std::make_unique<DeviceTensors>(be_, host_, kF32);
  }

  double loss() {
    layer_->forward(context(GradMode::kOverwrite, GradMode::kOverwrite));
    be_.synchronize();
    double sum = 0;
    for (std::size_t k = 0; k < n_out_; ++k) {
      const std::vector<float> y = dev_->download(output(k));
      const std::vector<float>& r = host_[output(k) + n_out_].data;
      for (std::size_t i = 0; i < y.size(); ++i) sum += static_cast<double>(y[i]) * r[i];
    }
    return sum;
  }

  void backward(GradMode inputs, GradMode params) {
    loss();
    const nn::StepContext ctx = context(inputs, params);
    // A loss writes its gradient in the forward pass; its backward does nothing.
    if (layer_->is_loss())
      layer_->forward(ctx);
    else
      layer_->backward(ctx);
    be_.synchronize();
  }

  // Relative error between the analytic gradient and central differences of loss().
  double check(std::size_t tensor, const std::vector<float>& analytic) {
    std::vector<float>& values = host_[tensor].data;
    const Tensor& view = dev_->tensors()[tensor];
    double diff = 0, norm_a = 0, norm_n = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      float saved = values[i];
      values[i] = saved + kStep;
      be_.from_host(values.data(), view);
      double up = loss();
      values[i] = saved - kStep;
      be_.from_host(values.data(), view);
      double down = loss();
      values[i] = saved;
      be_.from_host(values.data(), view);
      double numeric = (up - down) / (2.0 * kStep);
      if (c_.probe_tolerance > 0) {
        EXPECT_NEAR(numeric, analytic[i], c_.probe_tolerance * std::max(1e-2, std::fabs(numeric)))
            << host_[tensor].name << " [" << i << "]";
      }
      diff += (numeric - analytic[i]) * (numeric - analytic[i]);
      norm_a += analytic[i] * analytic[i];
      norm_n += numeric * numeric;
    }
    EXPECT_GT(norm_n, 0.0) << "the probe never moved the loss";
    return std::sqrt(diff) / std::max(std::sqrt(std::max(norm_a, norm_n)), 1e-12);
  }

  void expect_gradients_match() {
    backward(GradMode::kOverwrite, GradMode::kOverwrite);
    std::vector<std::vector<float>> grads(host_.size());
    for (std::size_t i : probed()) grads[i] = dev_->download(gradient(i));
    for (std::size_t i : probed()) EXPECT_LT(check(i, grads[i]), kTolerance) << host_[i].name;
  }

  // The forward's outputs against LayerCase::reference (f32 on every backend).
  void expect_forward_matches() {
    loss();
    std::vector<std::vector<float>> inputs, params;
    for (std::size_t i = 0; i < n_in_; ++i) inputs.push_back(host_[i].data);
    for (std::size_t p = 0; p < decls_.size(); ++p) params.push_back(host_[param(p)].data);
    const std::vector<std::vector<float>> want = c_.reference(inputs, params);
    ASSERT_EQ(want.size(), n_out_);
    for (std::size_t k = 0; k < n_out_; ++k) {
      const std::vector<float> got = dev_->download(output(k));
      ASSERT_EQ(got.size(), want[k].size()) << "output " << k;
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[k][i], 1e-4 + 1e-4 * std::fabs(want[k][i]))
            << "output " << k << " [" << i << "]";
    }
  }

  // Accumulate mode adds the same gradient on top of what was there.
  void expect_accumulate_adds() {
    std::vector<std::size_t> checked;
    for (std::size_t i = 0; i < (c_.accumulate_every_input ? n_in_ : 1); ++i)
      if (has_grad(i)) checked.push_back(i);
    const bool params = layer_->accumulates_param_grads();
    if (params)
      for (std::size_t p = 0; p < decls_.size(); ++p) checked.push_back(param(p));
    ASSERT_FALSE(checked.empty());
    backward(GradMode::kOverwrite, GradMode::kOverwrite);
    std::vector<std::vector<float>> once;
    for (std::size_t i : checked) once.push_back(dev_->download(gradient(i)));
    backward(GradMode::kAccumulate, params ? GradMode::kAccumulate : GradMode::kOverwrite);
    for (std::size_t k = 0; k < checked.size(); ++k) {
      const std::vector<float> twice = dev_->download(gradient(checked[k]));
      for (std::size_t i = 0; i < once[k].size(); ++i)
        ASSERT_NEAR(twice[i], 2 * once[k][i], 1e-4 + 1e-4 * std::fabs(once[k][i]))
            << host_[checked[k]].name << " [" << i << "]";
    }
  }

 private:
  std::size_t output(std::size_t k) const { return 2 * n_in_ + k; }
  std::size_t param(std::size_t p) const { return 2 * n_in_ + 2 * n_out_ + p; }
  bool has_grad(std::size_t input) const { return c_.fixed.count(input) == 0; }
  // Where a probed tensor's gradient is.
  std::size_t gradient(std::size_t i) const { return i < n_in_ ? n_in_ + i : i + decls_.size(); }
  std::vector<std::size_t> probed() const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < n_in_; ++i)
      if (has_grad(i)) out.push_back(i);
    for (std::size_t p = 0; p < decls_.size(); ++p) out.push_back(param(p));
    return out;
  }

  nn::StepContext context(GradMode inputs, GradMode params) {
    const std::span<const Tensor> t = dev_->tensors();
    const std::size_t np = decls_.size();
    in_.assign(t.begin(), t.begin() + n_in_);
    grads_.assign(t.begin() + n_in_, t.begin() + 2 * n_in_);
    for (std::size_t i = 0; i < n_in_; ++i)
      if (!has_grad(i)) grads_[i] = Tensor();
    out_.assign(t.begin() + output(0), t.begin() + output(n_out_));
    out_grad_.assign(t.begin() + output(n_out_), t.begin() + param(0));
    params_.assign(t.begin() + param(0), t.begin() + param(np));
    param_grads_.assign(t.begin() + param(np), t.begin() + param(2 * np));
    rows_.assign(t.begin() + param(2 * np), t.begin() + param(3 * np));
    for (std::size_t p = 0; p < np; ++p)
      if (decls_[p].group != nn::ParamGroup::kSparseRows) rows_[p] = Tensor();
    state_.assign(t.begin() + param(3 * np), t.end());
    modes_.assign(n_in_, inputs);
    param_modes_.assign(np, params);
    nn::StepContext ctx{be_,       Mode::kTrain, in_,    out_,         params_,     state_,
                        out_grad_, grads_,       modes_, param_grads_, param_modes_};
    // A loss layer multiplies the gradient it writes by the loss scale: R makes it dL/dx.
    if (layer_->is_loss()) ctx.loss_scale = host_[output(n_out_)].data[0];
    ctx.param_rows = rows_;
    return ctx;
  }

  const LayerCase& c_;
  backend::Backend& be_;
  std::unique_ptr<nn::Layer> layer_;
  std::size_t n_in_, n_out_ = 0;
  std::vector<nn::ParamDecl> decls_;
  std::vector<HostTensor> host_;
  std::unique_ptr<DeviceTensors> dev_;
  std::vector<Tensor> in_, grads_, out_, out_grad_, params_, param_grads_, rows_, state_;
  std::vector<GradMode> modes_, param_modes_;
};

}  // namespace

void run_layer_mode(const LayerCase& c, const Variant& v) {
  std::string why_not;
  std::unique_ptr<backend::Backend> be = v.make(&why_not);
  if (!be) GTEST_SKIP() << why_not;
  if (c.needs) {
    const backend::Support support = v.supports(c.needs->op, c.needs->params, DType::kF32);
    if (!support) GTEST_SKIP() << support.reason;
  }
  LayerRunner runner(c, *be);
  if (c.reference) runner.expect_forward_matches();
  runner.expect_gradients_match();
  if (c.accumulate) runner.expect_accumulate_adds();
}

}  // namespace dlbench::op_harness

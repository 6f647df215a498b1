// Softmax cross-entropy, sigmoid binary cross-entropy and soft Dice (loss and loss-scaled dlogits):
// the CPU backend against the float64 reference, every other backend against the CPU in every float
// dtype; and finite differences of each loss.
#include <sstream>
#include <tuple>

#include "tests/ops/harness/op_case.h"
#include "tests/ops/harness/reference.h"

namespace dlbench::op_harness {
namespace {

using backend::OpKind;

// Labels that cover the classes in a fixed pattern.
std::vector<std::int32_t> labels_of(std::int64_t rows, std::int64_t classes) {
  std::vector<std::int32_t> labels(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i)
    labels[static_cast<std::size_t>(i)] = static_cast<std::int32_t>((i * 7 + 3) % classes);
  return labels;
}

// A loss over logits [rows, width]: the loss is f32 from identical inputs on both sides (GPU
// exp/log are f32 functions); dlogits carry the loss scale (the loss does not), so their
// tolerance scales with the largest |dlogit|, scale / rows.
class LossCase : public OpCase {
 public:
  LossCase(std::int64_t rows, float scale, float gain) : rows_(rows), scale_(scale), gain_(gain) {}
  // The scale comes from an f32 [1] tensor on the backend's device, as fp16 training passes it,
  // instead of as a number.
  void take_scale_on_device() { scale_on_device_ = true; }
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const auto [loss, dlogits] = compute(t);
    return {{2, {loss}, kElementwise}, {3, dlogits, {1e-7 * scale_, 1e-5}}};
  }
  Tolerance against_cpu(const Precision& prec, std::size_t tensor) const override {
    if (tensor == 2) return {1e-6, 1e-5};
    const double g = scale_ / static_cast<double>(rows_);
    return prec.dtype == DType::kF32 ? Tolerance{1e-6 * g, 1e-5} : sum_tolerance(prec, 1, g);
  }

 protected:
  struct Result {
    double loss;
    Vec dlogits;
  };
  virtual Result compute(const std::vector<HostTensor>& t) const = 0;
  // The case's tensors, then the scale's where it comes from the device.
  std::vector<HostTensor> with_scale(std::vector<HostTensor> t) const {
    if (scale_on_device_) t.push_back({"loss_scale", {1}, Role::kIn, Kind::kF32, {scale_}});
    return t;
  }
  backend::LossScale loss_scale(std::span<const Tensor> t) const {
    return scale_on_device_ ? backend::LossScale(t.back()) : backend::LossScale(scale_);
  }
  const char* scale_name() const { return scale_on_device_ ? "_scale_on_device" : ""; }
  HostTensor logits(std::int64_t width, std::uint64_t seed) const {
    HostTensor z = input("logits", {rows_, width}, seed);
    for (float& v : z.data) v *= gain_;  // large gains test the max-subtraction / stable form
    return z;
  }
  std::int64_t rows_;
  float scale_, gain_;
  bool scale_on_device_ = false;
};

// Which rows a case labels ignore_label (-100, PyTorch's default): none, every third, or all.
enum class Ignored { kNone, kEveryThird, kAll };

class SoftmaxCrossEntropy final : public LossCase {
 public:
  SoftmaxCrossEntropy(std::int64_t rows, std::int64_t classes, float scale, float gain,
                      bool weighted = false, Ignored ignored = Ignored::kNone,
                      float label_smoothing = 0.0f)
      : LossCase(rows, scale, gain), classes_(classes), ignored_(ignored) {
    p_.label_smoothing = label_smoothing;
    // Weights from 0 (a class that never counts) to 3.25, f32 whatever the precision.
    if (weighted)
      for (std::int64_t c = 0; c < classes; ++c)
        weights_.push_back(c % 4 == 3 ? 0.0f : 0.25f + static_cast<float>(c % 4));
  }
  std::string op() const override { return "softmax_cross_entropy"; }
  std::string params() const override {
    std::ostringstream o;
    o << "rows" << rows_ << "_classes" << classes_ << "_scale" << scale_ << "_gain" << gain_
      << (weights_.empty() ? "" : "_class_weights")
      << (ignored_ == Ignored::kEveryThird ? "_some_ignored"
          : ignored_ == Ignored::kAll      ? "_all_ignored"
                                           : "");
    if (p_.label_smoothing != 0) o << "_smoothing" << p_.label_smoothing;
    o << scale_name();
    return o.str();
  }
  OpKind kind() const override { return OpKind::kSoftmaxCrossEntropy; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    std::vector<HostTensor> t = {logits(classes_, 51), i32_input("labels", labels()),
                                 output("loss", {1}, Kind::kF32),
                                 output("dlogits", {rows_, classes_})};
    if (!weights_.empty())
      t.push_back({"class_weights", {classes_}, Role::kIn, Kind::kF32, weights_});
    return with_scale(std::move(t));
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.softmax_cross_entropy(t[0], t[1], t[2], t[3], loss_scale(t),
                             weights_.empty() ? Tensor() : t[4], p_);
  }

 private:
  std::vector<std::int32_t> labels() const {
    std::vector<std::int32_t> labels = labels_of(rows_, classes_);
    for (std::size_t i = 0; i < labels.size(); ++i)
      if (ignored_ == Ignored::kAll || (ignored_ == Ignored::kEveryThird && i % 3 == 1))
        labels[i] = p_.ignore_label;
    return labels;
  }
  Result compute(const std::vector<HostTensor>& t) const override {
    const ref::SoftmaxCrossEntropy r =
        ref::softmax_cross_entropy(rows_, classes_, t[0].as_double(), labels(), scale_,
                                   {weights_.begin(), weights_.end()}, p_);
    return {r.loss, r.dlogits};
  }
  std::int64_t classes_;
  std::vector<float> weights_;  // empty: unweighted
  Ignored ignored_;
  backend::CrossEntropyParams p_;
};

// Logits of both signs (|x| up to the gain: sigmoid near 0 and 1), targets 0 and 1
// alternating (f32, as a model's data makes them).
class SigmoidBinaryCrossEntropy final : public LossCase {
 public:
  using LossCase::LossCase;
  std::string op() const override { return "sigmoid_binary_cross_entropy"; }
  std::string params() const override {
    std::ostringstream o;
    o << "rows" << rows_ << "_scale" << scale_ << "_gain" << gain_ << scale_name();
    return o.str();
  }
  OpKind kind() const override { return OpKind::kSigmoidBinaryCrossEntropy; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    HostTensor targets = output("targets", {rows_, 1}, Kind::kF32);
    targets.role = Role::kIn;
    for (std::int64_t i = 0; i < rows_; ++i)
      targets.data[static_cast<std::size_t>(i)] = static_cast<float>(i % 2);
    return with_scale(
        {logits(1, 55), targets, output("loss", {1}, Kind::kF32), output("dlogits", {rows_, 1})});
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.sigmoid_binary_cross_entropy(t[0], t[1], t[2], t[3], loss_scale(t));
  }

 private:
  Result compute(const std::vector<HostTensor>& t) const override {
    const ref::BinaryCrossEntropy r =
        ref::sigmoid_binary_cross_entropy(t[0].as_double(), t[1].as_double(), scale_);
    return {r.loss, r.dlogits};
  }
};

// Soft Dice over `samples` blocks of `pixels` rows: labels in a fixed pattern, one class
// absent from the first sample where it can be (its dice is then smooth / (P + smooth)).
std::vector<std::int32_t> dice_labels(const backend::SoftDiceParams& p) {
  std::vector<std::int32_t> labels = labels_of(p.samples * p.pixels, p.classes);
  if (p.classes > 2)
    for (std::int64_t i = 0; i < p.pixels; ++i)
      if (labels[static_cast<std::size_t>(i)] == p.classes - 1)
        labels[static_cast<std::size_t>(i)] = 0;
  return labels;
}

class SoftDice final : public LossCase {
 public:
  SoftDice(const backend::SoftDiceParams& p, float scale, float gain,
           GradMode mode = GradMode::kOverwrite)
      : LossCase(p.samples * p.pixels, scale, gain), p_(p), mode_(mode) {}
  std::string op() const override { return "soft_dice"; }
  std::string params() const override {
    std::ostringstream o;
    o << "samples" << p_.samples << "_pixels" << p_.pixels << "_classes" << p_.classes << "_from"
      << p_.first_class << "_scale" << scale_ << "_gain" << gain_
      << (mode_ == GradMode::kAccumulate ? "_accumulate" : "") << scale_name();
    return o.str();
  }
  OpKind kind() const override { return OpKind::kSoftDice; }
  // Accumulate mode: dlogits come in holding a gradient the result adds to.
  std::vector<Check> reference(const std::vector<HostTensor>& t) const override {
    const Result r = compute(t);
    return {{2, {r.loss}, kElementwise},
            {3, expected_grad(mode_, t[3], r.dlogits), {1e-7 * scale_, 1e-5}}};
  }
  backend::OpParams op_params(const Precision&) const override { return p_; }
  std::vector<HostTensor> tensors(const backend::Backend&) const override {
    const std::vector<std::int32_t> labels = dice_labels(p_);
    return with_scale({logits(p_.classes, 61), i32_input("labels", labels),
                       output("loss", {1}, Kind::kF32),
                       grad_output("dlogits", {rows_, p_.classes}, mode_, 62)});
  }
  void run(backend::Backend& be, const Precision&, std::span<const Tensor> t) const override {
    be.soft_dice(p_, t[0], t[1], t[2], t[3], loss_scale(t), mode_);
  }

 private:
  Result compute(const std::vector<HostTensor>& t) const override {
    const ref::SoftmaxCrossEntropy r =
        ref::soft_dice(p_, t[0].as_double(), dice_labels(p_), scale_);
    return {r.loss, r.dlogits};
  }
  backend::SoftDiceParams p_;
  GradMode mode_;
};

backend::SoftDiceParams dice(std::int64_t samples, std::int64_t pixels, std::int64_t classes,
                             std::int64_t first_class) {
  backend::SoftDiceParams p;
  p.samples = samples, p.pixels = pixels, p.classes = classes, p.first_class = first_class;
  return p;
}

CaseList cases() {
  CaseList out;
  // Small heads, ImageNet's 1000 classes, a loss-scaled batch, and large gains (exp would
  // overflow without the max-subtraction); a segmentation head's pixel rows over many of CUDA's
  // thread-per-row blocks (loss-scaled, as half precision trains), its most classes (16) and one
  // more (a block per row again).
  for (const auto& [rows, classes, scale, gain] :
       std::vector<std::tuple<std::int64_t, std::int64_t, float, float>>{{4, 10, 1, 1},
                                                                         {8, 1000, 1, 3},
                                                                         {3, 5, 128, 1},
                                                                         {6, 7, 1, 200},
                                                                         {4, 10, 1, 4},
                                                                         {3, 7, 1, 4},
                                                                         {32, 1000, 1, 4},
                                                                         {16, 1000, 1024, 4},
                                                                         {70000, 3, 1024, 3},
                                                                         {300, 16, 64, 2},
                                                                         {40, 17, 1, 2}})
    out.push_back(std::make_unique<SoftmaxCrossEntropy>(rows, classes, scale, gain));
  // Class weights on both CUDA routes: a segmentation head's many rows (thread per row) and a
  // classifier's wide ones (block per row), one loss-scaled.
  for (const auto& [rows, classes, scale] :
       std::vector<std::tuple<std::int64_t, std::int64_t, float>>{
           {70000, 3, 1024}, {300, 16, 1}, {40, 17, 1}, {8, 1000, 1}})
    out.push_back(std::make_unique<SoftmaxCrossEntropy>(rows, classes, scale, 2.0f, true));
  // Ignored rows (BERT's unmasked positions) and label smoothing (the translators' 0.1), on both
  // CUDA routes, with weights, loss-scaled; and a batch with nothing left to count.
  for (const auto& [rows, classes, weighted, ignored, smoothing] :
       std::vector<std::tuple<std::int64_t, std::int64_t, bool, Ignored, float>>{
           {30, 1000, false, Ignored::kEveryThird, 0.0f},
           {3000, 5, false, Ignored::kEveryThird, 0.0f},
           {40, 17, true, Ignored::kEveryThird, 0.0f},
           {300, 16, true, Ignored::kEveryThird, 0.0f},
           {16, 1000, false, Ignored::kNone, 0.1f},
           {300, 7, false, Ignored::kNone, 0.1f},
           {30, 1000, false, Ignored::kEveryThird, 0.1f},
           {300, 16, false, Ignored::kEveryThird, 1.0f},
           {12, 1000, false, Ignored::kAll, 0.1f},
           {12, 7, false, Ignored::kAll, 0.0f}})
    out.push_back(std::make_unique<SoftmaxCrossEntropy>(rows, classes, 64.0f, 2.0f, weighted,
                                                        ignored, smoothing));
  for (const auto& [rows, scale, gain] : std::vector<std::tuple<std::int64_t, float, float>>{
           {1, 1, 8}, {37, 1, 8}, {500, 256, 8}, {1, 1, 6}, {1000, 1, 6}, {65536, 512, 6}})
    out.push_back(std::make_unique<SigmoidBinaryCrossEntropy>(rows, scale, gain));
  // U-Net's 3 classes without the background, one sample over several of the CUDA sums' chunks
  // (8192 rows each), every class counted, a loss-scaled batch, and 16 classes (CUDA's most).
  for (const auto& [p, scale, gain] :
       std::vector<std::tuple<backend::SoftDiceParams, float, float>>{{dice(2, 12, 3, 1), 1, 2},
                                                                      {dice(1, 20000, 3, 1), 1, 3},
                                                                      {dice(3, 7, 4, 0), 1, 1},
                                                                      {dice(2, 50, 3, 1), 512, 4},
                                                                      {dice(2, 9, 16, 1), 1, 2}})
    out.push_back(std::make_unique<SoftDice>(p, scale, gain));
  // The second loss on the same scores adds its gradient.
  out.push_back(std::make_unique<SoftDice>(dice(2, 30, 3, 1), 1, 2, GradMode::kAccumulate));
  // The scale read from the device, as fp16 training passes it: both CUDA routes of the softmax
  // (one with class weights), the binary loss, and Dice adding to the cross-entropy's gradient.
  auto on_device = [&out](std::unique_ptr<LossCase> c) {
    c->take_scale_on_device();
    out.push_back(std::move(c));
  };
  on_device(std::make_unique<SoftmaxCrossEntropy>(16, 1000, 1024.0f, 4.0f));
  on_device(std::make_unique<SoftmaxCrossEntropy>(70000, 3, 1024.0f, 3.0f, true));
  on_device(std::make_unique<SigmoidBinaryCrossEntropy>(500, 256.0f, 8.0f));
  on_device(std::make_unique<SoftDice>(dice(2, 50, 3, 1), 512.0f, 4.0f, GradMode::kAccumulate));
  return out;
}
DLBENCH_OP_CASES(cases);

std::vector<GradCase> grad_cases() {
  GradCase softmax;
  softmax.op = "softmax_cross_entropy";
  softmax.params = "rows3_classes5";
  softmax.kind = OpKind::kSoftmaxCrossEntropy;
  softmax.tensors = {input("logits", {3, 5}, 131),
                     {"labels", {3}, Role::kIn, Kind::kI32, {4, 0, 2}},
                     output("loss", {1}, Kind::kF32),
                     output("dlogits", {3, 5})};
  softmax.wrt = {{0, 3}};
  const std::vector<std::int32_t> labels = {4, 0, 2};
  softmax.forward = [labels](const std::vector<Vec>& t) {
    return Vec{ref::softmax_cross_entropy(3, 5, t[0], labels, 1.0).loss};
  };
  softmax.reference_backward = [labels](const std::vector<Vec>& t) {
    return std::vector<Vec>{ref::softmax_cross_entropy(3, 5, t[0], labels, 1.0).dlogits};
  };
  softmax.backward = [](backend::Backend& be, std::span<const Tensor> t) {
    be.softmax_cross_entropy(t[0], t[1], t[2], t[3], 1.0f);
  };

  // Label smoothing, with one of four rows ignored.
  backend::CrossEntropyParams smoothed;
  smoothed.label_smoothing = 0.1f;
  const std::vector<std::int32_t> some_ignored = {4, -100, 0, 2};
  GradCase smooth;
  smooth.op = "softmax_cross_entropy";
  smooth.params = "rows4_classes5_smoothing0.1_one_ignored";
  smooth.kind = OpKind::kSoftmaxCrossEntropy;
  smooth.tensors = {input("logits", {4, 5}, 132),
                    {"labels", {4}, Role::kIn, Kind::kI32, {4, -100, 0, 2}},
                    output("loss", {1}, Kind::kF32),
                    output("dlogits", {4, 5})};
  smooth.wrt = {{0, 3}};
  smooth.forward = [some_ignored, smoothed](const std::vector<Vec>& t) {
    return Vec{ref::softmax_cross_entropy(4, 5, t[0], some_ignored, 1.0, {}, smoothed).loss};
  };
  smooth.reference_backward = [some_ignored, smoothed](const std::vector<Vec>& t) {
    return std::vector<Vec>{
        ref::softmax_cross_entropy(4, 5, t[0], some_ignored, 1.0, {}, smoothed).dlogits};
  };
  smooth.backward = [smoothed](backend::Backend& be, std::span<const Tensor> t) {
    be.softmax_cross_entropy(t[0], t[1], t[2], t[3], 1.0f, {}, smoothed);
  };

  GradCase bce;
  bce.op = "sigmoid_binary_cross_entropy";
  bce.params = "rows5";
  bce.kind = OpKind::kSigmoidBinaryCrossEntropy;
  bce.tensors = {input("logits", {5, 1}, 141),
                 {"targets", {5, 1}, Role::kIn, Kind::kF32, {1, 0, 0, 1, 1}},
                 output("loss", {1}, Kind::kF32),
                 output("dlogits", {5, 1})};
  bce.wrt = {{0, 3}};
  bce.forward = [](const std::vector<Vec>& t) {
    return Vec{ref::sigmoid_binary_cross_entropy(t[0], t[1], 1.0).loss};
  };
  bce.reference_backward = [](const std::vector<Vec>& t) {
    return std::vector<Vec>{ref::sigmoid_binary_cross_entropy(t[0], t[1], 1.0).dlogits};
  };
  bce.backward = [](backend::Backend& be, std::span<const Tensor> t) {
    be.sigmoid_binary_cross_entropy(t[0], t[1], t[2], t[3], 1.0f);
  };
  GradCase dice_case;
  const backend::SoftDiceParams dp = dice(2, 4, 3, 1);
  const std::vector<std::int32_t> dl = {0, 1, 1, 2, 2, 0, 1, 2};
  dice_case.op = "soft_dice";
  dice_case.params = "samples2_pixels4_classes3";
  dice_case.kind = OpKind::kSoftDice;
  dice_case.op_params = dp;
  dice_case.tensors = {input("logits", {8, 3}, 151),
                       {"labels", {8}, Role::kIn, Kind::kI32, {0, 1, 1, 2, 2, 0, 1, 2}},
                       output("loss", {1}, Kind::kF32),
                       output("dlogits", {8, 3})};
  dice_case.wrt = {{0, 3}};
  dice_case.forward = [dp, dl](const std::vector<Vec>& t) {
    return Vec{ref::soft_dice(dp, t[0], dl, 1.0).loss};
  };
  dice_case.reference_backward = [dp, dl](const std::vector<Vec>& t) {
    return std::vector<Vec>{ref::soft_dice(dp, t[0], dl, 1.0).dlogits};
  };
  dice_case.backward = [dp](backend::Backend& be, std::span<const Tensor> t) {
    be.soft_dice(dp, t[0], t[1], t[2], t[3], 1.0f, GradMode::kOverwrite);
  };
  std::vector<GradCase> out;
  out.push_back(std::move(softmax));
  out.push_back(std::move(smooth));
  out.push_back(std::move(dice_case));
  out.push_back(std::move(bce));
  return out;
}
DLBENCH_GRAD_CASES(grad_cases);

}  // namespace
}  // namespace dlbench::op_harness

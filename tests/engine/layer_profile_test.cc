// The per-layer profiler on the CPU backend: the trainer shows it every node once per part,
// its spans are non-negative and add up to the step (layers + parts + gaps = first mark to
// last), the rollup's shares sum to 100 %, inference has no backward; and its bookkeeping on
// hand-made marks (gaps by name, nested parts counted once, unmatched marks rejected).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>

#include "bench/runner/layer_profiler.h"
#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"

namespace dlbench {
namespace {

using nn::StepPart;

// Sums are over a step of ~170 layers measured in doubles: they agree to rounding.
constexpr double kSumTolerance = 1e-6;
constexpr int kProfiledSteps = 2;

// A ResNet-50 of full depth and 1/16 width on 32x32 inputs, batch 2.
struct TinyNet {
  explicit TinyNet(Mode mode) : be(backend::make_backend(Device::cpu())) {
    const models::ModelSpec& info = models::find_model("resnet50");
    models::ModelConfig mc;
    mc.batch = 2;
    mc.size = 32;
    mc.width_divisor = 16;
    mc = models::resolve(info, mc);
    nn::TrainerConfig nc;
    nc.mode = mode;
    nn::Graph graph = info.build(mc);
    net = std::make_unique<nn::Trainer>(std::move(graph), *be, nc);
    source = std::make_unique<data::SyntheticSource>(net->graph().input_specs(), 3);
  }
  void step() {
    source->fill(*be, net->inputs());
    if (net->mode() == Mode::kTrain)
      net->train_step();
    else
      net->infer_step();
  }
  std::unique_ptr<backend::Backend> be;
  std::unique_ptr<nn::Trainer> net;
  std::unique_ptr<data::SyntheticSource> source;
};

// Counts what the trainer shows an observer, and checks that parts never interleave.
class CountingObserver final : public nn::StepObserver {
 public:
  void begin(StepPart part, std::size_t node) override {
    EXPECT_FALSE(open_) << to_string(part) << " " << node << " began inside another part";
    open_ = true;
    ++begins[{part, node}];
  }
  void end(StepPart part, std::size_t node) override {
    EXPECT_TRUE(open_);
    open_ = false;
    ++ends[{part, node}];
  }
  std::map<std::pair<StepPart, std::size_t>, int> begins, ends;

 private:
  bool open_ = false;
};

TEST(LayerProfileTest, TheNetworkShowsEveryNodeOncePerPass) {
  TinyNet t(Mode::kTrain);
  CountingObserver seen;
  t.net->set_observer(&seen);
  t.step();
  t.net->set_observer(nullptr);
  const std::size_t nodes = t.net->graph().layer_count();
  for (std::size_t n = 0; n < nodes; ++n) {
    EXPECT_EQ((seen.begins[{StepPart::kForward, n}]), 1) << n;
    EXPECT_EQ((seen.ends[{StepPart::kForward, n}]), 1) << n;
    EXPECT_EQ((seen.begins[{StepPart::kBackward, n}]), 1) << n;
    EXPECT_EQ((seen.ends[{StepPart::kBackward, n}]), 1) << n;
  }
  EXPECT_EQ((seen.begins[{StepPart::kLoss, 0}]), 1);
  EXPECT_EQ((seen.begins[{StepPart::kUpdate, 0}]), 1);
  EXPECT_EQ(seen.begins.count({StepPart::kGradientSync, 0}), 0u) << "one replica has no sync";
  EXPECT_EQ(seen.begins.size(), 2 * nodes + 2);
}

void expect_adds_up(const result::LayerProfile& p) {
  EXPECT_GT(p.step_ms, 0.0);
  EXPECT_NEAR(p.layers_ms + p.parts_ms + p.gaps_ms - p.nested_ms, p.step_ms, kSumTolerance);
  EXPECT_LE(p.layers_ms + p.parts_ms - p.nested_ms, p.step_ms + kSumTolerance);
  for (const auto& g : p.gaps) EXPECT_GE(g.ms, 0.0) << g.name;
  for (const auto& part : p.parts) EXPECT_GE(part.ms, 0.0) << part.name;
  // The rollup holds every layer, part and gap: 100 % of the step, plus nested parts again.
  double shares = 0, kinds_ms = 0;
  for (const auto& k : p.kinds) shares += k.share, kinds_ms += k.ms;
  EXPECT_NEAR(shares, (p.step_ms + p.nested_ms) / p.step_ms, 1e-9);
  EXPECT_NEAR(kinds_ms, p.step_ms + p.nested_ms, kSumTolerance);
}

TEST(LayerProfileTest, TrainingProfileCoversEveryLayerAndAddsUp) {
  TinyNet t(Mode::kTrain);
  t.step();  // oneDNN creates its primitives in the first step
  const result::LayerProfile p =
      runner::profile_layers(*t.net, *t.be, kProfiledSteps, [&](int) { t.step(); });
  EXPECT_EQ(p.steps, kProfiledSteps);
  EXPECT_NE(p.clock.find("host steady clock"), std::string::npos) << p.clock;
  const auto summaries = t.net->layer_summaries();
  ASSERT_EQ(p.layers.size(), summaries.size());
  std::map<std::string, int> kinds;
  for (std::size_t i = 0; i < p.layers.size(); ++i) {
    EXPECT_EQ(p.layers[i].name, summaries[i].name);
    EXPECT_EQ(p.layers[i].kind, summaries[i].kind);
    EXPECT_GE(p.layers[i].forward_ms, 0.0) << p.layers[i].name;
    EXPECT_GE(p.layers[i].backward_ms, 0.0) << p.layers[i].name;
    ++kinds[p.layers[i].kind];
  }
  ASSERT_EQ(p.parts.size(), 2u);
  EXPECT_EQ(p.parts[0].name, "loss");
  EXPECT_EQ(p.parts[1].name, "update");
  EXPECT_EQ(p.nested_ms, 0.0);
  expect_adds_up(p);
  for (const auto& k : p.kinds)
    EXPECT_EQ(k.count, kinds.count(k.kind) ? kinds[k.kind] : 0) << k.kind;
  for (const char* kind : {"conv2d", "batch_norm", "relu", "add", "linear", "loss", "update"})
    EXPECT_TRUE(std::any_of(p.kinds.begin(), p.kinds.end(), [&](const result::KindTime& k) {
      return k.kind == kind;
    })) << kind;
  std::map<std::string, bool> gaps;
  for (const auto& g : p.gaps) gaps[g.name] = true;
  for (const char* gap :
       {"between layers (forward)", "between forward and loss", "between loss and backward",
        "between layers (backward)", "between backward and update"})
    EXPECT_TRUE(gaps[gap]) << gap;
  const nlohmann::json j = result::to_json(p);
  EXPECT_EQ(j["steps"], kProfiledSteps);
  EXPECT_EQ(j["layers"].size(), summaries.size());
  EXPECT_TRUE(j["measured"].get<std::string>().find("after the measured") != std::string::npos);
}

TEST(LayerProfileTest, InferenceHasNoBackwardAndNoParts) {
  TinyNet t(Mode::kInfer);
  t.step();
  const result::LayerProfile p = runner::profile_layers(*t.net, *t.be, 1, [&](int) { t.step(); });
  ASSERT_EQ(p.layers.size(), t.net->graph().layer_count());
  for (const auto& l : p.layers) EXPECT_EQ(l.backward_ms, 0.0) << l.name;
  EXPECT_TRUE(p.parts.empty());
  ASSERT_EQ(p.gaps.size(), 1u);
  EXPECT_EQ(p.gaps[0].name, "between layers (forward)");
  expect_adds_up(p);
}

// Hand-made marks with known sleeps, on the host clock.
TEST(LayerProfileTest, SpansGapsAndNestedPartsOnHandMadeMarks) {
  auto be = backend::make_backend(Device::cpu());
  std::vector<nn::LayerSummary> layers(2);
  layers[0].name = "a", layers[0].kind = "conv2d";
  layers[1].name = "b", layers[1].kind = "relu";
  runner::LayerProfiler profiler(*be, layers);
  const auto sleep = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
  profiler.begin(StepPart::kForward, 0);
  sleep();
  profiler.end(StepPart::kForward, 0);
  sleep();  // a gap between layers
  profiler.begin(StepPart::kForward, 1);
  profiler.end(StepPart::kForward, 1);
  profiler.begin(StepPart::kBackward, 1);
  profiler.begin(StepPart::kGradientSync, 0);  // nested: counted in both, once in the step
  sleep();
  profiler.end(StepPart::kGradientSync, 0);
  profiler.end(StepPart::kBackward, 1);
  profiler.end_step();
  const result::LayerProfile p = profiler.result();
  EXPECT_GE(p.layers[0].forward_ms, 2.0);
  EXPECT_GE(p.layers[1].backward_ms, 2.0);
  ASSERT_EQ(p.parts.size(), 1u);
  EXPECT_EQ(p.parts[0].name, "gradient sync");
  EXPECT_GE(p.parts[0].ms, 2.0);
  EXPECT_DOUBLE_EQ(p.nested_ms, p.parts[0].ms);
  ASSERT_EQ(p.gaps.size(), 2u);
  EXPECT_EQ(p.gaps[0].name, "between layers (forward)");
  EXPECT_GE(p.gaps[0].ms, 2.0);
  EXPECT_EQ(p.gaps[1].name, "between forward and backward");
  expect_adds_up(p);
}

TEST(LayerProfileTest, UnmatchedMarksAreAnInternalError) {
  auto be = backend::make_backend(Device::cpu());
  std::vector<nn::LayerSummary> layers(1);
  runner::LayerProfiler profiler(*be, layers);
  profiler.begin(StepPart::kForward, 0);
  profiler.end(StepPart::kBackward, 0);
  EXPECT_THROW(profiler.end_step(), Error);
}

// Out of line and opaque to the optimizer: GCC's -Warray-bounds flags the access after the
// check when it sees a constant index past the end.
[[gnu::noipa]] void mark(backend::DeviceTimer& timer, std::size_t index) {
  timer.mark(index);
}

TEST(LayerProfileTest, HostClockTimerChecksItsMarks) {
  backend::HostClockTimer timer(2);
  EXPECT_THROW(mark(timer, 2), Error);
  timer.mark(0);
  EXPECT_THROW(timer.elapsed_ms(0, 1), Error) << "mark 1 was never recorded";
  timer.mark(1);
  EXPECT_GE(timer.elapsed_ms(0, 1), 0.0);
  EXPECT_LE(timer.elapsed_ms(1, 0), 0.0);
}

}  // namespace
}  // namespace dlbench

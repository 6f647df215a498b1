// The memory planner: no two buffers alive at the same time overlap, and reuse happens; and the
// allocators' count of what buffers hold (the allocated peak a run reports).
#include <gtest/gtest.h>

#include "engine/models/registry.h"
#include "engine/nn/planner.h"

namespace dlbench::nn {
namespace {

// ResNet-50 at batch 2 on 32x32 images: every kind of buffer lifetime, planned in an instant.
Graph small_resnet() {
  const auto& m = models::find_model("resnet50");
  models::ModelConfig c;
  c.batch = 2;
  c.size = 32;
  return m.build(models::resolve(m, c));
}

TEST(PlannerTest, BuffersAliveTogetherNeverOverlap) {
  std::vector<BufferRequest> r{{1000, 0, 2}, {500, 1, 3}, {2000, 3, 5}, {700, 4, 4}, {300, 0, 5}};
  BufferPlan p = place_buffers(r);
  for (std::size_t i = 0; i < r.size(); ++i)
    for (std::size_t j = i + 1; j < r.size(); ++j) {
      bool together = r[i].first <= r[j].last && r[j].first <= r[i].last;
      if (!together) continue;
      bool apart =
          p.offsets[i] + r[i].bytes <= p.offsets[j] || p.offsets[j] + r[j].bytes <= p.offsets[i];
      EXPECT_TRUE(apart) << i << " and " << j;
    }
  std::size_t sum = 0;
  for (const auto& q : r) sum += align_up(q.bytes);
  EXPECT_LT(p.total_bytes, sum) << "disjoint lifetimes should share memory";
}

TEST(PlannerTest, ResNetPlanIsConsistentAndInferenceNeedsLess) {
  Graph g = small_resnet();
  ActivationPlan train = plan_activations(g, Mode::kTrain);
  ActivationPlan infer = plan_activations(g, Mode::kInfer);
  EXPECT_LT(infer.total_bytes, train.total_bytes);
  // Every value a layer produced has a buffer; in training every value after a parameterized
  // layer has a gradient buffer; the graph inputs (images, labels) and the loss have neither.
  const int layers = static_cast<int>(g.layer_count());
  for (std::size_t v = 0; v < g.values().size(); ++v) {
    const int producer = g.values()[v].producer;
    bool produced = producer >= 0 && producer < layers;
    EXPECT_EQ(train.value_offset[v] != kNoBuffer, produced) << g.values()[v].name;
    EXPECT_EQ(train.grad_offset[v] != kNoBuffer, produced && g.values()[v].needs_grad);
  }
  // Residual fan-out: a block input read by conv1 and the shortcut gets one overwrite and one
  // accumulate.
  int accumulates = 0;
  for (const auto& modes : train.input_grad_modes)
    for (GradMode mode : modes) accumulates += mode == GradMode::kAccumulate;
  EXPECT_EQ(accumulates, 16);  // one per bottleneck block
}

// A buffer needed at one time only (a layer's workspace) goes at the lowest offset clear of
// what is live then, inside the arena, moving nothing.
TEST(PlannerTest, AOneTimeBufferGoesWhereNothingLiveIs) {
  ActivationPlan plan;
  plan.buffers = {{100, 0, 1}, {100, 1, 2}};
  plan.buffer_offsets = {0, align_up(100)};
  plan.total_bytes = 2 * align_up(100);
  EXPECT_EQ(free_offset_at(plan, 0, 100), align_up(100));  // the second is not live yet
  EXPECT_EQ(free_offset_at(plan, 1, 1), kNoBuffer);        // both are: the arena is full
  EXPECT_EQ(free_offset_at(plan, 2, 100), 0u);
  EXPECT_EQ(free_offset_at(plan, 2, 2 * align_up(100)), kNoBuffer);  // past the arena
  EXPECT_EQ(free_offset_at(plan, 3, 2 * align_up(100)), 0u);
}

TEST(PlannerTest, OneTimeBuffersInAResNetStepOverlapNothingLive) {
  Graph g = small_resnet();
  const ActivationPlan plan = plan_activations(g, Mode::kTrain);
  int placed = 0, refused = 0;
  for (std::size_t n = 0; n < g.layer_count(); ++n)
    for (const int t : {forward_time(g, n), backward_time(g, n)})
      for (const std::size_t bytes : {std::size_t{256}, plan.total_bytes / 8}) {
        const std::size_t at = free_offset_at(plan, t, bytes);
        if (at == kNoBuffer) {
          ++refused;
          continue;
        }
        ++placed;
        EXPECT_LE(at + align_up(bytes), plan.total_bytes);
        for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
          const BufferRequest& b = plan.buffers[i];
          if (b.first > t || t > b.last) continue;
          EXPECT_TRUE(at + bytes <= plan.buffer_offsets[i] ||
                      plan.buffer_offsets[i] + b.bytes <= at)
              << "time " << t << ", buffer " << i;
        }
      }
  // Early in forward and late in backward most of the arena is free; at the peak, between
  // them, an eighth of it is not.
  EXPECT_GT(placed, 0);
  EXPECT_GT(refused, 0);
  EXPECT_EQ(free_offset_at(plan, forward_time(g, 0), plan.total_bytes + 1), kNoBuffer);
}

}  // namespace
}  // namespace dlbench::nn

namespace dlbench {
namespace {

// The allocated peak a run reports: what Buffers hold at once, moved buffers counted once,
// and a reset starts from what is held now.
TEST(AllocatorPeakTest, CountsWhatBuffersHoldAtOnce) {
  HostAllocator host;
  EXPECT_EQ(host.bytes_in_use(), 0u);
  {
    Buffer a(host, 1000);
    {
      Buffer b(host, 3000);
      Buffer moved = std::move(b);
      EXPECT_EQ(host.bytes_in_use(), 4000u);
    }
    EXPECT_EQ(host.bytes_in_use(), 1000u);
    EXPECT_EQ(host.peak_bytes(), 4000u);
    host.reset_peak();
    EXPECT_EQ(host.peak_bytes(), 1000u);
    a = Buffer(host, 500);  // the old 1000 bytes are freed by the assignment
    EXPECT_EQ(host.bytes_in_use(), 500u);
    EXPECT_EQ(host.peak_bytes(), 1500u);  // both were held while the new one was made
  }
  EXPECT_EQ(host.bytes_in_use(), 0u);
}

}  // namespace
}  // namespace dlbench

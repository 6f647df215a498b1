// A device allocator's byte limit (what dlbench maxbatch --memory-limit sets): a Buffer beyond it
// fails with the resource error a full device gives, before anything is allocated, and a trainer
// that does not fit frees every buffer it had taken, so the next one starts from nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/core/memory.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"

namespace dlbench {
namespace {

TEST(MemoryLimitTest, ABufferBeyondTheLimitIsAResourceError) {
  HostAllocator allocator;
  allocator.set_limit(1024);
  Buffer first(allocator, 512);
  try {
    Buffer second(allocator, 513);
    FAIL() << "513 bytes fit beside 512 under a 1024-byte limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kResource);
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
    EXPECT_EQ(e.setting().setting, Setting::kBatch);
  }
  EXPECT_EQ(allocator.bytes_in_use(), 512u);
  Buffer exact(allocator, 512);  // up to the limit itself fits
  EXPECT_EQ(allocator.bytes_in_use(), 1024u);
  first = Buffer();
  exact = Buffer();
  EXPECT_EQ(allocator.bytes_in_use(), 0u);
  allocator.set_limit(0);  // none
  Buffer big(allocator, 4096);
  EXPECT_EQ(allocator.bytes_in_use(), 4096u);
}

nn::Graph tiny_resnet(std::int64_t batch) {
  const models::ModelSpec& info = models::find_model("resnet50");
  models::ModelConfig mc;
  mc.batch = batch;
  mc.size = 32;
  mc.width_divisor = 8;
  return info.build(models::resolve(info, mc));
}

TEST(MemoryLimitTest, ATrainerThatDoesNotFitFreesEverything) {
  auto be = backend::make_backend(Device::cpu());
  DeviceAllocator& allocator = be->allocator();
  std::size_t held = 0;
  {
    nn::Trainer net(tiny_resnet(4), *be, {});
    held = allocator.bytes_in_use();
  }
  ASSERT_GT(held, 0u);
  EXPECT_EQ(allocator.bytes_in_use(), 0u);
  allocator.set_limit(held - 1);
  try {
    nn::Trainer net(tiny_resnet(4), *be, {});
    FAIL() << "the trainer fit in one byte less than it holds";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kResource) << e.what();
  }
  EXPECT_EQ(allocator.bytes_in_use(), 0u);
  // At exactly what it holds, it builds and trains; on the CPU a step holds nothing more.
  allocator.set_limit(held);
  nn::Trainer net(tiny_resnet(4), *be, {});
  data::SyntheticSource source(net.graph().input_specs(), 7);
  for (int step = 0; step < 2; ++step) {
    source.fill(*be, net.inputs());
    net.train_step();
  }
  EXPECT_TRUE(std::isfinite(net.loss()));
  EXPECT_EQ(allocator.bytes_in_use(), held);
  EXPECT_EQ(allocator.peak_bytes(), held);
}

}  // namespace
}  // namespace dlbench

// NCCL on this machine's GPUs: dlbench micro allreduce over every GPU in each dtype, on one
// GPU, and the communicator's own collectives and abort. Labelled gpu; skips without a GPU
// (and the multi-GPU cases without two).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/core/error.h"
#include "engine/core/memory.h"
#include "engine/dist/nccl_communicator.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

int gpu_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

TEST(AllreduceGpuTest, EveryGpuSumsExactlyInEveryDtype) {
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  for (const char* dtype : {"f32", "f16", "bf16"}) {
    auto r = testing::dlbench(std::string("micro allreduce --gpus all --max-bytes 64M --dtype ") +
                              dtype);
    ASSERT_EQ(r.exit_code, 0) << dtype << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("nccl 2."), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("# Wrong elements: 0"), std::string::npos) << r.out;
    if (gpu_count() > 1) {
      EXPECT_NE(r.out.find("# Large-size bus bandwidth: "), std::string::npos) << r.out;
    }
    std::printf("%s\n", r.out.c_str());
  }
}

TEST(AllreduceGpuTest, OneGpuMeasuresNcclAndSaysBusBandwidthNeedsTwo) {
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  auto r = testing::dlbench("micro allreduce --device cuda --max-bytes 1M");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("over 1 rank (single)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("needs 2+ ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Wrong elements: 0"), std::string::npos) << r.out;
}

// Two GPUs, a thread each, as run_replicas drives them.
struct TwoGpus {
  std::unique_ptr<backend::cuda::CudaBackend> b0 = std::make_unique<backend::cuda::CudaBackend>(0);
  std::unique_ptr<backend::cuda::CudaBackend> b1 = std::make_unique<backend::cuda::CudaBackend>(1);
  std::vector<std::unique_ptr<dist::Communicator>> comms;
  TwoGpus() {
    backend::cuda::CudaBackend* both[] = {b0.get(), b1.get()};
    comms = dist::make_local_nccl_communicators(both);
  }
  backend::cuda::CudaBackend& backend(int r) { return r == 0 ? *b0 : *b1; }
};

TEST(AllreduceGpuTest, BroadcastAllgatherAndSumOnTwoGpus) {
  if (gpu_count() < 2) GTEST_SKIP() << "needs 2 GPUs";
  TwoGpus g;
  ASSERT_EQ(g.comms[1]->rank(), 1);
  ASSERT_EQ(g.comms[0]->size(), 2);
  EXPECT_EQ(g.comms[0]->name().rfind("nccl 2.", 0), 0u) << g.comms[0]->name();
  auto replica = [&](int r) {
    backend::cuda::CudaBackend& b = g.backend(r);
    dist::Communicator& comm = *g.comms[r];
    Buffer buffer(b.allocator(), 1000 * sizeof(float));
    Tensor t(buffer.data(), Shape{1000}, DType::kF32, b.device());
    std::vector<float> host(1000);
    for (int i = 0; i < 1000; ++i) host[i] = static_cast<float>(i + 1000 * r);
    b.from_host(host.data(), t);
    comm.broadcast(t, 1);  // everyone now holds rank 1's
    comm.allreduce_sum(t);
    comm.wait();
    b.to_host(t, host.data());
    for (int i = 0; i < 1000; ++i) EXPECT_EQ(host[i], 2.0f * (i + 1000)) << i;
    EXPECT_EQ(comm.allgather(0.5 + r), (std::vector<double>{0.5, 1.5}));
    EXPECT_EQ(comm.allgather(std::uint64_t{7} + r), (std::vector<std::uint64_t>{7, 8}));
    comm.barrier();
  };
  std::thread other(replica, 1);
  replica(0);
  other.join();
}

TEST(AllreduceGpuTest, AbortFromAnotherThreadEndsAWaitingCollective) {
  if (gpu_count() < 2) GTEST_SKIP() << "needs 2 GPUs";
  TwoGpus g;
  // Both connect first (NCCL sets up links in the first collective), then rank 0 waits in a
  // host collective that rank 1 never joins.
  std::thread other([&] { g.comms[1]->barrier(); });
  g.comms[0]->barrier();
  other.join();
  auto waiting = std::async(std::launch::async, [&] {
    try {
      g.comms[0]->allgather(1.0);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("returned without an error");
  });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(500)), std::future_status::timeout);
  for (auto& c : g.comms) c->abort();  // what run_replicas does when a replica fails
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_NE(waiting.get(), "returned without an error");
  Buffer buffer(g.b0->allocator(), 16);
  Tensor t(buffer.data(), Shape{4}, DType::kF32, g.b0->device());
  EXPECT_THROW(g.comms[0]->allreduce_sum(t), Error);
}

TEST(AllreduceGpuTest, SameGpuTwiceIsRefused) {
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  backend::cuda::CudaBackend b(0);
  backend::cuda::CudaBackend* twice[] = {&b, &b};
  EXPECT_THROW(dist::make_local_nccl_communicators(twice), Error);
}

}  // namespace
}  // namespace dlbench

// Data parallelism over MPI on CPUs, run by CTest as `mpirun -np 2 <this test>`.
//
// One training step with two replicas must leave the weights bit-identical on both ranks and
// equal, within fp32 rounding, to one process training on the two ranks' batches together:
// - VGG16 has no batch norm, so that process is a plain step on the concatenated batch of 16.
// - ResNet-50's batch norm keeps its statistics per replica (as the published multi-GPU setups
//   do), so its single-process equivalent normalizes each half on its own: the mean of two
//   single-replica steps from the same weights, one per half. After a first step (momentum
//   buffer zero) the SGD update is linear in the gradient, so that mean is the update on the
//   averaged gradient of the whole batch.
// The comparison is on the update (w1 - w0), not on w1, whose size hides a wrong update.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/checked.h"
#include "engine/data/synthetic.h"
#include "engine/dist/mpi_communicator.h"
#include "engine/dist/mpi_session.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"

namespace dlbench {
namespace {

constexpr std::int64_t kBatchPerRank = 8;
constexpr std::uint64_t kSeed = 42;
constexpr std::uint64_t kDataSeed = 1000;  // rank r reads the batch of seed kDataSeed + r
constexpr double kUpdateTolerance = 1e-4;  // relative, on the norm of the update's difference

struct Case {
  const char* model;
  int width_divisor;
  bool per_replica_statistics;  // batch norm: the reference normalizes each half alone
};

dist::MpiSession* g_session = nullptr;

models::ModelConfig model_config(const Case& c, std::int64_t batch) {
  models::ModelConfig mc;
  mc.batch = batch;
  mc.size = 32;
  mc.width_divisor = c.width_divisor;
  return models::resolve(models::find_model(c.model), mc);
}

std::vector<float> host(backend::Backend& be, const Tensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  be.to_host(t, out.data());
  return out;
}

// The batch rank r trains on, on the host: images then labels.
struct HostBatch {
  std::vector<float> images;
  std::vector<std::int32_t> labels;
};
HostBatch rank_batch(backend::Backend& be, const Case& c, int rank) {
  models::ModelConfig mc = model_config(c, kBatchPerRank);
  const nn::Graph graph = models::find_model(c.model).build(mc);
  const auto& specs = graph.input_specs();
  Buffer images(be.allocator(), checked_bytes(specs[0].shape, specs[0].dtype));
  Buffer labels(be.allocator(), checked_bytes(specs[1].shape, specs[1].dtype));
  const Tensor batch[] = {Tensor(images.data(), specs[0].shape, specs[0].dtype, be.device()),
                          Tensor(labels.data(), specs[1].shape, specs[1].dtype, be.device())};
  data::SyntheticSource source(specs, kDataSeed + static_cast<std::uint64_t>(rank));
  source.fill(be, batch);
  HostBatch out{host(be, batch[0]), std::vector<std::int32_t>(kBatchPerRank)};
  be.to_host(batch[1], out.labels.data());
  return out;
}

// One step of a network of `batch` samples on the given samples; returns the weights after.
std::vector<float> step_on(backend::Backend& be, const Case& c, const HostBatch& batch,
                           std::int64_t samples, dist::Communicator* comm,
                           std::vector<float>* initial = nullptr) {
  models::ModelConfig mc = model_config(c, samples);
  nn::TrainerConfig nc;
  nc.seed = kSeed;
  nc.optimizer.learning_rate = 0.01f;
  nc.optimizer.weight_decay = 1e-4f;
  nc.communicator = comm;
  nn::Trainer net(models::find_model(c.model).build(mc), be, nc);
  be.from_host(batch.images.data(), net.inputs()[0]);
  be.from_host(batch.labels.data(), net.inputs()[1]);
  if (initial) *initial = host(be, net.flat_weights());
  net.train_step();
  EXPECT_TRUE(std::isfinite(net.loss()));
  return host(be, net.flat_weights());
}

// |a - b| / |b - w0| over the updates a - w0 and b - w0.
double update_difference(const std::vector<float>& w0, const std::vector<float>& a,
                         const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < w0.size(); ++i) {
    const double ua = double(a[i]) - w0[i], ub = double(b[i]) - w0[i];
    diff += (ua - ub) * (ua - ub);
    norm += ub * ub;
  }
  return std::sqrt(diff) / std::sqrt(norm);
}

void expect_data_parallel_step_matches(const Case& c) {
  ASSERT_EQ(g_session->size(), 2) << "run with mpirun -np 2";
  auto be = backend::make_backend(Device::cpu());
  auto comm = dist::make_mpi_communicator(*g_session);
  const int rank = comm->rank();

  std::vector<float> w0;
  const std::vector<float> w1 =
      step_on(*be, c, rank_batch(*be, c, rank), kBatchPerRank, comm.get(), &w0);

  // Bit-identical: rank 0's weights reach every rank and are compared word for word.
  std::vector<float> root = w1;
  Tensor root_tensor(root.data(), {static_cast<std::int64_t>(root.size())}, DType::kF32,
                     Device::cpu());
  comm->broadcast(root_tensor, 0);
  std::uint64_t differing = 0;
  for (std::size_t i = 0; i < w1.size(); ++i)
    differing += std::memcmp(&w1[i], &root[i], sizeof(float)) != 0;
  const std::vector<std::uint64_t> all = comm->allgather(differing);
  EXPECT_EQ(all[1], 0u) << "weights differ from rank 0's in " << all[1] << " of " << w1.size();

  // The single-process equivalent, computed on rank 0 (rank 1 waits at the barrier).
  if (rank == 0) {
    const HostBatch a = rank_batch(*be, c, 0), b = rank_batch(*be, c, 1);
    std::vector<float> reference;
    if (c.per_replica_statistics) {
      const std::vector<float> wa = step_on(*be, c, a, kBatchPerRank, nullptr);
      const std::vector<float> wb = step_on(*be, c, b, kBatchPerRank, nullptr);
      for (std::size_t i = 0; i < wa.size(); ++i) reference.push_back(0.5f * (wa[i] + wb[i]));
    } else {
      HostBatch both = a;
      both.images.insert(both.images.end(), b.images.begin(), b.images.end());
      both.labels.insert(both.labels.end(), b.labels.begin(), b.labels.end());
      reference = step_on(*be, c, both, 2 * kBatchPerRank, nullptr);
    }
    const double d = update_difference(w0, w1, reference);
    std::printf("%s: 2 replicas vs one process, relative difference of the update %.3g\n", c.model,
                d);
    EXPECT_LT(d, kUpdateTolerance);
  }
  comm->barrier();
}

TEST(MpiDataParallelTest, ResNet50StepMatchesOneProcessWithPerReplicaBatchNorm) {
  expect_data_parallel_step_matches({"resnet50", 1, true});
}

TEST(MpiDataParallelTest, Vgg16StepMatchesOneProcessOnTheConcatenatedBatch) {
  expect_data_parallel_step_matches({"vgg16", 8, false});
}

}  // namespace
}  // namespace dlbench

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  dlbench::dist::MpiSession session;
  dlbench::g_session = &session;
  // One report: rank 1's failures still fail the job through its exit code.
  if (session.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}

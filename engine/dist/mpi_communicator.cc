#include "engine/dist/mpi_communicator.h"

#include <algorithm>
#include <climits>

#include "engine/core/error.h"

namespace dlbench::dist {
namespace {

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(const MpiSession& session) : session_(session) {}

  int rank() const override { return session_.rank(); }
  int size() const override { return session_.size(); }
  std::string name() const override { return "mpi (" + session_.library() + ")"; }

  void allreduce_sum(const Tensor& t) override {
    if (t.device().type == DeviceType::kCpu && t.dtype() == DType::kI32) {
      std::int32_t* counts = t.data_as<std::int32_t>();
      for_each_chunk(
          t, [&](std::int64_t done, int count) { session_.allreduce_sum(counts + done, count); });
      return;
    }
    check(t, "allreduce_sum");
    float* data = t.data_as<float>();
    for_each_chunk(
        t, [&](std::int64_t done, int count) { session_.allreduce_sum(data + done, count); });
  }
  void wait() override {}  // the CPU backend's ops and MPI's calls are done when they return
  void broadcast(const Tensor& t, int root) override {
    check(t, "broadcast");
    float* data = t.data_as<float>();
    for_each_chunk(t, [&](std::int64_t done, int count) {
      session_.broadcast_bytes(data + done, count * static_cast<int>(sizeof(float)), root);
    });
  }
  std::vector<double> allgather(double value) override { return session_.allgather(value); }
  std::vector<std::uint64_t> allgather(std::uint64_t value) override {
    std::vector<std::uint64_t> out;
    for (unsigned long long v : session_.allgather(static_cast<unsigned long long>(value)))
      out.push_back(v);
    return out;
  }
  void abort() noexcept override {}  // one replica per process: the failing process exits

 private:
  // MPI counts are ints, and a broadcast counts bytes: chunks of at most INT_MAX bytes.
  template <class F>
  static void for_each_chunk(const Tensor& t, F&& f) {
    constexpr std::int64_t kChunk = INT_MAX / static_cast<std::int64_t>(sizeof(float));
    for (std::int64_t done = 0; done < t.numel();) {
      const int count = static_cast<int>(std::min(t.numel() - done, kChunk));
      f(done, count);
      done += count;
    }
  }
  static void check(const Tensor& t, const char* op) {
    if (t.device().type != DeviceType::kCpu || t.dtype() != DType::kF32)
      throw Error(ErrorKind::kUsage, std::string("mpi ") + op + " takes f32 tensors on the CPU",
                  "GPUs communicate through NCCL");
  }
  const MpiSession& session_;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(const MpiSession& session) {
  return std::make_unique<MpiCommunicator>(session);
}

}  // namespace dlbench::dist

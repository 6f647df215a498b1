#include "engine/dist/mpi_communicator.h"

#include <mpi.h>

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
    check(t, "allreduce_sum");
    // MPI counts are ints: reduce in chunks below INT_MAX elements.
    float* data = t.data_as<float>();
    for (std::int64_t done = 0; done < t.numel();) {
      const int count = static_cast<int>(std::min<std::int64_t>(t.numel() - done, INT_MAX));
      if (MPI_Allreduce(MPI_IN_PLACE, data + done, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) !=
          MPI_SUCCESS)
        throw Error(ErrorKind::kExternal, "MPI_Allreduce failed");
      done += count;
    }
  }
  void wait() override {}  // the CPU backend's ops and MPI's calls are done when they return
  void broadcast(const Tensor& t, int root) override {
    check(t, "broadcast");
    float* data = t.data_as<float>();
    for (std::int64_t done = 0; done < t.numel();) {
      const int count = static_cast<int>(std::min<std::int64_t>(t.numel() - done, INT_MAX));
      session_.broadcast_bytes(data + done, count * static_cast<int>(sizeof(float)), root);
      done += count;
    }
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

#include "engine/dist/replicas.h"

#include <exception>
#include <mutex>
#include <thread>

#include "engine/dist/mpi_communicator.h"
#include "engine/dist/mpi_session.h"
#if DLBENCH_HAVE_CUDA
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/dist/nccl_communicator.h"
#endif

namespace dlbench::dist {
namespace {

#if DLBENCH_HAVE_CUDA
backend::cuda::CudaBackend& as_cuda(backend::Backend& b) {
  auto* cuda = dynamic_cast<backend::cuda::CudaBackend*>(&b);
  DLBENCH_CHECK(cuda != nullptr, "an NCCL replica runs on a CUDA backend");
  return *cuda;
}
#endif

[[noreturn]] void no_nccl() {
  throw Error(ErrorKind::kResource,
              "data parallelism on GPUs needs NCCL; this dlbench was built "
              "without CUDA",
              "use the CPU device with mpirun, or rebuild with the CUDA toolkit",
              {Setting::kDevice, "cpu"});
}

void run_mpi(const LaunchPlan& plan, const std::function<void(Replica&)>& fn) {
  MpiSession* session = MpiSession::current();
  DLBENCH_CHECK(session != nullptr, "the MPI launch mode runs inside an MpiSession");
  DLBENCH_CHECK(plan.devices.size() == 1, "one device per MPI rank");
  auto backend = backend::make_backend(plan.devices[0]);
  std::unique_ptr<Communicator> comm;
  if (plan.devices[0].type == DeviceType::kCpu) {
    comm = make_mpi_communicator(*session);
  } else {
#if DLBENCH_HAVE_CUDA
    NcclId id{};
    if (session->rank() == 0) id = make_nccl_id();
    session->broadcast_bytes(id.data(), static_cast<int>(id.size()), 0);
    comm = make_nccl_communicator(as_cuda(*backend), id, session->rank(), session->size());
#else
    no_nccl();
#endif
  }
  Replica replica{session->rank(), session->size(), *backend, comm.get()};
  fn(replica);
}

void run_threads(const LaunchPlan& plan, const std::function<void(Replica&)>& fn) {
#if DLBENCH_HAVE_CUDA
  std::vector<std::unique_ptr<backend::Backend>> backends;
  std::vector<backend::cuda::CudaBackend*> cuda;
  for (const Device& d : plan.devices) {
    DLBENCH_CHECK(d.type == DeviceType::kCuda, "a thread per GPU");
    backends.push_back(backend::make_backend(d));
    cuda.push_back(&as_cuda(*backends.back()));
  }
  std::vector<std::unique_ptr<Communicator>> comms = make_local_nccl_communicators(cuda);
  std::mutex mutex;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  const int size = static_cast<int>(plan.devices.size());
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        Replica replica{r, size, *backends[r], comms[r].get()};
        fn(replica);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        // The first failure is the cause; the others are usually its aborted collectives.
        if (!first) {
          first = std::current_exception();
          for (auto& c : comms) c->abort();
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (first) std::rethrow_exception(first);
#else
  (void)plan, (void)fn;
  no_nccl();
#endif
}

}  // namespace

void run_replicas(const LaunchPlan& plan, const std::function<void(Replica&)>& fn) {
  switch (plan.mode) {
    case LaunchMode::kSingle: {
      DLBENCH_CHECK(plan.devices.size() == 1, "one device");
      auto backend = backend::make_backend(plan.devices[0]);
      Replica replica{0, 1, *backend, nullptr};
      fn(replica);
      return;
    }
    case LaunchMode::kMpi:
      return run_mpi(plan, fn);
    case LaunchMode::kThreads:
      return run_threads(plan, fn);
  }
}

}  // namespace dlbench::dist

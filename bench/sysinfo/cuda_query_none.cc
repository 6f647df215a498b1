// CPU-only builds: the CUDA runtime is not part of this binary.
#include "bench/sysinfo/gpu_info.h"

namespace dlbench::sysinfo {

CudaQuery query_cuda() {
  const std::string why = "this dlbench was built without CUDA";
  CudaQuery q;
  q.unavailable_reason = why;
  q.runtime_version = Reported<std::string>::missing(why);
  q.driver_api_version = Reported<std::string>::missing(why);
  q.cudnn = Reported<std::string>::missing(why);
  q.cublas = Reported<std::string>::missing(why);
  q.nccl = Reported<std::string>::missing(why);
  return q;
}

}  // namespace dlbench::sysinfo

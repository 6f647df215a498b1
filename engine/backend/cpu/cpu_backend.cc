#include "engine/backend/cpu/cpu_backend.h"

#include <string>

namespace dlbench::backend::cpu {

CpuBackend::CpuBackend() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

CpuBackend::~CpuBackend() = default;

std::string CpuBackend::name() const {
  const dnnl_version_t* v = dnnl::version();
  return "cpu (oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + ")";
}

void CpuBackend::synchronize() {
  stream_.wait();
}

void CpuBackend::execute(const char* op, const dnnl::primitive& primitive, const Args& args) {
  try {
    primitive.execute(stream_, args);
    stream_.wait();
  } catch (const dnnl::error& e) {
    rethrow_dnnl_error(e, op);
  }
}

dnnl::memory CpuBackend::mem(const dnnl::memory::desc& md, const Tensor& t) const {
  return wrap(md, engine_, t.data());
}

}  // namespace dlbench::backend::cpu

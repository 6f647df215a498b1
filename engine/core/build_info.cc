#include "engine/core/build_info.h"

#include "dlbench_git_hash.h"

namespace dlbench {
namespace {

std::string compiler_name() {
#if defined(__clang__)
  return std::string("Clang ") + __clang_version__;
#elif defined(__GNUC__)
  return "GCC " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "unknown compiler";
#endif
}

}  // namespace

const BuildInfo& build_info() {
  static const BuildInfo info{
      .version = DLBENCH_VERSION,
      .git_hash = DLBENCH_GIT_HASH,
      .compiler = compiler_name(),
      .build_type = DLBENCH_BUILD_TYPE,
      .cuda = DLBENCH_WITH_CUDA != 0,
      .cuda_architectures = DLBENCH_CUDA_ARCHITECTURES,
  };
  return info;
}

}  // namespace dlbench

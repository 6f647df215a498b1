// What this dlbench binary is: version, git commit, compiler and build options.
#pragma once

#include <string>

namespace dlbench {

struct BuildInfo {
  std::string version;     // e.g. "0.1.0"
  std::string git_hash;    // short hash, "-dirty" when built from a modified tree
  std::string compiler;    // e.g. "GCC 12.2.0"
  std::string build_type;  // CMake build type
  bool cuda = false;       // built with the CUDA backend
  std::string cuda_architectures;
};

const BuildInfo& build_info();

}  // namespace dlbench

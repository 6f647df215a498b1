// What a backend spent measuring ops to choose how to run them (run output's start-up row).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dlbench::backend {

// Time a backend spent choosing how to run ops by measuring them (CUDA: each new convolution
// shape's algorithm search), in parts; all zero where a backend measures nothing.
struct PlanningTime {
  struct Part {
    std::string tag;    // "cudnn_find": a metric name's last part
    std::string label;  // "cuDNN Find"
    double seconds = 0;
  };
  std::size_t shapes = 0;  // op shapes measured
  std::vector<Part> parts;
  double seconds() const {
    double s = 0;
    for (const Part& p : parts) s += p.seconds;
    return s;
  }
};

}  // namespace dlbench::backend

#include "engine/nn/step_observer.h"

namespace dlbench::nn {

const char* to_string(StepPart part) {
  switch (part) {
    case StepPart::kForward:
      return "forward";
    case StepPart::kLoss:
      return "loss";
    case StepPart::kBackward:
      return "backward";
    case StepPart::kGradientSync:
      return "gradient sync";
    case StepPart::kUpdate:
      return "update";
  }
  return "?";
}

}  // namespace dlbench::nn

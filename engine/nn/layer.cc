#include "engine/nn/layer.h"

namespace dlbench::nn {

std::vector<OutputInfo> Layer::outputs(std::span<const ValueInfo> inputs) const {
  std::vector<Shape> shapes;
  for (const ValueInfo& v : inputs) shapes.push_back(v.shape);
  return {{output_shape(shapes), inputs.empty() ? DType::kF32 : inputs[0].dtype}};
}

Shape Layer::output_shape(std::span<const Shape>) const {
  throw Error(ErrorKind::kInternal,
              std::string(kind()) + ": a layer overrides output_shape() or outputs()");
}

}  // namespace dlbench::nn

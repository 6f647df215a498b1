// Which pass of a convolution a plan, a route or a graph-API engine runs: shared by the legacy
// route (cuda_conv.cc), the matrix-product route and the graph-API route (cudnn_graph_conv.h).
#pragma once

namespace dlbench::backend::cuda {

enum class ConvDirection { kForward, kBackwardData, kBackwardFilter };

}  // namespace dlbench::backend::cuda

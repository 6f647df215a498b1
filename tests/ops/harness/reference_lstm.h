// The float64 reference of Backend::lstm_forward and _backward: the cell's equations step by
// step, and backpropagation through time written from the chain rule (no shared code with the
// backends but the parameters and the weights' layout LstmParams describes).
#pragma once

#include <vector>

#include "engine/backend/op_params.h"

namespace dlbench::ref {

using Vec = std::vector<double>;

struct LstmForward {
  Vec y, hn, cn;
};
// h0 and c0 [batch, hidden]: empty means zeros.
LstmForward lstm_forward(const backend::LstmParams& p, const Vec& x, const Vec& w, const Vec& h0,
                         const Vec& c0);

struct LstmGrads {
  Vec dx, dh0, dc0, dw;
};
// From dy and the last states' gradients dhn and dcn (empty: zeros).
LstmGrads lstm_backward(const backend::LstmParams& p, const Vec& x, const Vec& w, const Vec& h0,
                        const Vec& c0, const Vec& dy, const Vec& dhn, const Vec& dcn);

}  // namespace dlbench::ref

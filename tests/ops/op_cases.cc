#include "tests/ops/op_cases.h"

#include <sstream>

namespace dlbench::op_cases {

backend::Conv2dParams conv(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                           std::int64_t k, std::int64_t r, std::int64_t s, int stride, int pad,
                           bool bias, int dilation) {
  backend::Conv2dParams p;
  p.n = n, p.h = h, p.w = w, p.c = c, p.k = k, p.r = r, p.s = s;
  p.stride_h = p.stride_w = stride;
  p.pad_h = p.pad_w = pad;
  p.dilation_h = p.dilation_w = dilation;
  p.bias = bias;
  return p;
}

backend::MatmulParams mm(std::int64_t m, std::int64_t k, std::int64_t n, bool bias,
                         backend::Activation act) {
  backend::MatmulParams p;
  p.m = m, p.k = k, p.n = n, p.bias = bias, p.activation = act;
  return p;
}

backend::BatchNormParams bn(std::int64_t rows, std::int64_t channels, float momentum) {
  backend::BatchNormParams p;
  p.rows = rows, p.channels = channels, p.momentum = momentum;
  return p;
}

// std::ostringstream rather than string +: GCC 12 warns falsely on chains of it.
std::string name(const backend::Conv2dParams& p) {
  std::ostringstream o;
  o << "n" << p.n << "_" << p.h << "x" << p.w << "x" << p.c << "_k" << p.k << "_" << p.r << "x"
    << p.s << "_s" << p.stride_h << "_p" << p.pad_h << "_d" << p.dilation_h
    << (p.bias ? "_bias" : "_nobias");
  return o.str();
}

std::string name(const backend::MatmulParams& p) {
  std::ostringstream o;
  o << "m" << p.m << "_k" << p.k << "_n" << p.n << (p.bias ? "_bias" : "_nobias")
    << (p.activation == backend::Activation::kRelu ? "_relu" : "");
  return o.str();
}

std::string name(const backend::BatchNormParams& p) {
  std::ostringstream o;
  o << "rows" << p.rows << "_c" << p.channels << "_m" << static_cast<int>(p.momentum * 100);
  return o.str();
}

}  // namespace dlbench::op_cases

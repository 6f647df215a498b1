// Builders and printable names of op cases, shared by the CPU op tests and the GPU op tests so
// that both describe a case the same way (the name is the test's name).
#pragma once

#include <cstdint>
#include <string>

#include "engine/backend/op_params.h"

namespace dlbench::op_cases {

backend::Conv2dParams conv(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c,
                           std::int64_t k, std::int64_t r, std::int64_t s, int stride, int pad,
                           bool bias, int dilation = 1);
backend::MatmulParams mm(std::int64_t m, std::int64_t k, std::int64_t n, bool bias,
                         backend::Activation act);
backend::BatchNormParams bn(std::int64_t rows, std::int64_t channels, float momentum = 0.1f);

std::string name(const backend::Conv2dParams& p);
std::string name(const backend::MatmulParams& p);
std::string name(const backend::BatchNormParams& p);

}  // namespace dlbench::op_cases

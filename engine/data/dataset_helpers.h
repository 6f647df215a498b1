// What every file-backed dataset needs: finding the graph input it fills, writing real numbers
// into it, and numbers a reader can take in at a glance in its one-line description.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/data/input_spec.h"

namespace dlbench::data {

// The index of the graph's i32 [n] input `name`; an internal error naming `dataset` when the
// graph has none (a model and its data disagree).
std::size_t int_input_index(const std::vector<InputSpec>& inputs, const char* name,
                            const char* dataset);
// The index of the graph's rank-`rank` input `name` of any dtype; the same internal error when
// there is none.
std::size_t input_index(const std::vector<InputSpec>& inputs, const char* name, int rank,
                        const char* dataset);

std::string with_commas(std::int64_t v);  // 1234567 -> "1,234,567"

// Writes host f32 values into a float input of any precision: directly for f32, through an f32
// copy on the device and the backend's cast for f16 and bf16 (waits for the copy to finish).
void from_host_floats(backend::Backend& backend, const float* host,
                      const Tensor& input);  // 1234567 -> "1,234,567"

}  // namespace dlbench::data

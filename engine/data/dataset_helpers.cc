#include "engine/data/dataset_helpers.h"

#include "engine/core/error.h"

namespace dlbench::data {

std::size_t int_input_index(const std::vector<InputSpec>& inputs, const char* name,
                            const char* dataset) {
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k].name == name && inputs[k].dtype == DType::kI32 && inputs[k].shape.rank() == 1)
      return k;
  DLBENCH_CHECK(false, std::string(dataset) + ": the graph has no i32 [n] input '" + name + "'");
  return 0;
}

std::string with_commas(std::int64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

void from_host_floats(backend::Backend& backend, const float* host, const Tensor& input) {
  if (input.dtype() == DType::kF32) {
    backend.from_host(host, input);
    return;
  }
  Buffer staging(backend.allocator(), static_cast<std::size_t>(input.numel()) * sizeof(float));
  const Tensor f32(staging.data(), input.shape(), DType::kF32, backend.device());
  backend.from_host(host, f32);
  backend.cast(f32, input);
  backend.synchronize();  // the staging buffer goes when this returns
}

}  // namespace dlbench::data

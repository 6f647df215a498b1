#include "engine/data/dataset_helpers.h"

#include <optional>

#include "engine/core/error.h"

namespace dlbench::data {

namespace {

std::size_t find_input(const std::vector<InputSpec>& inputs, const char* name, int rank,
                       std::optional<DType> dtype, const std::string& what, const char* dataset) {
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k].name == name && inputs[k].shape.rank() == rank &&
        (!dtype || inputs[k].dtype == *dtype))
      return k;
  DLBENCH_CHECK(false,
                std::string(dataset) + ": the graph has no " + what + " input '" + name + "'");
  return 0;
}

}  // namespace

std::size_t int_input_index(const std::vector<InputSpec>& inputs, const char* name,
                            const char* dataset) {
  return find_input(inputs, name, 1, DType::kI32, "i32 [n]", dataset);
}

std::size_t input_index(const std::vector<InputSpec>& inputs, const char* name, int rank,
                        const char* dataset) {
  return find_input(inputs, name, rank, std::nullopt, "rank-" + std::to_string(rank), dataset);
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

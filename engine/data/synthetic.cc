#include "engine/data/synthetic.h"

#include "engine/core/checked.h"

namespace dlbench::data {

SyntheticSource::SyntheticSource(backend::Backend& backend, const Shape& image_shape,
                                 std::int64_t classes, std::uint64_t seed, DType image_dtype)
    : images_(backend.allocator(),
              checked_bytes(image_shape, image_dtype)),
      labels_(backend.allocator(),
              static_cast<std::size_t>(image_shape[0]) * sizeof(std::int32_t)) {
  batch_.images = Tensor(images_.data(), image_shape, image_dtype, backend.device());
  batch_.labels = Tensor(labels_.data(), {image_shape[0]}, DType::kI32, backend.device());
  backend.fill_normal(batch_.images, 0.0f, 1.0f, seed);
  backend.fill_uniform_int(batch_.labels, 0, classes, seed + 1);
}

}  // namespace dlbench::data

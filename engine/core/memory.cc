#include "engine/core/memory.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "engine/core/error.h"

namespace dlbench {

namespace {

std::string gib(std::size_t bytes) {
  char size[32];
  std::snprintf(size, sizeof size, "%.2f GiB", bytes / double(1 << 30));
  return size;
}

}  // namespace

void* HostAllocator::allocate(std::size_t bytes) {
  void* ptr = std::aligned_alloc(kMemoryAlignment, align_up(bytes == 0 ? 1 : bytes));
  if (ptr == nullptr)
    throw Error(ErrorKind::kResource, "out of host memory: asked for " + gib(bytes),
                "use a smaller batch or free memory", {Setting::kBatch, ""});
  return ptr;
}

void DeviceAllocator::check_limit(std::size_t bytes) const {
  const std::size_t held = in_use_.load();
  if (limit_ == 0 || (bytes <= limit_ && held <= limit_ - bytes)) return;
  throw Error(ErrorKind::kResource,
              to_string(device()) + " is out of memory: asked for " + gib(bytes) + " with " +
                  gib(held) + " in use of its " + gib(limit_) + " limit",
              "use a smaller batch or a higher memory limit", {Setting::kBatch, ""});
}

void HostAllocator::deallocate(void* ptr) noexcept {
  std::free(ptr);
}

void DeviceAllocator::count_allocated(std::size_t bytes) noexcept {
  const std::size_t now = in_use_ += bytes;
  std::size_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
}

Buffer::Buffer(DeviceAllocator& allocator, std::size_t bytes)
    : allocator_(&allocator),
      data_((allocator.check_limit(bytes), allocator.allocate(bytes))),
      bytes_(bytes) {
  allocator.count_allocated(bytes);
}

Buffer::~Buffer() {
  if (data_) allocator_->deallocate(data_), allocator_->count_freed(bytes_);
}

Buffer::Buffer(Buffer&& other) noexcept
    : allocator_(other.allocator_),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (data_) allocator_->deallocate(data_), allocator_->count_freed(bytes_);
    allocator_ = other.allocator_;
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void* Arena::at(std::size_t offset, std::size_t bytes) const {
  DLBENCH_CHECK(offset + bytes <= buffer_.bytes(), "arena offset beyond the planned capacity");
  return static_cast<char*>(buffer_.data()) + offset;
}

}  // namespace dlbench

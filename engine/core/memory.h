// Device memory: an allocator per device, RAII buffers, and an arena that sub-allocates one
// reservation at offsets a planner chose (so the peak is known before the first step).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>

#include "engine/core/device.h"

namespace dlbench {

constexpr std::size_t kMemoryAlignment = 256;  // cuDNN/cuBLAS like 256-byte aligned pointers

constexpr std::size_t align_up(std::size_t bytes, std::size_t alignment = kMemoryAlignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

// Plain allocations on one device. allocate() throws Error(kResource) with the size asked
// for when the device is out of memory.
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  virtual Device device() const = 0;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* ptr) noexcept = 0;
  // Bytes the device has free now, where it can say (a GPU); nullopt for host memory.
  virtual std::optional<std::size_t> free_bytes() const { return std::nullopt; }

  // A cap on what Buffers may hold at once on this allocator; 0 (the default) for none. A
  // Buffer beyond it fails with the same Error(kResource) an exhausted device gives, before
  // anything is allocated: a smaller device imitated, so a max-batch search can run (and be
  // tested) on a CPU with a few hundred MiB.
  void set_limit(std::size_t bytes) { limit_ = bytes; }
  std::size_t limit() const { return limit_; }

  // Bytes that Buffers hold on this allocator now, and the most they ever held at once: the
  // peak a run reports (like a framework allocator's peak; a CUDA context is not in it).
  std::size_t bytes_in_use() const { return in_use_.load(); }
  std::size_t peak_bytes() const { return peak_.load(); }
  // Starts a new peak from what is held now (runs measure theirs after the warm-up, which
  // holds the one-off scratch of algorithm searches).
  void reset_peak() { peak_ = in_use_.load(); }

 private:
  friend class Buffer;
  void check_limit(std::size_t bytes) const;
  void count_allocated(std::size_t bytes) noexcept;
  void count_freed(std::size_t bytes) noexcept { in_use_ -= bytes; }
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> peak_{0};
  std::size_t limit_ = 0;
};

// Host memory, kMemoryAlignment-aligned.
class HostAllocator final : public DeviceAllocator {
 public:
  Device device() const override { return Device::cpu(); }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr) noexcept override;
};

// One owned allocation.
class Buffer {
 public:
  Buffer() = default;
  Buffer(DeviceAllocator& allocator, std::size_t bytes);
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  DeviceAllocator* allocator_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// One reservation; pointers are handed out at offsets (checked against the capacity).
class Arena {
 public:
  Arena(DeviceAllocator& allocator, std::size_t capacity) : buffer_(allocator, capacity) {}
  void* at(std::size_t offset, std::size_t bytes) const;
  std::size_t capacity() const { return buffer_.bytes(); }

 private:
  Buffer buffer_;
};

}  // namespace dlbench

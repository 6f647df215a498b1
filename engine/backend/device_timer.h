// DeviceTimer: numbered marks on a backend's stream and the device time between them, for
// timing parts of a step without waiting for the device in between (per-layer profiling).
//
// mark(i) records mark i after the work issued to the backend so far: on CUDA an event
// recorded on the backend's stream (created up front, so marking allocates nothing), on the
// CPU the host's steady clock (CPU ops have finished when they return). elapsed_ms reads two
// marks once the work before them has finished (after Backend::synchronize()); a mark may be
// recorded again for the next step after it was read.
//
// What a span measures: the time the stream took from one mark to the next, which includes
// any time the device sat idle waiting for the host to issue the next op.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace dlbench::backend {

class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  // How many marks the timer holds (the `marks` of Backend::make_timer).
  virtual std::size_t capacity() const = 0;
  // Records mark `index` (< capacity()) after the work issued so far.
  virtual void mark(std::size_t index) = 0;
  // Milliseconds from mark `from` to mark `to` (negative when `to` came first); both must be
  // recorded, and the device synchronized since.
  virtual double elapsed_ms(std::size_t from, std::size_t to) const = 0;
  // "CUDA events on cuda:0's stream", "host steady clock": what the marks read.
  virtual std::string clock() const = 0;
};

// Marks read from the host's steady clock: right for a backend whose ops have finished when
// they return (the CPU backend).
class HostClockTimer final : public DeviceTimer {
 public:
  explicit HostClockTimer(std::size_t marks) : marks_(marks), recorded_(marks, false) {}
  std::size_t capacity() const override { return marks_.size(); }
  void mark(std::size_t index) override {
    check(index, "mark");
    marks_[index] = Clock::now();
    recorded_[index] = true;
  }
  double elapsed_ms(std::size_t from, std::size_t to) const override {
    check(from, "elapsed_ms"), check(to, "elapsed_ms");
    DLBENCH_CHECK(recorded_[from] && recorded_[to], "timer mark read before it was recorded");
    return std::chrono::duration<double, std::milli>(marks_[to] - marks_[from]).count();
  }
  std::string clock() const override {
    return "host steady clock (CPU ops finish before they return)";
  }

 private:
  using Clock = std::chrono::steady_clock;
  void check(std::size_t index, const char* what) const {
    DLBENCH_CHECK(index < marks_.size(), std::string(what) + ": timer mark " +
                                             std::to_string(index) + " of " +
                                             std::to_string(marks_.size()));
  }
  std::vector<Clock::time_point> marks_;
  std::vector<bool> recorded_;
};

}  // namespace dlbench::backend

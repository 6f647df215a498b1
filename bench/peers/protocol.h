// The peer protocol: what a framework worker (peers/*.py) writes on its stdout, one JSON object
// per line, in this order:
//
// The worker is told the model's inputs (--inputs, inputs_argument below) and builds its data
// from them; its stdout then carries:
//
//   {"type": "hello", "protocol": 2, "framework": "pytorch", "versions": {...},
//    "device": "NVIDIA H100 80GB HBM3", "parameters": 25557032}
//   {"type": "measure"}                                  the measured phase begins (optional)
//   {"type": "step", "index": 0, "duration_ms": 81.2}    one per measured step, synchronized
//   {"type": "summary", "steps": 20, "measured_seconds": 1.63, "peak_memory_bytes": ...,
//    "first_loss": 6.9, "last_loss": 6.8, "compile_seconds": 41.7}    (the last only with
//    --compile)
//
// or, at any point, {"type": "error", "kind": "missing_package", "package": "torch",
// "message": "..."} and exit. The worker reports only what it timed; the harness computes
// throughput and statistics (one definition for every framework).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/data/input_spec.h"

namespace dlbench::peers {

// 2: the worker takes the model's inputs as --inputs instead of --classes.
constexpr int kProtocolVersion = 2;

// The --inputs argument: a JSON array with one object per graph input, in graph order:
//   {"name": "labels", "shape": [256], "dtype": "i32", "meaning": "class labels",
//    "distribution": {"kind": "uniform_int", "low": 0, "high": 1000}}
// (kind "normal" carries "mean" and "stddev").
std::string inputs_argument(const std::vector<data::InputSpec>& inputs);

struct Hello {
  std::string framework;
  nlohmann::json versions = nlohmann::json::object();  // library -> version string
  std::string device;
  std::int64_t parameters = 0;
};

struct Step {
  int index = 0;
  double duration_ms = 0;
};

struct Summary {
  int steps = 0;
  // Wall time from the start of the first measured step to the end of the last, device
  // synchronized: the denominator of throughput, as in the native runner.
  double measured_seconds = 0;
  std::optional<double> peak_memory_bytes;  // the framework's own allocator peak
  std::optional<double> first_loss, last_loss;
  // A compiling worker (pytorch --compile): its first step, compilation included, which runs
  // before the warm-up and is in no measured step.
  std::optional<double> compile_seconds;
  // A decoding worker (translation inference): the tokens its measured steps translated into,
  // [EOS] included, padding not.
  std::optional<double> translated_tokens;
  // A worker whose samples are sentence pairs it trains on or scores (not decodes): the source
  // and target tokens of one step's batch, [EOS] included, padding not (its synthetic batch is
  // drawn once, so every measured step has as many).
  std::optional<double> tokens_per_step;
};

// Kinds a worker may name; anything else is treated as kRuntime.
enum class WorkerErrorKind { kMissingPackage, kUsage, kOutOfMemory, kMismatch, kRuntime };

struct WorkerError {
  WorkerErrorKind kind = WorkerErrorKind::kRuntime;
  std::string message;
  std::string package;  // kMissingPackage: the Python package that could not be imported
};

enum class MessageType { kHello, kMeasure, kStep, kSummary, kError };

struct Message {
  MessageType type = MessageType::kHello;
  Hello hello;
  Step step;
  Summary summary;
  WorkerError error;
};

// Parses one line; throws dlbench::Error (external) naming the line number and what is wrong
// when the line is not JSON, not an object, has an unknown type or misses a field.
Message parse_message(const std::string& line, int line_number);

// Checks the order of messages: hello first, steps only after it, nothing after the summary.
class SessionChecker {
 public:
  // Throws dlbench::Error (external) naming the line number when `m` is out of order.
  void accept(const Message& m, int line_number);
  bool saw_hello() const { return saw_hello_; }
  bool saw_summary() const { return saw_summary_; }

 private:
  bool saw_hello_ = false;
  bool saw_summary_ = false;
  int steps_ = 0;
};

}  // namespace dlbench::peers

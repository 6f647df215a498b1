// A suite: a TOML list of runs. Every key of a [[run]] table may hold one value or an array,
// and a table stands for every combination of its arrays, so a suite stays short:
//
//   name = "quick-cpu"
//   [defaults]
//   device = "cpu"
//   warmup = 2
//   steps = 5
//   [[run]]
//   model = "resnet50"
//   mode = ["train", "infer"]
//   input = 32
//   batch = 32
//
// Keys: model, mode, precision, batch, device (or devices), input, warmup, steps, seconds,
// seed, lr, momentum, repeat (whole measurements; bench/result/repeats.h). Nothing else: an unknown
// key or table, a value of the wrong type or out of range, a [[run]] without a model, and any run
// the file expands to that runner::validated() refuses are errors naming the file and line, before
// anything is stored or run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench/result/run_config.h"

namespace dlbench::suite {

// More runs than this is a file gone wrong (a generated array), not a suite anyone will wait for.
constexpr std::size_t kMaxSuiteRuns = 10'000;

struct SuiteEntry {
  result::RunConfig config;
  // The configuration as text; --resume matches landed runs by it.
  std::string key;
  std::string label;  // "resnet50 train fp32 batch 32 on cpu"
};

struct SuiteSpec {
  std::string name;
  std::string description;
  std::string file;
  std::vector<SuiteEntry> entries;
};

// Throws dlbench::Error: resource when the file cannot be read; usage, as "FILE:LINE: what"
// with a hint in the file's terms ("e.g. batch = 32"), when the text fails the checks of
// suite_text.h, the TOML does not parse, or the suite is not valid as described above.
SuiteSpec load_suite(const std::string& path);

// The file a FILE|NAME argument means: an existing file as given, else NAME.toml in ./suites,
// then in the source tree's suites/ (compile definition DLBENCH_SUITES_DIR). Error (usage)
// listing where it looked when none exists.
std::string find_suite_file(const std::string& file_or_name);

std::string entry_key(const result::RunConfig& config);
std::string entry_label(const result::RunConfig& config);

}  // namespace dlbench::suite

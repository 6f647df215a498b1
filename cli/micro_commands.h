// dlbench micro gemm, bandwidth, transfer and p2p (micro allreduce lives in micro_command.cc):
// each registers on the `micro` subcommand; what they share sits in micro_common.cc.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/micro/micro_record.h"
#include "bench/sysinfo/machine_info.h"
#include "cli/global_options.h"
#include "cli/launch_options.h"
#include "cli/output_file.h"
#include "engine/core/device.h"

namespace dlbench::cli {

void add_micro_gemm_command(CLI::App& micro, GlobalOptions& global);
void add_micro_memory_commands(CLI::App& micro, GlobalOptions& global);  // bandwidth, transfer, p2p

// The device of the --device flag (empty: a GPU when there is one), checked to exist: cuda
// without a GPU fails with the engine's own error (exit 3; exit 2 in a CPU-only build).
Device micro_device(const LaunchOptions& launch);

// Where the result goes: the table on stdout unless --json (or the global --json) sends the
// JSON there, and/or a JSON file.
class MicroOutput {
 public:
  MicroOutput(const std::optional<std::string>& json_flag, const GlobalOptions& global);
  bool table() const { return json_path_ != "-"; }
  void write_json(const nlohmann::json& doc);

 private:
  std::string json_path_;
  std::unique_ptr<OutputFile> file_;
};

// This machine as every stored run describes it (dlbench info --json), and its parts.
struct MicroMachine {
  sysinfo::MachineInfo info;
  nlohmann::json environment;
};
MicroMachine describe_this_machine();

// Stores the record unless no_store, saying where on stderr; then, when it holds wrong
// elements, throws Error(kExternal) naming the benchmark (after the table was printed).
void store_and_judge(const micro::MicroRecordInput& input, bool no_store,
                     const GlobalOptions& global);

// Flags every micro benchmark of this file takes: --json [FILE] and --no-store.
void add_output_flags(CLI::App& cmd, std::optional<std::string>& json_path, bool& no_store);

}  // namespace dlbench::cli

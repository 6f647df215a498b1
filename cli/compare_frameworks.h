// dlbench compare --frameworks native,pytorch,jax MODEL: one workload in several frameworks,
// back to back on the same device, stored as one group and printed side by side. The flags
// that pick a peer's interpreter, worker and timeout are shared with dlbench run.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "bench/peers/peer_runner.h"
#include "cli/global_options.h"
#include "cli/launch_options.h"

namespace dlbench::cli {

// --python, --peer-worker, --peer-timeout on `cmd`. The interpreter defaults to $DLBENCH_PYTHON,
// else python3.
void add_peer_options(CLI::App& cmd, peers::PeerOptions& options);

struct FrameworkCompareOptions {
  std::string frameworks;  // "native,pytorch,jax"; empty: not a framework comparison
  std::string mode = "train";
  std::optional<std::int64_t> batch;
  std::string precision = "fp32";
  LaunchOptions launch;  // --device alone: a peer runs on one device
  int input = 0;
  int warmup = result::kDefaultWarmupSteps;
  int steps = result::kDefaultMeasuredSteps;
  bool telemetry = true;
  bool no_store = false;
  std::optional<std::string> class_weights;  // "1,2,4" (parse_class_weights)
  int beam = 1;
  peers::PeerOptions peer;
};

// Registers --frameworks and its workload flags on the compare subcommand.
std::shared_ptr<FrameworkCompareOptions> add_framework_compare_options(CLI::App& compare);

// Runs every framework on `model`, prints the table (text, or JSON with --json), stores the
// runs as one group unless --no-store. A framework that fails keeps its row (stored as a
// failed run) and the others still run; then the first failure is thrown (exit 4 for a peer).
void run_framework_compare(const FrameworkCompareOptions& options, const std::string& model,
                           const GlobalOptions& global);

}  // namespace dlbench::cli

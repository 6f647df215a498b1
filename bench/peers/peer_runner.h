// dlbench run --framework pytorch|jax: the same workload in a framework, run by an external
// worker (peers/<framework>_worker.py) that speaks the JSON-lines protocol of protocol.h. The
// harness checks the worker's architecture against the native one (parameter count), samples
// telemetry of the worker's process tree during its measured steps, and computes throughput
// and step statistics exactly as the native runner does.
#pragma once

#include <string>

#include "bench/runner/workload_runner.h"

namespace dlbench::peers {

// The frameworks `--framework` accepts; "native" is dlbench's own engine. A name with a dash is
// a variant: "pytorch-compile" runs the pytorch worker with --compile (torch.compile), so it is
// stored, compared and charted as a framework of its own.
inline constexpr const char* kFrameworks[] = {"native", "pytorch", "pytorch-compile", "jax"};
// Default for --peer-timeout: the whole worker session, start-up and warm-up included
// (framework import, cuDNN autotuning and XLA compilation take tens of seconds).
constexpr double kDefaultPeerTimeoutS = 600;

// Error (usage) unless `name` is one of kFrameworks.
void check_framework(const std::string& name);
bool is_peer(const std::string& framework);  // anything but "native"
// The flag a variant's worker runs with ("--compile" for "pytorch-compile"; empty for a plain
// framework). The worker itself is result::base_framework's.
std::string variant_flag(const std::string& framework);

struct PeerOptions {
  std::string python = "python3";  // the interpreter that runs the worker
  std::string worker;              // a worker script; empty: <peers dir>/<framework>_worker.py
  double timeout_s = kDefaultPeerTimeoutS;
};

// The folder of the worker scripts: $DLBENCH_PEERS_DIR, else peers/ next to or above the
// dlbench binary, else the source tree's peers/.
std::string peers_dir();

// Runs config.framework's worker. Throws dlbench::Error: external (exit 4) for a missing
// Python or framework package, a crash, a timeout or malformed output, with the worker's
// stderr tail; resource (3) when the worker ran out of device memory; usage (2) when it
// rejected the configuration.
result::RunResult run_peer(const result::RunConfig& config, const PeerOptions& options,
                           const runner::RunHooks& hooks = {});

}  // namespace dlbench::peers

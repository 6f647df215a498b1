// dlbench monitor [--interval S] [--json FILE] [--csv FILE] [--gpus LIST] -- CMD ARGS...
// Runs the command, samples it and the GPUs until it exits, prints a summary and exits with
// the command's exit code (128 + signal when a signal killed it; 127 when it could not be
// found, 126 when it could not be executed, as shells do).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "bench/nvml/nvml.h"
#include "bench/telemetry/sampler.h"
#include "bench/telemetry/samples_csv.h"
#include "bench/telemetry/sources.h"
#include "bench/telemetry/telemetry_json.h"
#include "bench/telemetry/window.h"
#include "cli/child_process.h"
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/telemetry_table.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"

namespace dlbench::cli {
namespace {

constexpr int kCommandNotFound = 127;
constexpr int kCommandNotExecutable = 126;
const char* kUsage =
    "dlbench monitor [--interval S] [--json FILE] [--csv FILE] [--gpus LIST] "
    "-- CMD ARGS...";

struct MonitorOptions {
  double interval_s = telemetry::kDefaultIntervalS;
  std::string json_path;
  std::string csv_path;
  std::string gpus = "all";
  std::vector<std::string> command;
};

// Checked before the command starts, so a bad path fails fast instead of after a long run; the
// content replaces an existing file only once it is all written (OutputFile).
std::unique_ptr<OutputFile> open_output(const std::string& path) {
  if (path.empty()) return nullptr;
  return std::make_unique<OutputFile>(path);
}

std::string quoted_command(const std::vector<std::string>& command) {
  std::string text;
  for (const std::string& word : command) {
    if (!text.empty()) text += ' ';
    bool plain = !word.empty() && word.find_first_of(" \t'\"\\$*?") == std::string::npos;
    text += plain ? word : "'" + word + "'";
  }
  return text;
}

std::string headline(const MonitorOptions& o, const ChildExit& exit, const telemetry::Summary& s) {
  char text[160];
  std::string how = exit.signal ? "was killed by signal " + std::to_string(exit.signal)
                                : "exited with code " + std::to_string(exit.code);
  std::snprintf(text, sizeof text, " after %.1f s; %zu samples, every %g s", s.duration_s,
                s.samples, s.interval_s);
  return "dlbench monitor: `" + quoted_command(o.command) + "` " + how + text;
}

nlohmann::json monitor_json(const MonitorOptions& o, const ChildExit& exit,
                            const telemetry::Recording& recording) {
  nlohmann::json j = telemetry::to_json(recording.summary);
  j["command"] = o.command;
  j["exit_code"] = exit.code;
  j["signal"] = exit.signal ? nlohmann::json(exit.signal) : nlohmann::json(nullptr);
  nlohmann::json gpus = nlohmann::json::array();
  for (const telemetry::GpuIdentity& gpu : recording.gpus) gpus.push_back(telemetry::to_json(gpu));
  j["gpus"] = gpus;
  j["gpus_none_reason"] = recording.gpus_none_reason.empty()
                              ? nlohmann::json(nullptr)
                              : nlohmann::json(recording.gpus_none_reason);
  return j;
}

int run_monitor(const MonitorOptions& o, const GlobalOptions& global) {
  telemetry::check_interval(o.interval_s);
  telemetry::GpuSelection gpus = telemetry::parse_gpu_selection(o.gpus);
  if (o.command.empty())
    throw Error(ErrorKind::kUsage, "no command to monitor",
                std::string("put the command after '--': ") + kUsage);
  auto json_out = open_output(o.json_path);
  auto csv_out = open_output(o.csv_path);

  SignalForwarder forwarder;
  ChildProcess child(o.command);
  // The same window the runners measure with, from the command's start to its exit. Its
  // sources are found before the command is released, so a GPU that is not there stops the
  // command before it ran; sampling starts once the command runs (a sample of the forked
  // dlbench before its exec would count dlbench's own memory as the command's peak).
  telemetry::MeasuredWindow window(true, child.pid(), o.interval_s, nvml::Nvml::open(), gpus);
  window.prepare();

  forwarder.forward_to(child.pid());
  if (int error = child.release()) {
    forwarder.forward_to(0);
    child.reap();
    bool missing = error == ENOENT || error == ENOTDIR;
    std::cerr << "dlbench: cannot run '" << o.command[0] << "': " << std::strerror(error) << "\n"
              << "hint: "
              << (missing ? "check the command's spelling and PATH"
                          : "check that the file is executable (chmod +x) and is a program")
              << "\n";
    return missing ? kCommandNotFound : kCommandNotExecutable;
  }
  window.begin();
  child.wait_exited();
  window.end();
  ChildExit exit = child.reap();
  forwarder.forward_to(0);

  const telemetry::Recording recording = *window.take();
  nlohmann::json json = monitor_json(o, exit, recording);
  if (json_out) json_out->stream() << dump_json(json, 2) << "\n";
  if (csv_out) telemetry::write_csv(csv_out->stream(), recording.metrics, recording.samples);
  // The table goes to stderr, like time(1), so the command's stdout passes through untouched.
  std::cerr << "\n" << headline(o, exit, recording.summary) << "\n\n";
  print_telemetry_table(std::cerr, recording.summary, recording.gpus);
  if (global.json) std::cout << dump_json(json, 2) << "\n";
  for (OutputFile* out : {json_out.get(), csv_out.get()})
    if (out) out->commit();
  return exit.code;
}

}  // namespace

void add_monitor_command(CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<MonitorOptions>();
  CLI::App* monitor = app.add_subcommand(
      "monitor",
      "Run a command and sample the GPUs and its CPU and memory until it exits; print a summary");
  monitor->footer(std::string("Usage: ") + kUsage +
                  "\nExits with the command's exit code. See docs/commands.md 'dlbench monitor' "
                  "for what each metric means.");
  monitor->add_option("--interval", options->interval_s,
                      "Seconds between samples, 0.1 to 60 (default 0.5)");
  monitor->add_option("--json", options->json_path, "Write the summary as JSON to FILE");
  monitor->add_option("--csv", options->csv_path, "Write every sample as CSV to FILE");
  monitor->add_option("--gpus", options->gpus,
                      "GPUs to sample: all (default), none, or NVML indices such as 0,1");
  monitor->add_option("command", options->command, "The command to run, after --");
  monitor->callback([options, &global] { global.exit_code = run_monitor(*options, global); });
}

}  // namespace dlbench::cli

#include <iostream>

#include "bench/nvml/nvml.h"
#include "cli/micro_commands.h"
#include "cli/store_options.h"
#include "engine/backend/backend.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"

namespace dlbench::cli {

Device micro_device(const LaunchOptions& launch) {
  const Device device = resolve_launch(launch, LaunchTarget::kEngine).launch.device;
  // The engine's backend says best why a device cannot be used (no GPU, no CUDA in this build).
  if (device.type == DeviceType::kCuda) (void)backend::make_backend(device);
  return device;
}

MicroOutput::MicroOutput(const std::optional<std::string>& json_flag, const GlobalOptions& global)
    : json_path_(json_flag.value_or(global.json ? "-" : "")) {
  // Opened first, so a mistyped path fails before the measuring.
  if (!json_path_.empty() && json_path_ != "-") file_ = std::make_unique<OutputFile>(json_path_);
}

void MicroOutput::write_json(const nlohmann::json& doc) {
  if (json_path_ == "-") std::cout << dump_json(doc, 2) << "\n";
  if (file_) {
    file_->stream() << dump_json(doc, 2) << "\n";
    file_->commit();
  }
}

MicroMachine describe_this_machine() {
  auto nvml = nvml::Nvml::open();
  MicroMachine m{sysinfo::query_machine(*nvml), {}};
  m.environment = sysinfo::to_json(m.info);
  return m;
}

void store_and_judge(const micro::MicroRecordInput& input, bool no_store,
                     const GlobalOptions& global) {
  if (!no_store) {
    std::unique_ptr<store::Store> db = open_store(global);
    const std::int64_t id = db->save_run(micro::micro_record(input));
    if (!global.quiet)
      std::cerr << "stored as run " << id << " in " << db->location()
                << (input.wrong > 0 ? " (failed: wrong elements)" : "") << "\n";
  }
  if (input.wrong > 0)
    throw Error(
        ErrorKind::kExternal,
        "micro " + input.benchmark + " gave " + std::to_string(input.wrong) + " wrong elements",
        "the device computed or copied wrong values: check it (`dlbench info`, "
        "dmesg for Xid errors) before trusting any result from it");
}

void add_output_flags(CLI::App& cmd, std::optional<std::string>& json_path, bool& no_store) {
  cmd.add_option("--json", json_path,
                 "Write the results as JSON to FILE (stdout when FILE is '-' or left out)")
      ->expected(0, 1)
      ->default_str("-")
      ->type_name("FILE");
  cmd.add_flag("--no-store", no_store, "Do not store the result in the results database");
}

}  // namespace dlbench::cli

// Each subcommand registers itself on the app; the callback runs after a successful parse.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/global_options.h"

namespace dlbench::cli {

void add_info_command(CLI::App& app, const GlobalOptions& global);
void add_monitor_command(CLI::App& app, GlobalOptions& global);
void add_run_command(CLI::App& app, const GlobalOptions& global);
void add_runs_command(CLI::App& app, const GlobalOptions& global);
void add_suite_command(CLI::App& app, const GlobalOptions& global);
void add_report_command(CLI::App& app, const GlobalOptions& global);  // and compare
void add_micro_command(CLI::App& app, GlobalOptions& global);         // micro allreduce
void add_scale_command(CLI::App& app, const GlobalOptions& global);
void add_maxbatch_command(CLI::App& app, const GlobalOptions& global);

}  // namespace dlbench::cli

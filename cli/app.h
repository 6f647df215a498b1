// The dlbench command line: parses, runs the chosen subcommand, maps errors to exit codes.
#pragma once

namespace dlbench::cli {

// Returns the process exit code (README "Exit codes"); never throws.
int run(int argc, char** argv);

}  // namespace dlbench::cli

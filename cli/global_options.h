// Options every subcommand understands, wherever they appear on the command line.
#pragma once

#include <string>

namespace dlbench::cli {

struct GlobalOptions {
  bool json = false;     // machine-readable output on stdout
  bool quiet = false;    // only results and errors
  bool verbose = false;  // more detail (reasons, progress)
  std::string db;        // results database: a file (SQLite) or postgresql://; empty: default
  int exit_code = 0;     // set by a subcommand that passes on a command's exit code (monitor)
};

}  // namespace dlbench::cli

// Options every subcommand understands, wherever they appear on the command line.
#pragma once

namespace dlbench::cli {

struct GlobalOptions {
  bool json = false;     // machine-readable output on stdout
  bool quiet = false;    // only results and errors
  bool verbose = false;  // more detail (reasons, progress)
};

}  // namespace dlbench::cli

// Output files of the commands (--json FILE, --out FILE): opened before any measuring, so a
// mistyped folder fails at once and not after minutes of work.
#pragma once

#include <fstream>
#include <string>

namespace dlbench::cli {

// Opens `file` on `path` unless the path is empty or "-" (standard output); Error(kResource)
// when it cannot be written.
void open_output(const std::string& path, std::ofstream& file);

}  // namespace dlbench::cli

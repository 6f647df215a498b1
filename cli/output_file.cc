#include "cli/output_file.h"

#include "engine/core/error.h"

namespace dlbench::cli {

void open_output(const std::string& path, std::ofstream& file) {
  if (path.empty() || path == "-") return;
  file.open(path);
  if (!file)
    throw Error(ErrorKind::kResource, "cannot write " + path,
                "check that the folder exists and is writable");
}

}  // namespace dlbench::cli

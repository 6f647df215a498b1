#include "cli/gpu_list.h"

#include <sstream>

#include "cli/number_text.h"
#include "engine/backend/backend.h"
#include "engine/core/error.h"

namespace dlbench::cli {
namespace {

int parse_positive(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < 1)
    throw Error(ErrorKind::kUsage, what + " '" + text + "' is not a positive whole number",
                "for example --gpus 2, --gpus all or --gpus 1,2,4,8");
  return value;
}

}  // namespace

std::vector<Device> parse_gpus(const std::string& text) {
  const int present = backend::cuda_device_count();
  int wanted = 0;
  if (text == "all") {
    if (present == 0)
      throw Error(ErrorKind::kResource, "--gpus all: this machine has no GPU that CUDA can use",
                  "run on CPU with --device cpu");
    wanted = present;
  } else {
    wanted = parse_positive(text, "--gpus");
  }
  if (wanted > present)
    throw Error(ErrorKind::kResource,
                "--gpus " + text + " asks for " + count_text(wanted, "GPU") +
                    "; this machine has " + std::to_string(present),
                present > 0 ? "use --gpus all" : "run on CPU with --device cpu");
  std::vector<Device> devices;
  for (int i = 0; i < wanted; ++i) devices.push_back(Device::cuda(i));
  return devices;
}

std::vector<int> parse_gpu_counts(const std::string& text) {
  std::vector<int> counts;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    int n = parse_positive(item, "GPU count");
    if (!counts.empty() && n <= counts.back())
      throw Error(ErrorKind::kUsage, "--gpus " + text + " must list increasing GPU counts",
                  "for example --gpus 1,2,4,8");
    counts.push_back(n);
  }
  if (counts.empty())
    throw Error(ErrorKind::kUsage, "--gpus needs at least one GPU count", "for example --gpus 1,2");
  return counts;
}

}  // namespace dlbench::cli

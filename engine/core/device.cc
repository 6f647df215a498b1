#include "engine/core/device.h"

#include "engine/core/error.h"

namespace dlbench {

std::string to_string(const Device& d) {
  return d.type == DeviceType::kCpu ? "cpu" : "cuda:" + std::to_string(d.index);
}

Device parse_device(const std::string& text) {
  if (text == "cpu") return Device::cpu();
  if (text == "cuda") return Device::cuda(0);
  if (text.rfind("cuda:", 0) == 0 && text.size() > 5 &&
      text.find_first_not_of("0123456789", 5) == std::string::npos && text.size() < 9)
    return Device::cuda(std::stoi(text.substr(5)));
  throw Error(ErrorKind::kUsage, "unknown device '" + text + "'",
              "use 'cpu', 'cuda' or 'cuda:N' (see 'dlbench info' for the GPUs)");
}

}  // namespace dlbench

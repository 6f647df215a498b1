#include "engine/core/error.h"

#include <string>

namespace dlbench {

int exit_code(ErrorKind kind) {
  return static_cast<int>(kind);
}

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInternal:
      return "internal error";
    case ErrorKind::kUsage:
      return "usage error";
    case ErrorKind::kResource:
      return "resource error";
    case ErrorKind::kExternal:
      return "external program failed";
  }
  return "error";
}

Error::Error(ErrorKind kind, const std::string& message, std::string hint, SettingHint setting)
    : std::runtime_error(message),
      kind_(kind),
      hint_(std::move(hint)),
      setting_(std::move(setting)) {}

void fail_check(const char* statement, const char* file, int line, const std::string& detail) {
  std::string message =
      std::string("check failed: ") + statement + " at " + file + ":" + std::to_string(line);
  if (!detail.empty()) message += " (" + detail + ")";
  throw Error(ErrorKind::kInternal, message, "this is a dlbench bug; please report it");
}

}  // namespace dlbench

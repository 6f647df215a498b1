// dlbench::Error: the one exception type. Each error carries a kind, which decides the
// process exit code, and a message that says what failed and what the user can do.
#pragma once

#include <stdexcept>
#include <string>

namespace dlbench {

// Exit codes are part of the command-line contract (README "Exit codes").
enum class ErrorKind {
  kInternal = 1,  // a bug in dlbench: the message says where
  kUsage = 2,     // bad flag, unknown subcommand, bad input value or file
  kResource = 3,  // no such device, out of memory, file not writable
  kExternal = 4,  // an external program or library failed
};

int exit_code(ErrorKind kind);
const char* to_string(ErrorKind kind);

// The run setting an error's hint is about. The engine says what to change in words ("use the
// CPU device") and names the setting; a front end adds its own spelling of it (the CLI its flag,
// `--device cpu`), so engine errors never name a flag.
enum class Setting { kNone, kBatch, kDevice, kPrecision, kGpus };

struct SettingHint {
  Setting setting = Setting::kNone;
  std::string value;  // the value the hint suggests ("cpu"), or empty
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message, std::string hint = {},
        SettingHint setting = {});

  ErrorKind kind() const { return kind_; }
  // What the user can do about it; may be empty for internal errors.
  const std::string& hint() const { return hint_; }
  const SettingHint& setting() const { return setting_; }

 private:
  ErrorKind kind_;
  std::string hint_;
  SettingHint setting_;
};

// Internal checks name the statement, file and line, so a bug report can point at the code.
[[noreturn]] void fail_check(const char* statement, const char* file, int line,
                             const std::string& detail);

}  // namespace dlbench

#define DLBENCH_CHECK(cond, detail)                                          \
  do {                                                                       \
    if (!(cond)) ::dlbench::fail_check(#cond, __FILE__, __LINE__, (detail)); \
  } while (0)

// Headless Chromium for the browser tests: find it, dump a page's DOM after its scripts ran, and
// read what the report's script recorded on <body>. (report_browser_test.cc has its own copies
// from before this header; new browser tests use this one.)
#pragma once

#include <filesystem>
#include <regex>
#include <string>

#include "tests/support/run_command.h"

namespace dlbench::testing {

inline std::string find_chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

inline std::string body_attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  std::regex re("<body[^>]*\\s" + name + "=\"([^\"]*)\"");
  return std::regex_search(dom, m, re) ? m[1].str() : "";
}

inline CommandResult dump_dom(const std::string& chromium, const std::string& dir,
                              const std::string& html) {
  return run_command("timeout 120 " + chromium +
                     " --headless --no-sandbox --disable-gpu --disable-background-networking"
                     " --disable-component-update --disable-sync --no-first-run"
                     " --disable-dev-shm-usage --user-data-dir=" +
                     dir + "/profile --virtual-time-budget=5000 --dump-dom file://" + html);
}

}  // namespace dlbench::testing

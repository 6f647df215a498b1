#include "tests/support/isolated_home.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace dlbench::testing {
namespace {

struct IsolatedHome {
  std::string home;
  std::string user_data;
  pid_t owner = 0;

  IsolatedHome() {
    const char* xdg = std::getenv("XDG_DATA_HOME");
    const char* real_home = std::getenv("HOME");
    if (xdg && *xdg)
      user_data = xdg;
    else if (real_home && *real_home)
      user_data = std::string(real_home) + "/.local/share";
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/dlbench-test-home-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      // Running on would risk the user's database: stop before any test starts.
      std::perror("dlbench tests: cannot make a temporary HOME");
      std::_Exit(2);
    }
    home = pattern;
    owner = getpid();
    std::filesystem::create_directories(home + "/.local/share");
    std::filesystem::create_directories(home + "/tmp");
    setenv("HOME", home.c_str(), 1);
    setenv("XDG_DATA_HOME", (home + "/.local/share").c_str(), 1);
    // GoogleTest's TempDir() (where the tests' temp_folder()s go) reads TEST_TMPDIR first: inside
    // the home, they are removed with it instead of piling up in /tmp. TMPDIR stays as it was, so
    // the programs the tests start (mpirun's session folders and sockets, whose paths have a
    // length limit, among them) keep their usual place.
    setenv("TEST_TMPDIR", (home + "/tmp").c_str(), 1);
  }

  // Forked children exit through here too; only the process that made the folder removes it.
  ~IsolatedHome() {
    if (getpid() != owner) return;
    std::error_code ec;
    std::filesystem::remove_all(home, ec);
  }
};

IsolatedHome& instance() {
  static IsolatedHome isolated;
  return isolated;
}

// Made during static initialization, before main() and before any test runs.
[[maybe_unused]] const IsolatedHome& made_at_startup = instance();

}  // namespace

const std::string& isolated_home() {
  return instance().home;
}
const std::string& user_data_home() {
  return instance().user_data;
}

}  // namespace dlbench::testing

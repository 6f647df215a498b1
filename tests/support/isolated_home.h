// Every test process, and every dlbench it starts, runs with HOME, XDG_DATA_HOME (and the test's
// TEST_TMPDIR) in a fresh temporary folder: a test that forgets --no-store or --db stores there,
// never in the user's own results database. Compiled into every test executable
// (tests/CMakeLists.txt); the folder is made before main() and removed when the process that made
// it exits.
#pragma once

#include <string>

namespace dlbench::testing {

// The folder HOME points to in this test process (XDG_DATA_HOME is its .local/share).
const std::string& isolated_home();
// Where the user's own data lived before the test process changed it: $XDG_DATA_HOME, else
// $HOME/.local/share; empty when neither was set.
const std::string& user_data_home();

}  // namespace dlbench::testing

// "Did you mean ...?": the closest of some known names to a mistyped one, for the hint of a
// usage error (subcommands and flags in the CLI, keys and values in suite files).
#pragma once

#include <string>
#include <vector>

namespace dlbench {

// The candidate closest to word by edit distance, or "" when none is close enough to help.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace dlbench

// "Did you mean ...?" for mistyped subcommands and flags.
#pragma once

#include <string>
#include <vector>

namespace dlbench::cli {

// The candidate closest to word by edit distance, or "" when none is close enough to help.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace dlbench::cli

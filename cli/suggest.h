// The "did you mean" helper lives in engine/core (suite files use it too); the CLI's name for it.
#pragma once

#include "engine/core/suggest.h"

namespace dlbench::cli {

using dlbench::closest_match;

}  // namespace dlbench::cli

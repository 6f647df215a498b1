// What the fusion tests share: a fused graph's values held to the reference graph's
// (Fusion::kOff) elementwise, within f32 rounding of reordered sums.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

namespace dlbench::testing {

inline void expect_close(const std::vector<float>& fused, const std::vector<float>& reference,
                         const char* what) {
  ASSERT_EQ(fused.size(), reference.size()) << what;
  for (std::size_t i = 0; i < fused.size(); ++i)
    ASSERT_NEAR(fused[i], reference[i], 1e-5f + 1e-4f * std::fabs(reference[i]))
        << what << " [" << i << "]";
}

}  // namespace dlbench::testing

#include "engine/core/error.h"

#include <gtest/gtest.h>

namespace dlbench {
namespace {

TEST(ErrorTest, ExitCodesFollowTheReadme) {
  EXPECT_EQ(exit_code(ErrorKind::kInternal), 1);
  EXPECT_EQ(exit_code(ErrorKind::kUsage), 2);
  EXPECT_EQ(exit_code(ErrorKind::kResource), 3);
  EXPECT_EQ(exit_code(ErrorKind::kExternal), 4);
}

TEST(ErrorTest, CarriesKindMessageAndHint) {
  Error e(ErrorKind::kResource, "no such device cuda:3", "run 'dlbench info' to list GPUs");
  EXPECT_EQ(e.kind(), ErrorKind::kResource);
  EXPECT_STREQ(e.what(), "no such device cuda:3");
  EXPECT_EQ(e.hint(), "run 'dlbench info' to list GPUs");
}

TEST(ErrorTest, CheckNamesStatementFileAndLine) {
  int batch = 0;
  try {
    DLBENCH_CHECK(batch > 0, "batch must be positive");
    FAIL() << "DLBENCH_CHECK did not throw";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(message.find("batch > 0"), std::string::npos) << message;
    EXPECT_NE(message.find("error_test.cc:"), std::string::npos) << message;
    EXPECT_NE(message.find("batch must be positive"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace dlbench

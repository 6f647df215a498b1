// The MovieLens ratings reader: dense ids, the leave-one-out split and the rated sets on a small
// file; each kind of malformed line refused with the file and line named (a usage error, exit 2).
#include "engine/data/movielens.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "engine/core/error.h"
#include "tests/support/data_file.h"
#include "tests/support/isolated_home.h"

namespace dlbench::data {
namespace {

using testing::write_data_file;

// Users 7 and 3 (dense 1 and 0), movies 10, 200, 5000 (dense 0, 1, 2).
TEST(MovieLensTest, IdsAreDenseAndEachUsersLatestRatingIsHeldOut) {
  const std::string path =
      write_data_file("small.dat",
                      "7::200::5::100\n"
                      "3::10::3.5::50\r\n"  // a Windows line ending
                      "7::10::1::300\n"
                      "\n"
                      "3::5000::4::50\n"  // ties user 3's latest: the later line
                      "7::5000::2::200\n"
                      "9::10::5::1\n");  // one rating: stays in training
  const Ratings r = read_movielens(path);
  EXPECT_EQ(r.ratings, 6);
  EXPECT_EQ(r.users, 3);
  EXPECT_EQ(r.items, 3);
  EXPECT_EQ(r.test_items, (std::vector<std::int32_t>{2, 0, -1}));
  EXPECT_EQ(r.train_users, (std::vector<std::int32_t>{1, 0, 1, 2}));
  EXPECT_EQ(r.train_items, (std::vector<std::int32_t>{1, 0, 2, 0}));
  EXPECT_EQ(r.rated_offsets, (std::vector<std::int64_t>{0, 2, 5, 6}));
  EXPECT_TRUE(r.rated(1, 0));
  EXPECT_TRUE(r.rated(0, 2));
  EXPECT_FALSE(r.rated(0, 1));
  EXPECT_FALSE(r.rated(2, 2));
}

// The one-line usage error read_movielens gives for a file holding `text`.
std::string refusal(const std::string& text) {
  return testing::usage_refusal("bad.dat", text,
                                [](const std::string& path) { read_movielens(path); });
}

TEST(MovieLensTest, MalformedLinesAreRefusedNamingTheFileAndLine) {
  const std::string good = "1::1::5::978300760\n";
  struct Bad {
    std::string line, problem;
  };
  const Bad cases[] = {
      {"1::1::5", "expected 4 fields separated by '::', found 3"},
      {"1,1,5,978300760", "found 1"},  // ml-latest's CSV, not ratings.dat
      {"1::1::5::9::9", "more than 4 fields"},
      {"x::1::5::9", "UserID 'x' is not an id from 1"},
      {"0::1::5::9", "UserID '0'"},
      {"1::-4::5::9", "MovieID '-4'"},
      {"1::99999999999::5::9", "MovieID '99999999999'"},
      {"1::1::five::9", "Rating 'five'"},
      {"1::1::nan::9", "Rating 'nan'"},
      {"1::1::5::", "Timestamp ''"},
      {"1::1::5::12.5", "Timestamp '12.5'"},
      {"1:: 1::5::9", "MovieID ' 1'"},
      {std::string("1::1::5::9\0\x01", 12),
       "Timestamp '9?"
       "?'"},  // NUL, SOH shown as ?
  };
  for (const Bad& b : cases) {
    const std::string message = refusal(good + good + b.line + "\n" + good);
    EXPECT_NE(message.find("bad.dat:3: "), std::string::npos) << message;
    EXPECT_NE(message.find(b.problem), std::string::npos) << b.problem << " | " << message;
  }
}

TEST(MovieLensTest, AMissingOrEmptyFileIsRefused) {
  EXPECT_NE(refusal("").find("holds no ratings"), std::string::npos);
  EXPECT_NE(refusal("\n\r\n").find("holds no ratings"), std::string::npos);
  try {
    read_movielens(testing::isolated_home() + "/no-such.dat");
    ADD_FAILURE() << "a missing file was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("cannot read the ratings file"), std::string::npos);
  }
}

}  // namespace
}  // namespace dlbench::data

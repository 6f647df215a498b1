// A test set whose translation fails after the measured steps (bench/runner/translation_eval.h,
// add_test_set_quality, which the runner calls): the failure is caught, the run keeps what it
// measured, the failure becomes the metric quality/test_set_failed with the error as its
// description, and the run's output prints that in place of the BLEU row (cli/quality_rows.h). The
// end-to-end path that scores a test set is in tests/cli/data_cli_test.cc; nothing there can make
// the decoder fail on demand.
#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>

#include "bench/runner/translation_eval.h"
#include "cli/quality_rows.h"
#include "cli/text_table.h"

namespace dlbench::runner {
namespace {

std::string quality_text(const result::RunResult& r) {
  cli::Section s("Quality");
  cli::add_quality_rows(s, r);
  std::ostringstream out;
  s.print(out);
  return out.str();
}

TEST(TranslationFailureTest, OutOfMemoryIsStoredWithItsHintAndPrintedAsTheBleuRow) {
  result::RunResult r;
  result::add_metric(r, "throughput/samples_per_s", 1234.5, "samples/s", "measured");
  EXPECT_EQ(quality_text(r).find("BLEU"), std::string::npos);

  const bool scored =
      add_test_set_quality(r, "test.ids", []() -> std::optional<TranslationQuality> {
        throw Error(ErrorKind::kResource, "out of device memory");
      });
  EXPECT_TRUE(scored);  // the failure is the test set's outcome, not a stop
  ASSERT_EQ(r.metrics.size(), 2u);
  EXPECT_EQ(r.metrics[0].tag, "throughput/samples_per_s");  // the measurement stands
  EXPECT_DOUBLE_EQ(r.metrics[0].value, 1234.5);
  const result::Metric* failed = result::find_metric(r, "quality/test_set_failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_DOUBLE_EQ(failed->value, 1);
  EXPECT_EQ(failed->unit, "bool");
  EXPECT_EQ(failed->description.rfind("the test set was not scored: out of device memory", 0), 0u)
      << failed->description;
  EXPECT_NE(failed->description.find("a smaller --batch or --beam"), std::string::npos);

  const std::string text = quality_text(r);
  EXPECT_NE(text.find("BLEU"), std::string::npos) << text;
  EXPECT_NE(text.find("the test set was not scored: out of device memory"), std::string::npos)
      << text;
}

// A stop while translating (evaluate gives nothing) adds no quality and says so.
TEST(TranslationFailureTest, AStopDuringTheTestSetAddsNothing) {
  result::RunResult r;
  result::add_metric(r, "throughput/samples_per_s", 1234.5, "samples/s", "measured");
  EXPECT_FALSE(
      add_test_set_quality(r, "test.ids", [] { return std::optional<TranslationQuality>(); }));
  ASSERT_EQ(r.metrics.size(), 1u);
  EXPECT_EQ(quality_text(r).find("BLEU"), std::string::npos);
}

// Only a resource error (memory) is told to shrink the batch: another cause gets no such hint.
TEST(TranslationFailureTest, OtherErrorsCarryNoMemoryHint) {
  result::RunResult r;
  add_translation_failure(r, Error(ErrorKind::kExternal, "cuDNN failed"));
  const result::Metric* failed = result::find_metric(r, "quality/test_set_failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->description, "the test set was not scored: cuDNN failed");
}

}  // namespace
}  // namespace dlbench::runner

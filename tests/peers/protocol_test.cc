// The peer protocol parser and its order checks, without any process.
#include <gtest/gtest.h>

#include "bench/peers/protocol.h"
#include "engine/core/error.h"

namespace dlbench::peers {
namespace {

std::string error_of(const std::string& line, int n = 1) {
  try {
    parse_message(line, n);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kExternal);
    return e.what();
  }
  return "";
}

TEST(ProtocolTest, ParsesEveryMessage) {
  Message h = parse_message(
      R"({"type":"hello","protocol":2,"framework":"pytorch","versions":{"pytorch":"2.11"},)"
      R"("device":"H100","parameters":25557032})",
      1);
  EXPECT_EQ(h.type, MessageType::kHello);
  EXPECT_EQ(h.hello.parameters, 25557032);
  EXPECT_EQ(h.hello.versions["pytorch"], "2.11");
  Message s = parse_message(R"({"type":"step","index":3,"duration_ms":81.5})", 5);
  EXPECT_EQ(s.step.index, 3);
  EXPECT_DOUBLE_EQ(s.step.duration_ms, 81.5);
  Message sum = parse_message(
      R"({"type":"summary","steps":2,"measured_seconds":0.5,"peak_memory_bytes":1024})", 6);
  EXPECT_DOUBLE_EQ(sum.summary.measured_seconds, 0.5);
  EXPECT_EQ(sum.summary.peak_memory_bytes, 1024.0);
  EXPECT_FALSE(sum.summary.first_loss);
  EXPECT_FALSE(sum.summary.translated_tokens);
  EXPECT_FALSE(sum.summary.tokens_per_step);
  EXPECT_EQ(parse_message(R"({"type":"summary","steps":1,"measured_seconds":1,)"
                          R"("translated_tokens":6400})",
                          7)
                .summary.translated_tokens,
            6400.0);
  EXPECT_EQ(parse_message(R"({"type":"summary","steps":1,"measured_seconds":1,)"
                          R"("tokens_per_step":5120})",
                          8)
                .summary.tokens_per_step,
            5120.0);
  Message e = parse_message(
      R"({"type":"error","kind":"missing_package","package":"jax","message":"no jax"})", 1);
  EXPECT_EQ(e.error.kind, WorkerErrorKind::kMissingPackage);
  EXPECT_EQ(e.error.package, "jax");
  EXPECT_EQ(parse_message(R"({"type":"error","kind":"weird","message":"x"})", 1).error.kind,
            WorkerErrorKind::kRuntime);
}

TEST(ProtocolTest, MalformedLinesNameTheirNumberAndProblem) {
  EXPECT_NE(error_of("not json", 7).find("line 7"), std::string::npos);
  EXPECT_NE(error_of("not json").find("not JSON"), std::string::npos);
  EXPECT_NE(error_of("[1,2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"dance"})").find("unknown type"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"step","index":0})").find("duration_ms"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"step","index":0,"duration_ms":-1})").find("not positive"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"type":"hello","protocol":3,"framework":"x","device":"d",)"
                     R"("parameters":1})")
                .find("protocol 3"),
            std::string::npos);
}

Message step(int i) {
  Message m;
  m.type = MessageType::kStep;
  m.step = {i, 1.0};
  return m;
}

Message summary(int steps) {
  Message m;
  m.type = MessageType::kSummary;
  m.summary.steps = steps;
  m.summary.measured_seconds = 1;
  return m;
}

TEST(ProtocolTest, SessionOrderIsChecked) {
  Message hello;
  hello.type = MessageType::kHello;
  {
    SessionChecker c;
    EXPECT_THROW(c.accept(step(0), 1), Error);  // no hello yet
  }
  {
    SessionChecker c;
    c.accept(hello, 1);
    c.accept(step(0), 2);
    EXPECT_THROW(c.accept(step(2), 3), Error);  // step 1 skipped
  }
  {
    SessionChecker c;
    c.accept(hello, 1);
    c.accept(step(0), 2);
    EXPECT_THROW(c.accept(summary(3), 3), Error);  // counts steps it did not send
  }
  {
    SessionChecker c;
    c.accept(hello, 1);
    c.accept(step(0), 2);
    c.accept(summary(1), 3);
    EXPECT_TRUE(c.saw_summary());
    EXPECT_THROW(c.accept(step(1), 4), Error);  // nothing after the summary
  }
}

// What the worker gets as --inputs: every input of the graph, in order, as JSON it can parse.
TEST(ProtocolTest, InputsArgumentDescribesEachInput) {
  const std::vector<data::InputSpec> inputs{
      {"images", {2, 32, 32, 3}, DType::kF16, data::normal(0.0, 1.0), "images (NHWC)"},
      {"labels", {2}, DType::kI32, data::uniform_int(0, 10), "class labels"}};
  const nlohmann::json doc = nlohmann::json::parse(inputs_argument(inputs));
  ASSERT_EQ(doc.size(), 2u);
  EXPECT_EQ(doc[0]["name"], "images");
  EXPECT_EQ(doc[0]["shape"], nlohmann::json({2, 32, 32, 3}));
  EXPECT_EQ(doc[0]["dtype"], "f16");
  EXPECT_EQ(doc[0]["distribution"],
            nlohmann::json({{"kind", "normal"}, {"mean", 0.0}, {"stddev", 1.0}}));
  EXPECT_EQ(doc[1]["dtype"], "i32");
  EXPECT_EQ(doc[1]["meaning"], "class labels");
  EXPECT_EQ(doc[1]["distribution"],
            nlohmann::json({{"kind", "uniform_int"}, {"low", 0}, {"high", 10}}));
}

// Skewed ids (NCF's items) say so, with their exponent, so a worker can draw the same kind.
TEST(ProtocolTest, ZipfIdsCarryTheirExponent) {
  const std::vector<data::InputSpec> inputs{
      {"items", {4}, DType::kI32, data::zipf(0, 3706, 0.5), "item ids"}};
  const nlohmann::json doc = nlohmann::json::parse(inputs_argument(inputs));
  EXPECT_EQ(doc[0]["distribution"],
            nlohmann::json({{"kind", "zipf"}, {"low", 0}, {"high", 3706}, {"exponent", 0.5}}));
}

// Segmentation scenes say they are blobs and of how many classes, not uniform integers: a worker
// that drew uniform labels would train on noise.
TEST(ProtocolTest, SceneInputsSayTheyAreBlobs) {
  const std::vector<data::InputSpec> inputs{
      {"images", {2, 64, 64, 1}, DType::kF32, data::scene_images(3), "images (NHWC)"},
      {"labels", {2, 64, 64}, DType::kI32, data::scene_labels(3), "class maps"}};
  const nlohmann::json doc = nlohmann::json::parse(inputs_argument(inputs));
  EXPECT_EQ(doc[0]["distribution"], nlohmann::json({{"kind", "blob_images"}, {"classes", 3}}));
  EXPECT_EQ(doc[1]["distribution"], nlohmann::json({{"kind", "blob_labels"}, {"classes", 3}}));
}

// BERT's batch fields say which field they are, of what vocabulary, sequence and prediction
// count, so the worker draws batches of the same statistics (not uniform integers from the
// field's number).
TEST(ProtocolTest, PretrainingFieldsSayWhichFieldTheyAre) {
  using data::PretrainingField;
  const std::vector<data::InputSpec> inputs{
      {"masked_labels",
       {256},
       DType::kI32,
       data::pretraining(PretrainingField::kMaskedLabels, 30522, 128, 20),
       "masked words"},
      {"lengths",
       {2},
       DType::kI32,
       data::pretraining(PretrainingField::kLengths, 30522, 128, 20),
       "lengths"}};
  const nlohmann::json doc = nlohmann::json::parse(inputs_argument(inputs));
  EXPECT_EQ(doc[0]["distribution"], nlohmann::json({{"kind", "pretraining"},
                                                    {"field", "masked_labels"},
                                                    {"vocabulary", 30522},
                                                    {"sequence", 128},
                                                    {"predictions", 20}}));
  EXPECT_EQ(doc[1]["distribution"]["field"], "lengths");
}

// The Transformer's sentence pairs the same way: which field, of what vocabulary and sequence, and
// whether time-major (GNMT's).
TEST(ProtocolTest, TranslationFieldsSayWhichFieldTheyAre) {
  using data::TranslationField;
  const std::vector<data::InputSpec> inputs{
      {"target_labels",
       {128},
       DType::kI32,
       data::translation(TranslationField::kTargetLabels, 32000, 64),
       "labels"},
      {"source_lengths",
       {2},
       DType::kI32,
       data::translation(TranslationField::kSourceLengths, 32000, 64, true),
       "lengths"}};
  const nlohmann::json doc = nlohmann::json::parse(inputs_argument(inputs));
  EXPECT_EQ(doc[0]["distribution"], nlohmann::json({{"kind", "translation"},
                                                    {"field", "target_labels"},
                                                    {"vocabulary", 32000},
                                                    {"sequence", 64},
                                                    {"time_major", false}}));
  EXPECT_EQ(doc[1]["distribution"]["field"], "source_lengths");
  EXPECT_EQ(doc[1]["distribution"]["time_major"], true);
}

}  // namespace
}  // namespace dlbench::peers

#include "bench/peers/protocol.h"

#include <cmath>

#include "engine/core/error.h"
#include "engine/core/json_text.h"

namespace dlbench::peers {
namespace {

using nlohmann::json;

// Long enough to recognize the line, short enough for one terminal line.
constexpr std::size_t kExcerptChars = 120;

[[noreturn]] void malformed(int line_number, const std::string& what, const std::string& line) {
  std::string excerpt = line.size() > kExcerptChars ? line.substr(0, kExcerptChars) + "..." : line;
  throw Error(ErrorKind::kExternal,
              "peer worker output line " + std::to_string(line_number) + " is malformed: " + what +
                  ": " + excerpt,
              "the worker must write only protocol JSON lines on stdout (docs/commands.md "
              "'Framework peers'); its other output belongs on stderr");
}

const json& field(const json& j, const char* key, int line_number, const std::string& line) {
  if (!j.contains(key)) malformed(line_number, std::string("no \"") + key + "\" field", line);
  return j[key];
}

double number(const json& j, const char* key, int line_number, const std::string& line) {
  const json& v = field(j, key, line_number, line);
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    malformed(line_number, std::string("\"") + key + "\" is not a finite number", line);
  return v.get<double>();
}

std::string text(const json& j, const char* key, int line_number, const std::string& line) {
  const json& v = field(j, key, line_number, line);
  if (!v.is_string()) malformed(line_number, std::string("\"") + key + "\" is not text", line);
  return v.get<std::string>();
}

std::optional<double> optional_number(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  double v = j[key].get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

WorkerErrorKind error_kind(const std::string& kind) {
  if (kind == "missing_package") return WorkerErrorKind::kMissingPackage;
  if (kind == "usage") return WorkerErrorKind::kUsage;
  if (kind == "out_of_memory") return WorkerErrorKind::kOutOfMemory;
  if (kind == "mismatch") return WorkerErrorKind::kMismatch;
  return WorkerErrorKind::kRuntime;
}

}  // namespace

Message parse_message(const std::string& line, int n) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) malformed(n, "not JSON", line);
  if (!j.is_object()) malformed(n, "not a JSON object", line);
  std::string type = text(j, "type", n, line);
  Message m;
  if (type == "hello") {
    m.type = MessageType::kHello;
    int protocol = static_cast<int>(number(j, "protocol", n, line));
    if (protocol != kProtocolVersion)
      malformed(n,
                "protocol " + std::to_string(protocol) + ", this dlbench speaks " +
                    std::to_string(kProtocolVersion),
                line);
    m.hello.framework = text(j, "framework", n, line);
    m.hello.device = text(j, "device", n, line);
    m.hello.parameters = static_cast<std::int64_t>(number(j, "parameters", n, line));
    if (j.contains("versions") && j["versions"].is_object()) m.hello.versions = j["versions"];
  } else if (type == "measure") {
    m.type = MessageType::kMeasure;
  } else if (type == "step") {
    m.type = MessageType::kStep;
    m.step.index = static_cast<int>(number(j, "index", n, line));
    m.step.duration_ms = number(j, "duration_ms", n, line);
    if (m.step.duration_ms <= 0) malformed(n, "\"duration_ms\" is not positive", line);
  } else if (type == "summary") {
    m.type = MessageType::kSummary;
    m.summary.steps = static_cast<int>(number(j, "steps", n, line));
    m.summary.measured_seconds = number(j, "measured_seconds", n, line);
    if (m.summary.measured_seconds <= 0) malformed(n, "\"measured_seconds\" is not positive", line);
    m.summary.peak_memory_bytes = optional_number(j, "peak_memory_bytes");
    m.summary.first_loss = optional_number(j, "first_loss");
    m.summary.last_loss = optional_number(j, "last_loss");
    m.summary.compile_seconds = optional_number(j, "compile_seconds");
    m.summary.translated_tokens = optional_number(j, "translated_tokens");
    m.summary.tokens_per_step = optional_number(j, "tokens_per_step");
  } else if (type == "error") {
    m.type = MessageType::kError;
    m.error.message = text(j, "message", n, line);
    m.error.kind = error_kind(j.value("kind", "runtime"));
    if (j.contains("package") && j["package"].is_string()) m.error.package = j["package"];
  } else {
    malformed(n, "unknown type \"" + type + "\"", line);
  }
  return m;
}

void SessionChecker::accept(const Message& m, int n) {
  auto out_of_order = [n](const std::string& what) {
    throw Error(ErrorKind::kExternal,
                "peer worker output line " + std::to_string(n) + " is out of order: " + what,
                "the order is hello, measure, step..., summary "
                "(docs/commands.md 'Framework peers')");
  };
  if (saw_summary_) out_of_order("a line after the summary");
  switch (m.type) {
    case MessageType::kHello:
      if (saw_hello_) out_of_order("a second hello");
      saw_hello_ = true;
      break;
    case MessageType::kError:
      break;  // an error may come at any point, even before the hello
    case MessageType::kMeasure:
    case MessageType::kStep:
    case MessageType::kSummary:
      if (!saw_hello_) out_of_order("no hello before it");
      if (m.type == MessageType::kStep) {
        if (m.step.index != steps_)
          out_of_order("step " + std::to_string(m.step.index) + " where step " +
                       std::to_string(steps_) + " was due");
        ++steps_;
      }
      if (m.type == MessageType::kSummary) {
        if (m.summary.steps != steps_)
          out_of_order("the summary counts " + std::to_string(m.summary.steps) +
                       " steps, the worker sent " + std::to_string(steps_));
        if (steps_ == 0) out_of_order("a summary without measured steps");
        saw_summary_ = true;
      }
      break;
  }
}

std::string inputs_argument(const std::vector<data::InputSpec>& inputs) {
  nlohmann::json out = nlohmann::json::array();
  for (const data::InputSpec& in : inputs) {
    nlohmann::json shape = nlohmann::json::array();
    for (int i = 0; i < in.shape.rank(); ++i) shape.push_back(in.shape[i]);
    const data::Distribution& v = in.values;
    nlohmann::json distribution;
    using Kind = data::Distribution::Kind;
    if (v.kind == Kind::kNormal)
      distribution = {{"kind", "normal"}, {"mean", v.a}, {"stddev", v.b}};
    else if (v.kind == Kind::kBlobLabels || v.kind == Kind::kBlobImages)
      // Segmentation scenes: the worker draws its own blobs of `classes` classes
      // (engine/data/blobs.h says what they look like); the values need not match bit for bit.
      distribution = {{"kind", v.kind == Kind::kBlobLabels ? "blob_labels" : "blob_images"},
                      {"classes", static_cast<std::int64_t>(v.b)}};
    else if (v.kind == Kind::kPretraining)
      // BERT's batches: the worker draws its own of the same statistics (pretraining_batch.h).
      distribution = {{"kind", "pretraining"},
                      {"field", data::to_string(static_cast<data::PretrainingField>(v.a))},
                      {"vocabulary", static_cast<std::int64_t>(v.b)},
                      {"sequence", v.sequence},
                      {"predictions", v.predictions}};
    else if (v.kind == Kind::kTranslation)
      // Sentence pairs: the worker draws its own of the same statistics (translation_batch.h),
      // laid out as the model reads them (time-major: [sequence * batch], GNMT's).
      distribution = {{"kind", "translation"},
                      {"field", data::to_string(static_cast<data::TranslationField>(v.a))},
                      {"vocabulary", static_cast<std::int64_t>(v.b)},
                      {"sequence", v.sequence},
                      {"time_major", v.time_major}};
    else
      distribution = {{"kind", v.kind == Kind::kZipf ? "zipf" : "uniform_int"},
                      {"low", static_cast<std::int64_t>(v.a)},
                      {"high", static_cast<std::int64_t>(v.b)}};
    if (v.kind == Kind::kZipf) distribution["exponent"] = v.exponent;
    out.push_back({{"name", in.name},
                   {"shape", shape},
                   {"dtype", to_string(in.dtype)},
                   {"meaning", in.meaning},
                   {"distribution", distribution}});
  }
  return dump_json(out);
}

}  // namespace dlbench::peers

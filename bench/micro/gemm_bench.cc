#include "bench/micro/gemm_bench.h"

#include <cmath>
#include <cstdio>

#include "bench/store/measured_peak.h"
#include "engine/core/error.h"

namespace dlbench::micro {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  while (true) {
    const std::size_t next = text.find(sep, at);
    parts.push_back(text.substr(at, next - at));
    if (next == std::string::npos) return parts;
    at = next + 1;
  }
}

// A whole number of digits only, within [1, kMaxGemmDim]; nullopt otherwise.
std::optional<std::int64_t> parse_dim(const std::string& text) {
  if (text.empty() || text.size() > 8) return std::nullopt;
  std::int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > kMaxGemmDim) return std::nullopt;
  return v;
}

// The unit roundoff of each output format: half the gap between 1 and the next number.
double output_roundoff(GemmPrecision p, DeviceType device) {
  switch (p) {
    case GemmPrecision::kFp64:
      return std::ldexp(1.0, -53);
    case GemmPrecision::kFp32:
    case GemmPrecision::kTf32:
      return std::ldexp(1.0, -24);
    case GemmPrecision::kFp16:
      return std::ldexp(1.0, -11);
    case GemmPrecision::kBf16:  // oneDNN writes bf16 products out in f32
      return device == DeviceType::kCpu ? std::ldexp(1.0, -24) : std::ldexp(1.0, -8);
    case GemmPrecision::kFp8:  // written out in bf16
      return std::ldexp(1.0, -8);
    case GemmPrecision::kInt8:
      return 0;
  }
  return 0;
}

}  // namespace

const char* to_string(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kFp64:
      return "fp64";
    case GemmPrecision::kFp32:
      return "fp32";
    case GemmPrecision::kTf32:
      return "tf32";
    case GemmPrecision::kFp16:
      return "fp16";
    case GemmPrecision::kBf16:
      return "bf16";
    case GemmPrecision::kFp8:
      return "fp8";
    case GemmPrecision::kInt8:
      return "int8";
  }
  return "?";
}

const char* rate_unit(GemmPrecision p) {
  return p == GemmPrecision::kInt8 ? "TOP/s" : "TFLOP/s";
}

std::string precision_detail(GemmPrecision p, DeviceType device) {
  const bool cpu = device == DeviceType::kCpu;
  switch (p) {
    case GemmPrecision::kFp64:
      return "f64 in and out";
    case GemmPrecision::kFp32:
      return "f32 in and out, f32 arithmetic (strict: no TF32)";
    case GemmPrecision::kTf32:
      return "f32 in and out, inputs rounded to TF32, f32 accumulate";
    case GemmPrecision::kFp16:
      return "fp16 in and out, f32 accumulate";
    case GemmPrecision::kBf16:
      return cpu ? "bf16 in, f32 out and accumulate" : "bf16 in and out, f32 accumulate";
    case GemmPrecision::kFp8:
      return "fp8 e4m3 in, bf16 out, f32 (fast) accumulate";
    case GemmPrecision::kInt8:
      return "int8 in, int32 out and accumulate";
  }
  return "";
}

std::vector<GemmPrecision> parse_gemm_precisions(const std::string& text) {
  if (text == "all") return {std::begin(kAllGemmPrecisions), std::end(kAllGemmPrecisions)};
  std::vector<GemmPrecision> out;
  for (const std::string& name : split(text, ',')) {
    bool found = false;
    for (GemmPrecision p : kAllGemmPrecisions)
      if (name == to_string(p)) {
        found = true;
        bool seen = false;
        for (GemmPrecision q : out) seen = seen || q == p;
        if (!seen) out.push_back(p);
      }
    if (!found)
      throw Error(ErrorKind::kUsage, "--precision: unknown precision '" + name + "'",
                  "use all, or a comma list of fp64, fp32, tf32, fp16, bf16, fp8, int8");
  }
  return out;
}

std::vector<GemmPrecision> default_gemm_precisions(DeviceType device) {
  if (device == DeviceType::kCpu) return {GemmPrecision::kFp32, GemmPrecision::kBf16};
  return {std::begin(kAllGemmPrecisions), std::end(kAllGemmPrecisions)};
}

std::string dims_text(const GemmShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

std::vector<GemmShape> parse_gemm_shapes(const std::string& text) {
  std::vector<GemmShape> out;
  for (const std::string& item : split(text, ',')) {
    const std::vector<std::string> dims = split(item, 'x');
    std::vector<std::int64_t> values;
    for (const std::string& d : dims) {
      const std::optional<std::int64_t> v = parse_dim(d);
      if (!v) {
        values.clear();
        break;
      }
      values.push_back(*v);
    }
    if (values.size() == 1) values = {values[0], values[0], values[0]};
    if (values.size() != 3)
      throw Error(ErrorKind::kUsage, "--shapes: '" + item + "' is not N or MxNxK",
                  "sizes from 1 to " + std::to_string(kMaxGemmDim) +
                      ", e.g. --shapes 8192,16384x8192x8192");
    out.push_back({values[0], values[1], values[2], ""});
  }
  return out;
}

std::vector<GemmShape> default_gemm_shapes(DeviceType device) {
  if (device == DeviceType::kCpu)
    return {{512, 512, 512, "square"},
            {1024, 1024, 1024, "square"},
            {512, 3072, 768, "bert-base ffn1 (512 tokens)"},
            {3136, 64, 576, "resnet-50 conv2_x 3x3 (batch 1)"}};
  // BERT-large's feed-forward over 16 sequences of 512 tokens (hidden 1024, inner 4096), and
  // ResNet-50 convolutions at batch 256 as implicit products (m = batch x output pixels,
  // n = output channels, k = input channels x kernel area).
  return {{4096, 4096, 4096, "square"},
          {8192, 8192, 8192, "square"},
          {16384, 8192, 8192, "square-ish"},
          {8192, 4096, 1024, "bert-large ffn1"},
          {8192, 1024, 4096, "bert-large ffn2"},
          {50176, 256, 2304, "resnet-50 conv4_x 3x3"},
          {802816, 64, 64, "resnet-50 conv2_x 1x1"}};
}

double gemm_ops(const GemmShape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

double tera_rate(double ops, double seconds) {
  return seconds > 0 ? ops / seconds / 1e12 : 0;
}

std::optional<DatasheetPeak> datasheet_peak(int cc_major, int cc_minor, int sm_count,
                                            double sm_clock_mhz, GemmPrecision p) {
  if (sm_count <= 0 || sm_clock_mhz <= 0) return std::nullopt;
  // Dense operations per SM per clock (an FMA is two), from NVIDIA's whitepapers: the A100
  // (GA100, compute capability 8.0) and H100 (GH100, 9.0) architecture whitepapers' peak
  // tables divided by their SM counts and clocks. FP64 runs on the tensor cores (DMMA), FP32
  // strict on the FMA units, the rest on the tensor cores; fp8 and int8 count the same.
  //            fp64  fp32  tf32  fp16/bf16  fp8   int8
  // sm_80:     128   128   1024  2048       -     4096
  // sm_90:     256   256   2048  4096       8192  8192
  // The whitepapers state the tensor figures at a lower "max boost clock for tensor core use"
  // (H100 SXM5: 1830 MHz, 989 TFLOP/s bf16) than the max SM clock the GPU reports (1980 MHz),
  // which this multiplies by: read the figure as the GPU's clock allows, an upper bound.
  double per_sm = 0;
  const bool fp16 = p == GemmPrecision::kFp16 || p == GemmPrecision::kBf16;
  if (cc_major == 8 && cc_minor == 0) {
    per_sm = p == GemmPrecision::kFp64 || p == GemmPrecision::kFp32 ? 128
             : p == GemmPrecision::kTf32                            ? 1024
             : fp16                                                 ? 2048
             : p == GemmPrecision::kInt8                            ? 4096
                                                                    : 0;
  } else if (cc_major == 9 && cc_minor == 0) {
    per_sm = p == GemmPrecision::kFp64 || p == GemmPrecision::kFp32 ? 256
             : p == GemmPrecision::kTf32                            ? 2048
             : fp16                                                 ? 4096
                                                                    : 8192;
  }
  if (per_sm == 0) return std::nullopt;
  char basis[128];
  std::snprintf(basis, sizeof basis, "%d SMs x %.0f MHz x %.0f per SM per clock", sm_count,
                sm_clock_mhz, per_sm);
  return DatasheetPeak{sm_count * sm_clock_mhz * 1e6 * per_sm / 1e12, basis};
}

void validate(const GemmConfig& c) {
  auto bad = [](const std::string& flag, const std::string& what) {
    throw Error(ErrorKind::kUsage, flag + " must be " + what);
  };
  if (c.iters < 1) bad("--iters", "at least 1, not " + std::to_string(c.iters));
  if (c.warmup < 0) bad("--warmup", "at least 0, not " + std::to_string(c.warmup));
  if (c.algos < 1) bad("--algos", "at least 1, not " + std::to_string(c.algos));
  if (c.samples < 1) bad("--samples", "at least 1, not " + std::to_string(c.samples));
  if (!(c.min_seconds >= 0)) bad("--min-seconds", "0 or more");
  for (const GemmShape& s : c.shapes)
    for (GemmPrecision p : c.precisions)
      if (p == GemmPrecision::kInt8 && (s.m % 4 || s.n % 4 || s.k % 4))
        throw Error(
            ErrorKind::kUsage,
            "--shapes: int8 products need sizes that are multiples of 4, not " + dims_text(s),
            "round the sizes, or leave int8 out of --precision");
}

std::vector<GemmSummary> summarize(const GemmConfig& config, const std::vector<GemmRow>& rows) {
  std::vector<GemmSummary> out;
  for (GemmPrecision p : config.precisions) {
    GemmSummary s;
    s.precision = p;
    for (const GemmRow& r : rows) {
      if (r.precision != p) continue;
      if (!r.skipped.empty()) {
        if (s.skipped.empty()) s.skipped = r.skipped;
        continue;
      }
      if (r.rate > s.best_rate) {
        s.best_rate = r.rate;
        s.best_shape = r.shape;
      }
    }
    if (s.best_rate > 0) s.skipped.clear();
    out.push_back(std::move(s));
  }
  return out;
}

double gemm_tolerance(GemmPrecision p, DeviceType device, double expected, double abs_sum) {
  // The inputs are whole numbers, so the only rounding is the output's, plus the
  // accumulator's where it is narrower than f32: fp8's fast accumulation on Hopper keeps
  // about 14 bits.
  const double accumulate = p == GemmPrecision::kFp8 ? std::ldexp(1.0, -13) : 0;
  return 2 * output_roundoff(p, device) * std::fabs(expected) + accumulate * abs_sum;
}

GemmResult run_gemm_bench(const Device& device, GemmConfig config, const GemmHooks& hooks) {
  if (config.precisions.empty()) config.precisions = default_gemm_precisions(device.type);
  if (config.shapes.empty()) config.shapes = default_gemm_shapes(device.type);
  validate(config);
  GemmResult r = device.type == DeviceType::kCpu ? run_gemm_cpu(config, hooks)
                                                 : run_gemm_cuda(device.index, config, hooks);
  r.summary = summarize(r.config, r.rows);
  if (device.type == DeviceType::kCuda)
    for (GemmSummary& s : r.summary)
      s.datasheet = datasheet_peak(r.cc_major, r.cc_minor, r.sm_count, r.sm_clock_mhz, s.precision);
  for (const GemmRow& row : r.rows) {
    r.checked += row.checked;
    r.wrong += row.wrong;
  }
  return r;
}

nlohmann::json to_json(const GemmResult& r) {
  using nlohmann::json;
  json rows = json::array();
  for (const GemmRow& row : r.rows) {
    json j = {{"precision", to_string(row.precision)},
              {"m", row.shape.m},
              {"n", row.shape.n},
              {"k", row.shape.k},
              {"shape", row.shape.name}};
    if (!row.skipped.empty()) {
      j["skipped"] = row.skipped;
    } else {
      j.update({{"time_us", row.time_us},
                {"rate", row.rate},
                {"unit", rate_unit(row.precision)},
                {"iters", row.iters},
                {"algorithm", row.algorithm},
                {"candidates", row.candidates},
                {"checked", row.checked},
                {"wrong", row.wrong},
                {"max_error", row.max_error}});
    }
    rows.push_back(j);
  }
  json summary = json::array();
  for (const GemmSummary& s : r.summary) {
    json j = {{"precision", to_string(s.precision)}, {"unit", rate_unit(s.precision)}};
    if (s.best_rate > 0) {
      j["best_rate"] = s.best_rate;
      j["best_shape"] = dims_text(s.best_shape);
    } else {
      j["skipped"] = s.skipped;
    }
    j["datasheet"] = s.datasheet ? json{{"rate", s.datasheet->tera}, {"basis", s.datasheet->basis}}
                                 : json(nullptr);
    summary.push_back(j);
  }
  json precisions = json::array();
  for (GemmPrecision p : r.config.precisions) precisions.push_back(to_string(p));
  return {{"schema", "dlbench.micro.gemm/1"},
          {"device", r.device},
          {"backend", r.backend},
          {"library", r.library},
          {"config",
           {{"precisions", precisions},
            {"warmup", r.config.warmup},
            {"iters", r.config.iters},
            {"min_seconds", r.config.min_seconds},
            {"algos", r.config.algos},
            {"workspace_bytes", r.config.workspace_bytes},
            {"samples", r.config.samples},
            {"seed", r.config.seed}}},
          {"rows", rows},
          {"summary", summary},
          {"checked", r.checked},
          {"wrong", r.wrong}};
}

std::vector<store::MetricRecord> metrics(const GemmResult& r) {
  std::vector<store::MetricRecord> out;
  for (const GemmSummary& s : r.summary) {
    const std::string p = to_string(s.precision);
    if (s.best_rate > 0)
      out.push_back({store::gemm_best_tag(p), s.best_rate, rate_unit(s.precision),
                     "best dense " + p + " matrix product over the shapes measured (" +
                         dims_text(s.best_shape) + ", " + r.library + ")"});
    if (s.datasheet)
      out.push_back({"gemm/" + p + "/datasheet", s.datasheet->tera, rate_unit(s.precision),
                     "dense " + p + " peak from the GPU's properties: " + s.datasheet->basis});
  }
  for (const GemmRow& row : r.rows)
    if (row.skipped.empty())
      out.push_back({"gemm/" + std::string(to_string(row.precision)) + "/" + dims_text(row.shape),
                     row.rate, rate_unit(row.precision),
                     "dense matrix product m x n x k" +
                         (row.shape.name.empty() ? "" : " (" + row.shape.name + ")")});
  out.push_back({"gemm/wrong", static_cast<double>(r.wrong), "entries",
                 "sampled output entries outside the format's rounding of the exact product"});
  return out;
}

}  // namespace dlbench::micro

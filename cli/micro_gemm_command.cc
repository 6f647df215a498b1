// dlbench micro gemm: dense matrix-product throughput per precision, as a table with each
// precision's best shape (its measured peak) and the datasheet peak where the GPU's
// properties give it.
#include <cstdio>
#include <iostream>

#include "bench/micro/gemm_bench.h"
#include "bench/runner/allreduce_bench.h"
#include "cli/micro_commands.h"
#include "engine/core/error.h"

namespace dlbench::cli {
namespace {

struct GemmOptions {
  LaunchOptions launch;
  std::string precisions;  // empty: the device's default list
  std::string shapes;      // empty: the device's default sweep
  micro::GemmConfig config;
  std::string workspace = "64M";
  std::optional<std::string> json_path;
  bool no_store = false;
};

// Three significant digits at least: a CPU's 0.0512 TFLOP/s as much as a GPU's 742.3.
std::string rate_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, v >= 100 ? "%.1f" : v >= 1 ? "%.2f" : "%.4f", v);
  return text;
}

void print_header(const micro::GemmResult& r, std::ostream& out) {
  const micro::GemmConfig& c = r.config;
  const bool gpu = r.cc_major > 0;
  out << "# dlbench micro gemm: dense products C[m,n] = A[m,k] B[k,n], 2mnk operations each\n"
      << "# device: " << r.backend << "; " << r.library << "\n";
  if (gpu)
    out << "# algorithm: the fastest of up to " << c.algos
        << " cuBLASLt heuristic candidates per shape (workspace " << (c.workspace_bytes >> 20)
        << " MiB)\n";
  out << "# timed: at least " << c.iters << " products and " << c.min_seconds << " s after "
      << c.warmup << " warm-up, " << (gpu ? "CUDA events" : "wall clock")
      << "; inputs random in [-1, 1)\n"
      << "# checked: " << c.samples
      << " sampled entries per shape against the exact product of whole-number inputs\n#\n";
  char line[200];
  std::snprintf(line, sizeof line, "#%-4s %-31s %17s %11s %9s %-7s %8s %6s  %s\n", "prec", "shape",
                "m x n x k", "time(us)", "rate", "unit", "#checked", "#wrong", "algorithm");
  out << line << std::flush;
}

void print_row(const micro::GemmRow& row, std::ostream& out) {
  char line[300];
  const std::string name = row.shape.name.empty() ? "-" : row.shape.name;
  if (!row.skipped.empty()) {
    std::snprintf(line, sizeof line, "%-5s %-31s %17s  skipped: %s\n", to_string(row.precision),
                  name.c_str(), dims_text(row.shape).c_str(), row.skipped.c_str());
  } else {
    std::snprintf(line, sizeof line, "%-5s %-31s %17s %11.1f %9s %-7s %8lld %6lld  %s\n",
                  to_string(row.precision), name.c_str(), dims_text(row.shape).c_str(), row.time_us,
                  rate_text(row.rate).c_str(), rate_unit(row.precision),
                  static_cast<long long>(row.checked), static_cast<long long>(row.wrong),
                  row.algorithm.c_str());
  }
  out << line << std::flush;
}

void print_footer(const micro::GemmResult& r, std::ostream& out) {
  const bool gpu = r.cc_major > 0;
  out << "#\n# Best per precision (the measured peak"
      << (gpu ? "; datasheet: SMs x max SM clock x dense operations per SM per clock, from "
                "NVIDIA's whitepapers"
              : "")
      << "):\n";
  for (const micro::GemmSummary& s : r.summary) {
    char line[300];
    if (s.best_rate <= 0) {
      std::snprintf(line, sizeof line, "#  %-5s %s\n", to_string(s.precision), s.skipped.c_str());
      out << line;
      continue;
    }
    std::string datasheet = "datasheet: not known";
    if (s.datasheet)
      datasheet = "datasheet " + rate_text(s.datasheet->tera) + " (" +
                  rate_text(100 * s.best_rate / s.datasheet->tera) + " %; " + s.datasheet->basis +
                  ")";
    else if (!gpu)
      datasheet = "datasheet: not known on CPUs";
    std::snprintf(line, sizeof line, "#  %-5s %9s %-7s at %-17s %s\n", to_string(s.precision),
                  rate_text(s.best_rate).c_str(), rate_unit(s.precision),
                  dims_text(s.best_shape).c_str(), datasheet.c_str());
    out << line;
  }
  if (gpu)
    out << "# (NVIDIA states tensor-core peaks at a lower boost clock than the max SM clock: "
           "H100 SXM5 989 TFLOP/s bf16 at 1830 MHz)\n";
  out << "# Wrong entries: " << r.wrong << " of " << r.checked << " checked\n" << std::flush;
}

void run_gemm(GemmOptions& o, const GlobalOptions& global) {
  micro::GemmConfig config = o.config;
  if (!o.precisions.empty()) config.precisions = micro::parse_gemm_precisions(o.precisions);
  if (!o.shapes.empty()) config.shapes = micro::parse_gemm_shapes(o.shapes);
  config.workspace_bytes = runner::parse_bytes(o.workspace, "--workspace");
  micro::validate(config);
  MicroOutput output(o.json_path, global);
  const Device device = micro_device(o.launch);

  micro::GemmHooks hooks;
  if (output.table()) {
    hooks.on_start = [](const micro::GemmResult& r) { print_header(r, std::cout); };
    hooks.on_row = [](const micro::GemmRow& row) { print_row(row, std::cout); };
  }
  const micro::GemmResult result = micro::run_gemm_bench(device, config, hooks);
  if (output.table()) print_footer(result, std::cout);
  const nlohmann::json doc = micro::to_json(result);
  output.write_json(doc);

  std::string precisions;
  for (micro::GemmPrecision p : result.config.precisions)
    precisions += (precisions.empty() ? "" : ",") + std::string(to_string(p));
  micro::MicroRecordInput record{"gemm", result.device, precisions, doc, micro::metrics(result),
                                 {},     result.wrong};
  if (!o.no_store) record.environment = describe_this_machine().environment;
  store_and_judge(record, o.no_store, global);
}

}  // namespace

void add_micro_gemm_command(CLI::App& micro, GlobalOptions& global) {
  auto opts = std::make_shared<GemmOptions>();
  CLI::App* cmd = micro.add_subcommand(
      "gemm",
      "Dense matrix-product throughput per precision (cuBLASLt on GPUs, oneDNN on CPUs), "
      "checked");
  add_device_option(*cmd, opts->launch, "micro gemm",
                    "cpu or cuda[:N] (default: cuda when a GPU is present)");
  cmd->add_option("--precision", opts->precisions,
                  "all, or a comma list of fp64, fp32, tf32, fp16, bf16, fp8, int8 (default: all "
                  "on GPUs; fp32,bf16 on CPUs)");
  cmd->add_option("--shapes", opts->shapes,
                  "Comma list of N (square) or MxNxK (default: a sweep of squares and "
                  "ResNet-50/BERT-like shapes)");
  cmd->add_option("-n,--iters", opts->config.iters, "Timed products per shape, at least")
      ->capture_default_str();
  cmd->add_option("-w,--warmup", opts->config.warmup, "Untimed products before them")
      ->capture_default_str();
  cmd->add_option("--min-seconds", opts->config.min_seconds,
                  "More timed products until they take this long")
      ->capture_default_str();
  cmd->add_option("--algos", opts->config.algos,
                  "cuBLASLt heuristic candidates timed per shape (GPUs)")
      ->capture_default_str();
  cmd->add_option("--workspace", opts->workspace, "cuBLASLt workspace (K, M, G: powers of 1024)")
      ->capture_default_str();
  cmd->add_option("--samples", opts->config.samples, "Output entries checked per shape")
      ->capture_default_str();
  add_output_flags(*cmd, opts->json_path, opts->no_store);
  cmd->callback([opts, &global] { run_gemm(*opts, global); });
}

}  // namespace dlbench::cli

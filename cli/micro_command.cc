// dlbench micro: the subcommand, and micro allreduce: all-reduce bandwidth and correctness, in
// nccl-tests' table. gemm, bandwidth, transfer and p2p register from their own files.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "bench/report/report_data.h"
#include "bench/runner/allreduce_bench.h"
#include "bench/runner/launch_plan.h"
#include "cli/commands.h"
#include "cli/launch_options.h"
#include "cli/micro_commands.h"
#include "cli/output_file.h"
#include "engine/core/json_text.h"
#include "engine/dist/launch.h"

namespace dlbench::cli {
namespace {

struct AllreduceOptions {
  LaunchOptions launch;
  std::string min_bytes = "8", max_bytes = "1G";
  std::int64_t factor = runner::AllreduceConfig{}.factor;
  int iters = runner::AllreduceConfig{}.iters;
  int warmup = runner::AllreduceConfig{}.warmup;
  std::string dtype = "f32";
  std::optional<std::string> json_path;
};

runner::AllreduceConfig make_config(const AllreduceOptions& o) {
  runner::AllreduceConfig c;
  c.min_bytes = runner::parse_bytes(o.min_bytes, "--min-bytes");
  c.max_bytes = runner::parse_bytes(o.max_bytes, "--max-bytes");
  c.factor = o.factor;
  c.iters = o.iters;
  c.warmup = o.warmup;
  c.dtype = runner::parse_allreduce_dtype(o.dtype);
  runner::allreduce_sizes(c);  // throws on an impossible size range
  return c;
}

void print_header(const runner::AllreduceResult& r, std::ostream& out) {
  std::string devices;
  for (const std::string& d : r.devices) devices += (devices.empty() ? "" : " ") + d;
  out << "# dlbench micro allreduce: in-place sum over " << r.ranks << " rank"
      << (r.ranks == 1 ? "" : "s") << " (" << r.launch << "), " << r.communicator << "\n"
      << "# devices by rank: " << devices << "\n"
      << "# rank 0: " << r.backend << "\n"
      << "# " << r.config.iters << " timed all-reduces per size after " << r.config.warmup
      << " warm-up; time: the slowest rank's wall time per all-reduce\n#\n";
  char line[160];
  std::snprintf(line, sizeof line, "#%13s %13s %6s %12s %12s %12s %8s\n", "size(B)", "count",
                "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
  out << line << std::flush;
}

void print_row(const runner::AllreduceRow& row, DType dtype, std::ostream& out) {
  char line[160];
  std::snprintf(line, sizeof line, "%14lld %13lld %6s %12.2f %12.2f %12.2f %8llu\n",
                static_cast<long long>(row.bytes), static_cast<long long>(row.count),
                to_string(dtype), row.time_us, row.algbw_gbs, row.busbw_gbs,
                static_cast<unsigned long long>(row.wrong));
  out << line << std::flush;
}

void print_footer(const runner::AllreduceResult& r, std::ostream& out) {
  if (r.ranks < 2)
    out << "# Bus bandwidth needs 2+ ranks (one rank has no link to measure): use --gpus N, or "
           "mpirun -np N ... --dist mpi\n";
  else {
    // nccl-tests' line averages every size; the large sizes' mean says what the links carry.
    if (r.avg_busbw_gbs)
      out << "# Avg bus bandwidth    : " << report::fixed(*r.avg_busbw_gbs, 2)
          << " GB/s (mean over all " << r.rows.size() << " sizes, as nccl-tests averages)\n";
    if (r.large_busbw_gbs)
      out << "# Large-size bus bandwidth: " << report::fixed(*r.large_busbw_gbs, 2)
          << " GB/s (mean over the " << r.large_sizes << (r.large_sizes == 1 ? " size" : " sizes")
          << " >= 64 MiB)\n";
    else
      out << "# Large-size bus bandwidth: no size reached 64 MiB (raise --max-bytes)\n";
  }
  out << "# Wrong elements: " << r.wrong << "\n";
}

// Returns the number of wrong elements (over every rank and size).
std::uint64_t run_allreduce(const AllreduceOptions& o, const GlobalOptions& global, bool root) {
  // Everything the flags alone decide fails here, before MPI starts.
  const runner::AllreduceConfig config = make_config(o);
  // Where the ranks run: --gpus (threads), --dist mpi (this process is one rank, on the GPU of
  // its local rank), or one device. MPI lives as long as the measuring.
  const LaunchContext where = resolve_launch(o.launch, LaunchTarget::kEngine);
  const dist::LaunchPlan plan = runner::launch_plan(where.launch);
  runner::check_plan(plan, config);
  // Open the output first, so a typo in the path fails before the measuring.
  const std::string json_path = o.json_path.value_or(global.json ? "-" : "");
  OutputFile json_file(root && json_path != "-" ? json_path : "");

  runner::AllreduceHooks hooks;
  const bool table = json_path != "-";
  if (table) {
    hooks.on_start = [](const runner::AllreduceResult& r) { print_header(r, std::cout); };
    hooks.on_row = [&config](const runner::AllreduceRow& row) {
      print_row(row, config.dtype, std::cout);
    };
  }
  hooks.on_mismatch = [](const runner::AllreduceMismatch& m) {
    std::cerr << "dlbench: rank " << m.rank << ": " << m.wrong << " wrong elements at " << m.bytes
              << " bytes; the first, element " << m.index << ", is " << m.got << " instead of "
              << m.expected << "\n";
  };
  const runner::AllreduceResult result = runner::run_allreduce_bench(plan, config, hooks);
  if (result.root) {
    if (table) print_footer(result, std::cout);
    const nlohmann::json doc = runner::to_json(result);
    if (json_path == "-") std::cout << dump_json(doc, 2) << "\n";
    if (json_file.is_file()) {
      json_file.stream() << dump_json(doc, 2) << "\n";
      json_file.commit();
    }
  }
  return result.wrong;
}

}  // namespace

void add_micro_command(CLI::App& app, GlobalOptions& global) {
  CLI::App* micro =
      app.add_subcommand("micro",
                         "Micro-benchmarks of one part of the machine: allreduce, gemm, "
                         "bandwidth, transfer, p2p");
  micro->require_subcommand(1);
  auto opts = std::make_shared<AllreduceOptions>();
  CLI::App* ar = micro->add_subcommand(
      "allreduce",
      "All-reduce bandwidth and correctness between GPUs (NCCL) or CPU processes (MPI), "
      "nccl-tests style");
  // nccl-tests' spellings work too: -b, -e, -f, -g, -n, -w.
  add_launch_options(*ar, opts->launch,
                     {.command = "micro allreduce",
                      .device = "cpu or cuda (default: cuda when a GPU is present)",
                      .gpus = "All GPUs of this process, a thread each: N or all",
                      .gpus_names = "-g,--gpus"});
  ar->add_option("-b,--min-bytes", opts->min_bytes, "Smallest size (K, M, G: powers of 1024)")
      ->capture_default_str();
  ar->add_option("-e,--max-bytes", opts->max_bytes, "Largest size")->capture_default_str();
  ar->add_option("-f,--factor", opts->factor, "Each size is the previous one times this")
      ->capture_default_str();
  ar->add_option("-n,--iters", opts->iters, "Timed all-reduces per size")->capture_default_str();
  ar->add_option("-w,--warmup", opts->warmup, "Untimed all-reduces per size before them")
      ->capture_default_str();
  ar->add_option("--dtype", opts->dtype, "f32, f16 or bf16")->capture_default_str();
  ar->add_option("--json", opts->json_path,
                 "Write the results as JSON to FILE (stdout when FILE is '-' or left out)")
      ->expected(0, 1)
      ->default_str("-")
      ->type_name("FILE");
  ar->callback([opts, &global] {
    // Under mpirun every rank parses the same flags and sums the same wrong counts: rank 0
    // alone reports those; a rank's own failure names the rank.
    const dist::LauncherEnv env = dist::read_launcher_env();
    const bool root = opts->launch.dist != "mpi" || env.rank.value_or(0) == 0;
    std::uint64_t wrong = 0;
    try {
      wrong = run_allreduce(*opts, global, root);
    } catch (const Error& e) {
      if (root) throw;
      if (e.kind() != ErrorKind::kUsage)
        throw Error(e.kind(), "rank " + std::to_string(*env.rank) + ": " + e.what(), e.hint(),
                    e.setting());
      global.exit_code = exit_code(e.kind());
      return;
    }
    if (wrong == 0) return;
    const Error error(ErrorKind::kExternal,
                      "the all-reduce gave " + std::to_string(wrong) + " wrong elements",
                      "the sums between these devices are wrong: check the GPUs and links "
                      "(`dlbench info`, NCCL_DEBUG=WARN) before trusting a multi-GPU result");
    if (root) throw error;
    global.exit_code = exit_code(error.kind());
  });
  add_micro_gemm_command(*micro, global);
  add_micro_memory_commands(*micro, global);
}

}  // namespace dlbench::cli

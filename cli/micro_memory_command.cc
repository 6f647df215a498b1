// dlbench micro bandwidth, transfer and p2p: how fast this machine moves bytes, within a
// device's memory, between host and GPU, and between GPUs. Each table says how many elements
// arrived wrong.
#include <cstdio>
#include <iostream>

#include "bench/micro/bandwidth_bench.h"
#include "bench/micro/transfer_bench.h"
#include "bench/runner/allreduce_bench.h"
#include "cli/micro_commands.h"
#include "engine/backend/backend.h"
#include "engine/core/error.h"

namespace dlbench::cli {
namespace {

struct BandwidthOptions {
  LaunchOptions launch;
  std::string size;  // empty: the device's default
  micro::BandwidthConfig config;
  std::optional<std::string> json_path;
  bool no_store = false;
};

// The figure `dlbench info` prints for this GPU: NVML's memory clock x bus width x 2.
std::optional<double> theoretical_of(const sysinfo::MachineInfo& m, const Device& d) {
  if (d.type != DeviceType::kCuda) return std::nullopt;
  for (const sysinfo::GpuInfo& g : m.gpu.gpus)
    if (g.cuda_index.available() && g.cuda_index.value() == d.index &&
        g.memory_bandwidth_gb_per_s.available())
      return g.memory_bandwidth_gb_per_s.value();
  return std::nullopt;
}

void print_bandwidth_header(const micro::BandwidthResult& r, std::ostream& out) {
  out << "# dlbench micro bandwidth: STREAM-style copy and triad (a = b + 3c) on " << r.backend
      << "\n# " << r.method << "\n# arrays of " << r.config.array_bytes << " bytes; "
      << r.config.iters << " timed iterations after " << r.config.warmup
      << " warm-up; bytes counted as STREAM does (copy 2x, triad 3x the array)\n"
      << "# theoretical: "
      << (r.theoretical_gb_per_s
              ? std::to_string(static_cast<long long>(*r.theoretical_gb_per_s)) +
                    " GB/s (dlbench info: memory clock x bus width x 2)"
              : std::string("not known") + (r.device == "cpu" ? " on CPUs" : " (NVML did not say)"))
      << "\n#\n";
  char line[160];
  std::snprintf(line, sizeof line, "#%-7s %14s %12s %12s %12s %9s %11s %8s\n", "test", "bytes/iter",
                "best(us)", "best(GB/s)", "mean(GB/s)", "%theory", "#checked", "#wrong");
  out << line << std::flush;
}

void print_bandwidth_row(const micro::BandwidthRow& row, std::optional<double> theoretical,
                         std::ostream& out) {
  char share[16] = "-";
  if (theoretical && *theoretical > 0)
    std::snprintf(share, sizeof share, "%.1f", 100 * row.best_gb_per_s / *theoretical);
  char line[160];
  std::snprintf(line, sizeof line, "%-8s %14lld %12.1f %12.1f %12.1f %9s %11lld %8lld\n",
                row.test.c_str(), static_cast<long long>(row.bytes_moved), row.best_time_us,
                row.best_gb_per_s, row.mean_gb_per_s, share, static_cast<long long>(row.checked),
                static_cast<long long>(row.wrong));
  out << line << std::flush;
}

void run_bandwidth(BandwidthOptions& o, const GlobalOptions& global) {
  micro::BandwidthConfig config = o.config;
  if (!o.size.empty()) config.array_bytes = runner::parse_bytes(o.size, "--size");
  const Device device = micro_device(o.launch);
  if (config.array_bytes == 0) config.array_bytes = micro::default_array_bytes(device.type);
  micro::validate(config);
  MicroOutput output(o.json_path, global);
  const MicroMachine machine = describe_this_machine();
  const std::optional<double> theoretical = theoretical_of(machine.info, device);

  micro::BandwidthHooks hooks;
  if (output.table()) {
    hooks.on_start = [](const micro::BandwidthResult& r) { print_bandwidth_header(r, std::cout); };
    hooks.on_row = [theoretical](const micro::BandwidthRow& row) {
      print_bandwidth_row(row, theoretical, std::cout);
    };
  }
  const micro::BandwidthResult r = micro::run_bandwidth_bench(device, config, theoretical, hooks);
  if (output.table()) {
    std::cout << "#\n# Best: " << static_cast<long long>(r.best_gb_per_s()) << " GB/s";
    if (theoretical && *theoretical > 0)
      std::cout << " (" << static_cast<long long>(100 * r.best_gb_per_s() / *theoretical)
                << " % of theoretical)";
    std::cout << "\n# Wrong elements: " << r.wrong << "\n" << std::flush;
  }
  const nlohmann::json doc = micro::to_json(r);
  output.write_json(doc);
  store_and_judge({"bandwidth", r.device, "", doc, micro::metrics(r), machine.environment, r.wrong},
                  o.no_store, global);
}

struct TransferOptions {
  LaunchOptions launch;
  std::string min_bytes = "64K", max_bytes = "256M";
  micro::TransferConfig config;
  std::optional<std::string> json_path;
  bool no_store = false;
};

void run_transfer(TransferOptions& o, const GlobalOptions& global) {
  micro::TransferConfig config = o.config;
  config.min_bytes = runner::parse_bytes(o.min_bytes, "--min-bytes");
  config.max_bytes = runner::parse_bytes(o.max_bytes, "--max-bytes");
  (void)micro::transfer_sizes(config);  // flags fail before the device is touched
  LaunchOptions launch = o.launch;
  if (launch.device.empty()) launch.device = "cuda";
  const Device device = micro_device(launch);
  if (device.type != DeviceType::kCuda)
    throw Error(ErrorKind::kUsage, "micro transfer measures copies between host and GPU",
                "use --device cuda[:N]; a CPU has no transfer to measure");
  MicroOutput output(o.json_path, global);
  micro::TransferHooks hooks;
  if (output.table()) {
    hooks.on_start = [](const micro::TransferResult& r) {
      std::cout << "# dlbench micro transfer: host <-> " << r.backend
                << ", cudaMemcpyAsync on one stream, " << r.config.iters
                << " timed copies per size after " << r.config.warmup << " warm-up\n"
                << "# pinned: cudaMallocHost; pageable: plain host memory\n#\n";
      char line[120];
      std::snprintf(line, sizeof line, "#%-8s %-9s %13s %12s %10s %8s\n", "dir", "memory",
                    "size(B)", "time(us)", "GB/s", "#wrong");
      std::cout << line << std::flush;
    };
    hooks.on_row = [](const micro::TransferRow& row) {
      char line[120];
      std::snprintf(line, sizeof line, "%-9s %-9s %13lld %12.1f %10.2f %8lld\n",
                    row.direction.c_str(), row.memory.c_str(), static_cast<long long>(row.bytes),
                    row.time_us, row.gb_per_s, static_cast<long long>(row.wrong));
      std::cout << line << std::flush;
    };
  }
  const micro::TransferResult r = micro::run_transfer_bench(device.index, config, hooks);
  if (output.table()) std::cout << "#\n# Wrong words: " << r.wrong << "\n" << std::flush;
  const nlohmann::json doc = micro::to_json(r);
  output.write_json(doc);
  micro::MicroRecordInput record{"transfer", r.device, "", doc, micro::metrics(r), {}, r.wrong};
  if (!o.no_store) record.environment = describe_this_machine().environment;
  store_and_judge(record, o.no_store, global);
}

struct P2pOptions {
  std::string size = "256M";
  micro::P2pConfig config;
  std::optional<std::string> json_path;
  bool no_store = false;
};

// How two CUDA devices connect, in `dlbench info`'s codes ("NV18", "PHB"); "?" when NVML
// cannot say.
std::string link_code(const MicroMachine& m, int a, int b) {
  const std::vector<int> na = sysinfo::nvml_indices_of_cuda_devices(m.info.gpu, std::vector{a});
  const std::vector<int> nb = sysinfo::nvml_indices_of_cuda_devices(m.info.gpu, std::vector{b});
  if (na.size() != 1 || nb.size() != 1) return "?";
  const sysinfo::GpuPair* p = m.info.interconnect.pair(na[0], nb[0]);
  return p != nullptr && !p->code.empty() ? p->code : "?";
}

void print_matrix(const micro::P2pResult& r, const char* title,
                  const std::function<std::string(const micro::P2pPair&)>& cell) {
  const int n = static_cast<int>(r.gpus.size());
  std::cout << "# " << title << " (row: source GPU, column: destination GPU)\n";
  char field[32];
  std::snprintf(field, sizeof field, "%-8s", "src\\dst");
  std::cout << field;
  for (int d = 0; d < n; ++d) {
    std::snprintf(field, sizeof field, "%10d", d);
    std::cout << field;
  }
  std::cout << "\n";
  for (int s = 0; s < n; ++s) {
    std::snprintf(field, sizeof field, "%-8d", s);
    std::cout << field;
    for (int d = 0; d < n; ++d) {
      const micro::P2pPair* p = r.pair(s, d);
      std::snprintf(field, sizeof field, "%10s", p ? cell(*p).c_str() : "X");
      std::cout << field;
    }
    std::cout << "\n";
  }
}

void run_p2p(P2pOptions& o, const GlobalOptions& global) {
  micro::P2pConfig config = o.config;
  config.bytes = runner::parse_bytes(o.size, "--size");
  micro::validate(config);
  MicroOutput output(o.json_path, global);
  micro::P2pResult r = micro::run_p2p_bench(config);
  const MicroMachine machine = describe_this_machine();
  for (micro::P2pPair& p : r.pairs) p.code = link_code(machine, p.src, p.dst);
  if (output.table()) {
    std::cout << "# dlbench micro p2p: cudaMemcpyPeerAsync between every pair of GPUs; "
              << config.bytes << " bytes for bandwidth, 4 bytes for latency\n";
    for (std::size_t i = 0; i < r.gpus.size(); ++i) std::cout << "# " << r.gpus[i] << "\n";
    if (r.gpus.size() < 2) {
      std::cout << "# p2p needs 2+ GPUs; this process sees " << r.gpus.size()
                << ": nothing to measure\n";
    } else {
      char text[32];
      print_matrix(r, "Bandwidth, GB/s", [&](const micro::P2pPair& p) {
        std::snprintf(text, sizeof text, "%.1f", p.gb_per_s);
        return std::string(text);
      });
      print_matrix(r, "Latency, us", [&](const micro::P2pPair& p) {
        std::snprintf(text, sizeof text, "%.2f", p.latency_us);
        return std::string(text);
      });
      print_matrix(r, "Link (dlbench info's codes; * = no peer access)",
                   [](const micro::P2pPair& p) { return p.code + (p.peer_access ? "" : "*"); });
      print_matrix(r, "#wrong", [](const micro::P2pPair& p) { return std::to_string(p.wrong); });
    }
    std::cout << "# Wrong elements: " << r.wrong << "\n" << std::flush;
  }
  const nlohmann::json doc = micro::to_json(r);
  output.write_json(doc);
  if (r.gpus.size() < 2) return;  // nothing measured, nothing stored
  store_and_judge({"p2p", std::to_string(r.gpus.size()) + "x cuda", "", doc, micro::metrics(r),
                   machine.environment, r.wrong},
                  o.no_store, global);
}

}  // namespace

void add_micro_memory_commands(CLI::App& micro, GlobalOptions& global) {
  auto bw = std::make_shared<BandwidthOptions>();
  CLI::App* b = micro.add_subcommand(
      "bandwidth", "Memory bandwidth, STREAM style: copy and triad (GPU: and cudaMemcpy), checked");
  add_device_option(*b, bw->launch, "micro bandwidth",
                    "cpu or cuda[:N] (default: cuda when a GPU is present)");
  b->add_option("--size", bw->size,
                "Bytes per array (K, M, G: powers of 1024; default 1G on GPUs, 128M on CPUs)");
  b->add_option("-n,--iters", bw->config.iters, "Timed iterations per test")->capture_default_str();
  b->add_option("-w,--warmup", bw->config.warmup, "Untimed iterations before them")
      ->capture_default_str();
  add_output_flags(*b, bw->json_path, bw->no_store);
  b->callback([bw, &global] { run_bandwidth(*bw, global); });

  auto tr = std::make_shared<TransferOptions>();
  CLI::App* t = micro.add_subcommand(
      "transfer", "Host-to-device and device-to-host copies, pinned and pageable, over sizes");
  add_device_option(*t, tr->launch, "micro transfer", "cuda[:N] (default: cuda)");
  t->add_option("-b,--min-bytes", tr->min_bytes, "Smallest size (K, M, G: powers of 1024)")
      ->capture_default_str();
  t->add_option("-e,--max-bytes", tr->max_bytes, "Largest size")->capture_default_str();
  t->add_option("-f,--factor", tr->config.factor, "Each size is the previous one times this")
      ->capture_default_str();
  t->add_option("-n,--iters", tr->config.iters, "Timed copies per size")->capture_default_str();
  t->add_option("-w,--warmup", tr->config.warmup, "Untimed copies before them")
      ->capture_default_str();
  add_output_flags(*t, tr->json_path, tr->no_store);
  t->callback([tr, &global] { run_transfer(*tr, global); });

  auto pp = std::make_shared<P2pOptions>();
  CLI::App* p = micro.add_subcommand(
      "p2p", "GPU-to-GPU copy bandwidth and latency between every pair of GPUs, checked");
  p->add_option("--size", pp->size, "Bytes per bandwidth copy (K, M, G: powers of 1024)")
      ->capture_default_str();
  p->add_option("-n,--iters", pp->config.iters, "Timed copies per pair")->capture_default_str();
  p->add_option("-w,--warmup", pp->config.warmup, "Untimed copies before them")
      ->capture_default_str();
  add_output_flags(*p, pp->json_path, pp->no_store);
  p->callback([pp, &global] { run_p2p(*pp, global); });
}

}  // namespace dlbench::cli

#include "bench/micro/transfer_bench.h"

#include <algorithm>
#include <map>

#include "engine/core/error.h"

namespace dlbench::micro {

std::vector<std::int64_t> transfer_sizes(const TransferConfig& c) {
  if (c.min_bytes < 4)
    throw Error(ErrorKind::kUsage, "--min-bytes must be at least 4 (one 4-byte word)");
  if (c.min_bytes > c.max_bytes)
    throw Error(ErrorKind::kUsage, "--min-bytes must not exceed --max-bytes");
  if (c.factor < 2)
    throw Error(ErrorKind::kUsage, "--factor must be at least 2, not " + std::to_string(c.factor));
  if (c.iters < 1)
    throw Error(ErrorKind::kUsage, "--iters must be at least 1, not " + std::to_string(c.iters));
  if (c.warmup < 0)
    throw Error(ErrorKind::kUsage, "--warmup must be at least 0, not " + std::to_string(c.warmup));
  std::vector<std::int64_t> sizes;
  for (std::int64_t b = c.min_bytes; b <= c.max_bytes; b *= c.factor) {
    sizes.push_back(b / 4 * 4);
    if (b > c.max_bytes / c.factor) break;
  }
  return sizes;
}

nlohmann::json to_json(const TransferResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const TransferRow& row : r.rows)
    rows.push_back({{"direction", row.direction},
                    {"memory", row.memory},
                    {"bytes", row.bytes},
                    {"time_us", row.time_us},
                    {"gb_per_s", row.gb_per_s},
                    {"checked", row.checked},
                    {"wrong", row.wrong}});
  return {{"schema", "dlbench.micro.transfer/1"},
          {"device", r.device},
          {"backend", r.backend},
          {"config",
           {{"min_bytes", r.config.min_bytes},
            {"max_bytes", r.config.max_bytes},
            {"factor", r.config.factor},
            {"warmup", r.config.warmup},
            {"iters", r.config.iters}}},
          {"rows", rows},
          {"wrong", r.wrong}};
}

std::vector<store::MetricRecord> metrics(const TransferResult& r) {
  std::vector<store::MetricRecord> out;
  std::map<std::string, double> best;
  for (const TransferRow& row : r.rows) {
    const std::string kind = row.direction + "_" + row.memory;
    out.push_back({"transfer/" + kind + "/" + std::to_string(row.bytes), row.gb_per_s, "GB/s",
                   row.direction + " copy from " + row.memory + " host memory"});
    best[kind] = std::max(best[kind], row.gb_per_s);
  }
  for (const auto& [kind, rate] : best)
    out.push_back({"transfer/" + kind + "/best", rate, "GB/s", "the fastest size's rate"});
  out.push_back({"transfer/wrong", double(r.wrong), "words",
                 "destination words that did not hold what the source held"});
  return out;
}

void validate(const P2pConfig& c) {
  if (c.bytes < 4) throw Error(ErrorKind::kUsage, "--size must be at least 4 bytes");
  if (c.iters < 1)
    throw Error(ErrorKind::kUsage, "--iters must be at least 1, not " + std::to_string(c.iters));
  if (c.warmup < 0)
    throw Error(ErrorKind::kUsage, "--warmup must be at least 0, not " + std::to_string(c.warmup));
}

const P2pPair* P2pResult::pair(int src, int dst) const {
  for (const P2pPair& p : pairs)
    if (p.src == src && p.dst == dst) return &p;
  return nullptr;
}

nlohmann::json to_json(const P2pResult& r) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const P2pPair& p : r.pairs)
    pairs.push_back({{"src", p.src},
                     {"dst", p.dst},
                     {"peer_access", p.peer_access},
                     {"gb_per_s", p.gb_per_s},
                     {"latency_us", p.latency_us},
                     {"checked", p.checked},
                     {"wrong", p.wrong},
                     {"code", p.code}});
  return {{"schema", "dlbench.micro.p2p/1"},
          {"gpus", r.gpus},
          {"config",
           {{"bytes", r.config.bytes},
            {"warmup", r.config.warmup},
            {"iters", r.config.iters},
            {"latency_iters", r.config.latency_iters}}},
          {"pairs", pairs},
          {"wrong", r.wrong}};
}

std::vector<store::MetricRecord> metrics(const P2pResult& r) {
  std::vector<store::MetricRecord> out;
  for (const P2pPair& p : r.pairs) {
    const std::string key = "p2p/" + std::to_string(p.src) + "-" + std::to_string(p.dst);
    const std::string how = p.peer_access ? "peer access" : "no peer access (through the host)";
    out.push_back({key + "/gb_per_s", p.gb_per_s, "GB/s",
                   "cudaMemcpyPeer of " + std::to_string(r.config.bytes) + " bytes, " + how});
    out.push_back({key + "/latency_us", p.latency_us, "us", "cudaMemcpyPeer of 4 bytes, " + how});
  }
  out.push_back({"p2p/wrong", double(r.wrong), "elements",
                 "destination elements that did not hold what the source held"});
  return out;
}

}  // namespace dlbench::micro

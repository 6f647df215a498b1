// Goldens: what ResNet-50 and VGG16 compute on the CPU, bit for bit, recorded once so that the
// engine's redesign (docs/plan-step-contract.md) can show it changed nothing. For each model, at
// a tiny width and a fixed seed: the first training losses as hex floats, hashes of the weights
// and gradients after those steps, of the parameter layout and of the inference logits, and the
// planned memory. A second part runs the real `dlbench run` and keeps its first and last loss,
// which also covers the runner's data seed.
//
// The bits depend on the CPU's instruction set (oneDNN picks kernels by it), oneDNN's version
// and the thread count (reductions split by thread), so each file's header records them; on a
// machine whose header differs the test skips and says how to record goldens there. It never
// passes silently. The CLI's full-width VGG16 also depends on the cache sizes (oneDNN blocks by
// them: two 2-core AVX-512 machines with the same header gave different CLI losses), so the CLI
// goldens add them to their header and are kept per kind of machine, in files named by a hash of
// it (vgg16_cli_<hash>.txt); the engine's tiny-width goldens are the same bits on both.
// DLBENCH_GOLDEN_WRITE=1 writes this machine's files in the source tree.
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <oneapi/dnnl/dnnl.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/hash.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

constexpr std::int64_t kBatch = 4;
constexpr std::int64_t kInput = 32;
constexpr int kWidthDivisor = 8;
constexpr int kTrainSteps = 6;
constexpr std::uint64_t kDataSeed = 7;

std::string hex(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", v);
  return text;
}

std::string hash_text(std::uint64_t h) {
  char text[32];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

std::uint64_t tensor_hash(backend::Backend& be, const Tensor& t) {
  std::vector<unsigned char> host(t.bytes());
  be.to_host(t, host.data());
  return fnv1a(host.data(), host.size());
}

// What the bits depend on besides our code.
std::string machine_header(bool with_caches) {
  const dnnl_version_t* v = dnnl_version();
  std::ostringstream h;
  h << "isa " << static_cast<int>(dnnl::get_effective_cpu_isa()) << "\n"
    << "onednn " << v->major << "." << v->minor << "." << v->patch << "\n"
    << "threads " << omp_get_max_threads() << "\n";
  if (with_caches)
    h << "caches " << sysconf(_SC_LEVEL1_DCACHE_SIZE) << " " << sysconf(_SC_LEVEL2_CACHE_SIZE)
      << " " << sysconf(_SC_LEVEL3_CACHE_SIZE) << "\n";
  return h.str();
}

struct Built {
  nn::Graph graph;
};

Built build(const std::string& model) {
  const models::ModelSpec& info = models::find_model(model);
  models::ModelConfig mc;
  mc.batch = kBatch;
  mc.size = kInput;
  mc.width_divisor = kWidthDivisor;
  mc = models::resolve(info, mc);
  return {info.build(mc)};
}

std::string memory_line(const char* mode, const nn::MemoryReport& m) {
  std::ostringstream line;
  line << "memory " << mode << " " << m.parameters << " " << m.optimizer << " " << m.state << " "
       << m.activations << "\n";
  return line.str();
}

// The engine's part: losses, weights, gradients, layout, memory and logits.
std::string engine_record(const std::string& model) {
  auto be = backend::make_backend(Device::cpu());
  std::ostringstream out;
  {
    Built b = build(model);
    nn::TrainerConfig nc;
    nc.seed = 42;
    nc.optimizer.learning_rate = 0.01f;
    nc.optimizer.momentum = 0.9f;
    nc.optimizer.weight_decay = 1e-4f;  // so decayed and not-decayed parameters both show
    nn::Trainer net(std::move(b.graph), *be, nc);
    data::SyntheticSource source(net.graph().input_specs(), kDataSeed);
    for (int step = 0; step < kTrainSteps; ++step) {
      source.fill(*be, net.inputs());
      net.train_step();
      out << "loss " << step << " " << hex(net.loss()) << "\n";
    }
    out << "weights " << hash_text(tensor_hash(*be, net.flat_weights())) << "\n";
    out << "grads " << hash_text(tensor_hash(*be, net.flat_grads())) << "\n";
    std::uint64_t layout = kFnv1aOffset;
    for (const nn::ParameterSlice& s : net.parameter_slices()) {
      std::string entry = s.name + " " + std::to_string(s.offset) + " " + std::to_string(s.count);
      layout = fnv1a(entry.data(), entry.size() + 1, layout);
    }
    out << "layout " << hash_text(layout) << " " << net.parameter_slices().size() << "\n";
    out << memory_line("train", net.memory());
  }
  {
    Built b = build(model);
    nn::TrainerConfig nc;
    nc.mode = Mode::kInfer;
    nc.seed = 42;
    nn::Trainer net(std::move(b.graph), *be, nc);
    data::SyntheticSource source(net.graph().input_specs(), kDataSeed);
    source.fill(*be, net.inputs());
    net.infer_step();
    out << "logits " << hash_text(tensor_hash(*be, net.logits())) << "\n";
    out << memory_line("infer", net.memory());
  }
  return out.str();
}

// The runner's part, through the real binary.
std::string cli_record(const std::string& model) {
  auto r = testing::run_command(std::string(DLBENCH_BINARY) + " --json run " + model +
                                " --device cpu --input 32 --batch 2 --warmup 1 --steps 2"
                                " --no-telemetry --no-store");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return "cli failed\n";
  nlohmann::json doc = nlohmann::json::parse(r.out);
  return "cli loss " + hex(doc["loss"]["first"].get<double>()) + " " +
         hex(doc["loss"]["last"].get<double>()) + "\n";
}

std::string golden_dir() {
  return std::string(DLBENCH_SOURCE_DIR) + "/tests/engine/golden/";
}

using testing::read_file;

// header + record against the golden file at `path`; DLBENCH_GOLDEN_WRITE=1 writes it instead.
void check_golden(const std::string& path, const std::string& header, const std::string& record) {
  if (const char* write = std::getenv("DLBENCH_GOLDEN_WRITE"); write && std::string(write) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << header << record;
    std::printf("wrote %s\n", path.c_str());
    return;
  }
  const std::string golden = read_file(path);
  if (golden.compare(0, header.size(), header) != 0)
    GTEST_SKIP() << "no goldens for this kind of machine in " << path << " (its header is not\n"
                 << header << "); record this machine's with DLBENCH_GOLDEN_WRITE=1 ctest -R "
                 << "Golden (on the code before the change)";
  EXPECT_EQ(header + record, golden)
      << "ResNet-50/VGG16 no longer compute what they did: explain every difference, or, if a "
         "change is meant to alter the numbers, record new goldens and say why in the commit";
}

void check_engine(const std::string& model) {
  check_golden(golden_dir() + model + "_cpu.txt", machine_header(false), engine_record(model));
}

void check_cli(const std::string& model) {
  const std::string header = machine_header(true);
  check_golden(
      golden_dir() + model + "_cli_" + hash_text(fnv1a(header.data(), header.size())) + ".txt",
      header, cli_record(model));
}

TEST(GoldenTest, ResNet50EngineComputesWhatItDidBitForBit) {
  check_engine("resnet50");
}
TEST(GoldenTest, Vgg16EngineComputesWhatItDidBitForBit) {
  check_engine("vgg16");
}
TEST(GoldenTest, ResNet50CliComputesWhatItDidBitForBit) {
  check_cli("resnet50");
}
TEST(GoldenTest, Vgg16CliComputesWhatItDidBitForBit) {
  check_cli("vgg16");
}

}  // namespace
}  // namespace dlbench

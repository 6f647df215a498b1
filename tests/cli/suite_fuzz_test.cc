// A seeded fuzzer of suite files (issue 15): valid suites mutated at random (byte flips,
// deletions, duplications, deep nesting, huge and non-finite numbers, random keys, Latin-1 and
// NUL bytes) are given to the real binary's `suite FILE --check`, which reads and validates the
// whole file but opens no database and runs nothing. No case may crash (exit >= 128), hang
// (timeout's 124) or fail internally (exit 1); a refusal must name the file; and no database may
// appear. DLBENCH_FUZZ_SEED and DLBENCH_FUZZ_CASES (default 200) change the seed and the count;
// a failure prints the seed, and the failing file is kept beside the test's temp folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/store/store_test_util.h"
#include "tests/support/run_command.h"

namespace dlbench {
namespace {

namespace fs = std::filesystem;

using testing::read_file;

class Mutator {
 public:
  explicit Mutator(unsigned seed) : rng_(seed) {}

  std::size_t below(std::size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }
  template <typename T>
  const T& pick(const std::vector<T>& from) {
    return from[below(from.size())];
  }

  // One to three mutations of a valid suite.
  std::string mutate(std::string text) {
    const int n = 1 + int(below(3));
    for (int i = 0; i < n; ++i) text = mutate_once(text);
    return text;
  }

 private:
  // The start of a random line (so inserted lines are lines of their own).
  std::size_t line_start(const std::string& text) {
    std::size_t at = below(text.size() + 1);
    std::size_t nl = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
    return nl == std::string::npos ? 0 : nl + 1;
  }

  std::string nesting() {
    const std::vector<int> depths = {2, 63, 64, 65, 100, 1000, 50'000};
    const int depth = pick(depths);
    std::string part = pick(std::vector<std::string>{"a", "run", "\"q.q\"", "'x'", "defaults"});
    std::string dotted = part;
    for (int i = 1; i < depth; ++i) dotted += "." + part;
    switch (below(5)) {
      case 0:
        return dotted + " = 1\n";
      case 1:
        return "[" + dotted + "]\n";
      case 2:
        return "[[" + dotted + "]]\n";
      case 3:
        return "x = " + std::string(depth, '[') + std::string(depth, ']') + "\n";
      default: {
        std::string inline_tables;
        for (int i = 0; i < depth; ++i) inline_tables += "{a.b=";
        return "y = " + inline_tables + "1" + std::string(depth, '}') + "\n";
      }
    }
  }

  std::string mutate_once(const std::string& text) {
    static const std::vector<std::string> numbers = {"0",
                                                     "-1",
                                                     "-0",
                                                     "1e309",
                                                     "-1e309",
                                                     "inf",
                                                     "-inf",
                                                     "nan",
                                                     "+nan",
                                                     "1e-320",
                                                     "0.5",
                                                     "9223372036854775807",
                                                     "9223372036854775808",
                                                     "-9223372036854775808",
                                                     "99999999999999999999999",
                                                     "4294967297",
                                                     "4294967328",
                                                     "2147483648",
                                                     "16777217",
                                                     "0x7fffffffffffffff",
                                                     "0b1",
                                                     "1_000",
                                                     "3.4e39",
                                                     "true",
                                                     "\"32\"",
                                                     "[]",
                                                     "[1, \"a\"]",
                                                     "{}",
                                                     "1979-05-27T07:32:00Z"};
    static const std::vector<std::string> keys = {
        "model",       "mode",    "precision", "batch",     "device", "devices",  "input",
        "warmup",      "steps",   "seconds",   "seed",      "lr",     "momentum", "name",
        "description", "nmae",    "bacth",     "framework", "gpus",   "defaults", "run",
        "\"\"",        "\"a.b\"", "k\xe9y",    "x.y.z"};
    static const std::vector<std::string> texts = {"\"resnet50\"",
                                                   "\"vgg16\"",
                                                   "\"vgg17\"",
                                                   "\"\"",
                                                   "\"trian\"",
                                                   "\"gpu\"",
                                                   "\"cuda:99\"",
                                                   "\"cuda:-1\"",
                                                   "\"fp8\"",
                                                   "\"fp16\"",
                                                   "\"caf\xe9\"",
                                                   "\"\\u0000\"",
                                                   "'''x'''",
                                                   "\"<!--<script>\"",
                                                   "[\"train\", \"infer\"]",
                                                   "[]",
                                                   "[[]]"};
    std::string out = text;
    switch (below(11)) {
      case 0: {  // flip bits of a few bytes
        for (int i = 0, n = 1 + int(below(4)); i < n && !out.empty(); ++i)
          out[below(out.size())] ^= char(1u << below(8));
        break;
      }
      case 1: {  // delete a range
        std::size_t at = below(out.size());
        out.erase(at, below(std::min<std::size_t>(40, out.size() - at) + 1));
        break;
      }
      case 2: {  // duplicate a range somewhere else
        std::size_t at = below(out.size());
        std::string piece = out.substr(at, below(120) + 1);
        out.insert(below(out.size() + 1), piece);
        break;
      }
      case 3:
        out.insert(line_start(out), nesting());
        break;
      case 4: {  // a number replaced by a hostile one
        std::size_t at = out.find_first_of("0123456789", below(out.size()));
        if (at == std::string::npos) at = out.find_first_of("0123456789");
        if (at == std::string::npos) break;
        std::size_t end = out.find_first_not_of("0123456789.", at);
        out.replace(at, (end == std::string::npos ? out.size() : end) - at, pick(numbers));
        break;
      }
      case 5: {  // a random key = value line
        const std::string& value = below(2) ? pick(numbers) : pick(texts);
        out.insert(line_start(out), pick(keys) + " = " + value + "\n");
        break;
      }
      case 6: {  // Latin-1, NUL and other stray bytes
        static const std::vector<std::string> bytes = {
            "\xe9", "\xff", "\xc3",         std::string(1, '\0'),
            "\x01", "\r",   "\xef\xbb\xbf", "\xed\xa0\x80"};
        out.insert(below(out.size() + 1), pick(bytes));
        break;
      }
      case 7: {  // a hostile value for a key that is there
        std::size_t eq = out.find(" = ", below(out.size()));
        if (eq == std::string::npos) eq = out.find(" = ");
        if (eq == std::string::npos) break;
        std::size_t end = out.find('\n', eq);
        const std::string& value = below(2) ? pick(numbers) : pick(texts);
        out.replace(eq + 3, (end == std::string::npos ? out.size() : end) - eq - 3, value);
        break;
      }
      case 8: {  // a long array: many runs
        std::string values = "[1";
        for (std::size_t i = 2, n = 1 + below(20'000); i <= n; ++i)
          values += ", " + std::to_string(i);
        out.insert(line_start(out), pick(keys) + " = " + values + "]\n");
        break;
      }
      case 9: {  // a table header
        static const std::vector<std::string> headers = {
            "[defaults]", "[default]",   "[[run]]",   "[run]", "[[defaults]]", "[[runs]]",
            "[name]",     "[run.model]", "[[run.x]]", "[]",    "[[]]",         "["};
        out.insert(line_start(out), pick(headers) + "\n");
        break;
      }
      default:
        out.resize(below(out.size() + 1));
        break;  // cut short
    }
    return out;
  }

  std::mt19937 rng_;
};

TEST(SuiteFuzzTest, MutatedSuitesNeverCrashHangOrFailInternally) {
  const char* seed_text = std::getenv("DLBENCH_FUZZ_SEED");
  const char* count_text = std::getenv("DLBENCH_FUZZ_CASES");
  const unsigned seed = seed_text ? unsigned(std::strtoul(seed_text, nullptr, 10)) : 15u;
  const int cases = count_text ? std::atoi(count_text) : 200;
  const std::string dir = testing::temp_folder("fuzz-suite");
  const std::string db = dir + "/fuzz.db";
  std::vector<std::string> valid = {
      read_file(std::string(DLBENCH_SOURCE_DIR) + "/suites/quick-cpu.toml"),
      read_file(std::string(DLBENCH_SOURCE_DIR) + "/suites/quick.toml"),
      "name = \"tiny\"\n[defaults]\ndevice = \"cpu\"\nwarmup = 0\nsteps = 1\n[[run]]\n"
      "model = \"resnet50\"\ninput = 32\nbatch = [1, 2]\nmode = [\"train\", \"infer\"]\n"
      "seed = 7\nlr = 0.01\nmomentum = 0.5\nseconds = 0\n",
      "[[run]]\nmodel = \"vgg16\"\ndevices = [\"cuda:0\", \"cuda:1\"]\nprecision = \"bf16\"\n"};
  ASSERT_FALSE(valid[0].empty()) << "suites/quick-cpu.toml not found";
  // Cases are made in order from the seed, then run two at a time (the binary's start-up is
  // most of a case's time, and CI has two cores).
  Mutator mutator(seed);
  constexpr int kParallel = 2;
  int failures = 0;
  for (int first = 0; first < cases && failures < 5; first += kParallel) {
    std::vector<std::string> files;
    std::vector<std::future<testing::CommandResult>> results;
    for (int i = first; i < std::min(cases, first + kParallel); ++i) {
      files.push_back(dir + "/case-" + std::to_string(i) + ".toml");
      std::ofstream(files.back(), std::ios::binary) << mutator.mutate(mutator.pick(valid));
      results.push_back(std::async(std::launch::async, testing::run_command,
                                   "timeout 30 " DLBENCH_BINARY " --db " + db + " suite " +
                                       files.back() + " --check </dev/null"));
    }
    for (std::size_t k = 0; k < files.size(); ++k) {
      const testing::CommandResult r = results[k].get();
      const int i = first + int(k);
      const bool bad =
          r.exit_code == 1 || r.exit_code >= 124 ||
          r.err.find("internal error") != std::string::npos ||
          r.err.find("unexpected:") != std::string::npos ||
          (r.exit_code != 0 && r.err.find("dlbench: " + files[k]) == std::string::npos) ||
          fs::exists(db);
      if (bad) {
        ++failures;
        ADD_FAILURE() << "case " << i << " (seed " << seed
                      << "; replay with DLBENCH_FUZZ_SEED=" << seed
                      << " DLBENCH_FUZZ_CASES=" << i + 1 << "): exit " << r.exit_code
                      << ", file kept as " << files[k] << "\n"
                      << r.err.substr(0, 2000);
      } else {
        fs::remove(files[k]);
      }
    }
  }
}

}  // namespace
}  // namespace dlbench

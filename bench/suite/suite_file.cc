#include "bench/suite/suite_file.h"

#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

#include <toml++/toml.h>

#include "engine/core/error.h"

namespace dlbench::suite {
namespace {

namespace fs = std::filesystem;

const char* const kKeys[] = {"model",  "mode",  "precision", "batch", "device", "devices", "input",
                             "warmup", "steps", "seconds",   "seed",  "lr",     "momentum"};

[[noreturn]] void bad(const std::string& file, const toml::node& at, const std::string& what) {
  throw Error(ErrorKind::kUsage, file + ":" + std::to_string(at.source().begin.line) + ": " + what,
              "see suites/quick-cpu.toml for the format");
}

// One key's values: a scalar is a list of one.
std::vector<const toml::node*> values_of(const toml::node& node) {
  std::vector<const toml::node*> out;
  if (const toml::array* a = node.as_array())
    for (const toml::node& v : *a) out.push_back(&v);
  else
    out.push_back(&node);
  return out;
}

std::string text_of(const std::string& file, const std::string& key, const toml::node& v) {
  if (auto s = v.value<std::string>()) return *s;
  bad(file, v, "'" + key + "' must be a string");
}

double number_of(const std::string& file, const std::string& key, const toml::node& v) {
  if (auto d = v.value<double>()) return *d;  // integers convert too
  bad(file, v, "'" + key + "' must be a number");
}

std::int64_t integer_of(const std::string& file, const std::string& key, const toml::node& v) {
  if (auto i = v.value_exact<std::int64_t>()) return *i;
  bad(file, v, "'" + key + "' must be an integer");
}

void apply(const std::string& file, const std::string& key, const toml::node& v,
           runner::RunConfig& c) {
  if (key == "model")
    c.model = text_of(file, key, v);
  else if (key == "mode")
    c.mode = runner::parse_mode(text_of(file, key, v));
  else if (key == "precision")
    c.precision = nn::parse_precision(text_of(file, key, v));
  else if (key == "device" || key == "devices")
    c.device = parse_device(text_of(file, key, v));
  else if (key == "batch")
    c.batch = integer_of(file, key, v);
  else if (key == "input")
    c.input_size = int(integer_of(file, key, v));
  else if (key == "warmup")
    c.warmup_steps = int(integer_of(file, key, v));
  else if (key == "steps")
    c.steps = int(integer_of(file, key, v));
  else if (key == "seconds")
    c.seconds = number_of(file, key, v);
  else if (key == "seed")
    c.seed = std::uint64_t(integer_of(file, key, v));
  else if (key == "lr")
    c.learning_rate = float(number_of(file, key, v));
  else if (key == "momentum")
    c.momentum = float(number_of(file, key, v));
}

void check_keys(const std::string& file, const toml::table& t) {
  for (const auto& [k, v] : t) {
    bool known = false;
    for (const char* name : kKeys) known |= k.str() == name;
    if (!known) bad(file, v, "unknown key '" + std::string(k.str()) + "'");
  }
}

// Every combination of the table's arrays, applied on top of `base`, in file order.
void expand(const std::string& file, const toml::table& t, const runner::RunConfig& base,
            std::vector<runner::RunConfig>& out) {
  std::vector<std::pair<std::string, std::vector<const toml::node*>>> axes;
  for (const auto& [k, v] : t) axes.emplace_back(std::string(k.str()), values_of(v));
  std::function<void(std::size_t, runner::RunConfig)> walk = [&](std::size_t i,
                                                                 runner::RunConfig c) {
    if (i == axes.size()) {
      out.push_back(c);
      return;
    }
    for (const toml::node* v : axes[i].second) {
      runner::RunConfig next = c;
      apply(file, axes[i].first, *v, next);
      walk(i + 1, next);
    }
  };
  walk(0, base);
}

}  // namespace

std::string entry_key(const runner::RunConfig& c) {
  std::ostringstream key;
  key << "model=" << c.model << " mode=" << runner::to_string(c.mode)
      << " precision=" << nn::to_string(c.precision) << " batch=" << c.batch.value_or(0)
      << " device=" << to_string(c.device) << " input=" << c.input_size
      << " warmup=" << c.warmup_steps << " steps=" << c.steps << " seconds=" << c.seconds
      << " seed=" << c.seed;
  return key.str();
}

std::string entry_label(const runner::RunConfig& c) {
  std::string label = c.model + " " + runner::to_string(c.mode) + " " + nn::to_string(c.precision) +
                      " batch " + std::to_string(c.batch.value_or(0));
  if (c.input_size) label += " input " + std::to_string(c.input_size);
  return label + " on " + to_string(c.device);
}

SuiteSpec load_suite(const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    std::string what(e.description());
    if (what.find("could not be opened") != std::string::npos ||
        what.find("File could not") != std::string::npos)
      throw Error(ErrorKind::kResource, "cannot read suite " + path, "check the path");
    throw Error(ErrorKind::kUsage, path + ":" + std::to_string(e.source().begin.line) + ": " + what,
                "fix the TOML syntax");
  }
  SuiteSpec spec;
  spec.file = path;
  spec.name = doc["name"].value_or(fs::path(path).stem().string());
  spec.description = doc["description"].value_or(std::string());
  runner::RunConfig base;
  if (const toml::table* d = doc["defaults"].as_table()) {
    check_keys(path, *d);
    for (const auto& [k, v] : *d) apply(path, std::string(k.str()), v, base);
  }
  const toml::array* runs = doc["run"].as_array();
  if (runs == nullptr || runs->empty())
    throw Error(ErrorKind::kUsage, path + " has no [[run]] tables", "add at least one [[run]]");
  for (const toml::node& node : *runs) {
    const toml::table* t = node.as_table();
    if (t == nullptr) bad(path, node, "each [[run]] must be a table");
    check_keys(path, *t);
    std::vector<runner::RunConfig> configs;
    expand(path, *t, base, configs);
    for (runner::RunConfig& c : configs) {
      runner::RunConfig v = runner::validated(c);  // the suite fails now, not at run 7
      spec.entries.push_back({v, entry_key(v), entry_label(v)});
    }
  }
  return spec;
}

std::string find_suite_file(const std::string& file_or_name) {
  std::error_code ec;
  if (fs::is_regular_file(file_or_name, ec)) return file_or_name;
  std::string name = file_or_name + (fs::path(file_or_name).extension() == ".toml" ? "" : ".toml");
  std::vector<fs::path> places = {fs::path("suites") / name, fs::path(DLBENCH_SUITES_DIR) / name};
  for (const fs::path& p : places)
    if (fs::is_regular_file(p, ec)) return p.string();
  throw Error(ErrorKind::kUsage,
              "no suite '" + file_or_name + "' (looked in ./suites and " +
                  std::string(DLBENCH_SUITES_DIR) + ")",
              "pass a suite file, or a name such as quick or quick-cpu");
}

}  // namespace dlbench::suite

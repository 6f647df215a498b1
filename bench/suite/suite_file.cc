#include "bench/suite/suite_file.h"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include <toml++/toml.h>

#include "bench/result/repeats.h"
#include "bench/runner/validated_config.h"
#include "bench/suite/suite_text.h"
#include "engine/core/error.h"
#include "engine/core/suggest.h"
#include "engine/models/registry.h"

namespace dlbench::suite {
namespace {

namespace fs = std::filesystem;

// "devices" is another name of "device" (a [[run]] over several reads naturally in plural).
const std::vector<std::string> kRunKeys = {"model",   "mode",  "precision", "batch", "device",
                                           "devices", "input", "warmup",    "steps", "seconds",
                                           "seed",    "lr",    "momentum",  "repeat"};
const std::vector<std::string> kTopKeys = {"name", "description", "defaults", "run"};
const char* const kFormatHint = "see suites/quick-cpu.toml for the format";

std::string list_of(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

int line_of(const toml::source_region& where) {
  return int(where.begin.line);
}

[[noreturn]] void refuse(const std::string& file, int line, const std::string& what,
                         const std::string& hint) {
  throw Error(ErrorKind::kUsage, file + ":" + std::to_string(line) + ": " + what, hint);
}

bool is_text_key(const std::string& key) {
  return key == "model" || key == "mode" || key == "precision" || key == "device" ||
         key == "devices";
}

// A hint in the file's own terms ("e.g. batch = 32", "did you mean mode = "train"?"), never a
// command-line flag: the user is editing a file.
std::string value_hint(const std::string& key, const std::string& example,
                       const std::string& suggestion = {}) {
  auto toml_text = [&](const std::string& v) { return is_text_key(key) ? "\"" + v + "\"" : v; };
  if (!suggestion.empty()) return "did you mean " + key + " = " + toml_text(suggestion) + "?";
  return "e.g. " + key + " = " + toml_text(example);
}

[[noreturn]] void bad_value(const std::string& file, const toml::node& v, const std::string& key,
                            const std::string& problem, const std::string& example,
                            const std::string& suggestion = {}) {
  refuse(file, line_of(v.source()), key + " " + problem, value_hint(key, example, suggestion));
}

std::string type_name(const toml::node& v) {
  switch (v.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a floating-point number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date or time";
  }
}

std::string number_text(double v) {
  std::ostringstream text;
  text.precision(12);
  text << v;
  return text.str();
}

std::string text_of(const std::string& file, const std::string& key, const toml::node& v,
                    const std::string& example) {
  if (auto s = v.value_exact<std::string>()) return *s;
  bad_value(file, v, key, "must be a string, not " + type_name(v), example);
}

// An integer from low to high, checked before it is narrowed to its field.
std::int64_t integer_of(const std::string& file, const std::string& key, const toml::node& v,
                        std::int64_t low, std::int64_t high, const std::string& example) {
  auto i = v.value_exact<std::int64_t>();
  if (!i) bad_value(file, v, key, "must be an integer, not " + type_name(v), example);
  if (*i < low || *i > high)
    bad_value(file, v, key,
              "must be from " + std::to_string(low) + " to " + std::to_string(high) + ", not " +
                  std::to_string(*i),
              example);
  return *i;
}

// A finite number (an integer will do); its range is runner::validated's to check.
double number_of(const std::string& file, const std::string& key, const toml::node& v,
                 double magnitude_limit, const std::string& example) {
  std::optional<double> d;
  if (v.is_integer() || v.is_floating_point()) d = v.value<double>();
  if (!d) bad_value(file, v, key, "must be a number, not " + type_name(v), example);
  if (!std::isfinite(*d) || std::fabs(*d) > magnitude_limit)
    bad_value(file, v, key, "must be a finite number, not " + number_text(*d), example);
  return *d;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const models::ModelSpec* m : models::ModelRegistry::instance().all())
    names.push_back(m->name);
  return names;
}

// One key's value, checked and stored in the configuration. Every refusal names the value's line.
void apply(const std::string& file, const std::string& key, const toml::node& v,
           result::RunConfig& c) {
  if (key == "model") {
    std::string name = text_of(file, key, v, "resnet50");
    const std::vector<std::string> names = model_names();
    if (std::find(names.begin(), names.end(), name) == names.end())
      bad_value(file, v, key, "must be one of " + list_of(names) + ", not '" + name + "'",
                names.front(), closest_match(name, names));
    c.model = name;
  } else if (key == "mode") {
    std::string mode = text_of(file, key, v, "train");
    try {
      c.mode = result::parse_mode(mode);
    } catch (const result::ConfigError& e) {
      bad_value(file, v, key, e.problem(), e.example(), closest_match(mode, {"train", "infer"}));
    }
  } else if (key == "precision") {
    std::string precision = text_of(file, key, v, "fp16");
    try {
      c.precision = parse_precision(precision);
    } catch (const Error&) {
      const std::vector<std::string> known = {"fp32", "tf32", "fp16", "bf16"};
      bad_value(file, v, key, "must be one of " + list_of(known) + ", not '" + precision + "'",
                "fp16", closest_match(precision, known));
    }
  } else if (key == "device" || key == "devices") {
    std::string device = text_of(file, key, v, "cuda:0");
    try {
      c.launch.device = parse_device(device);
    } catch (const Error&) {
      bad_value(file, v, key,
                "must be cpu, cuda or cuda:N ('dlbench info' lists the GPUs), not '" + device + "'",
                "cuda:0");
    }
  } else if (key == "batch") {
    c.batch = integer_of(file, key, v, 1, result::kMaxBatch, "32");
  } else if (key == "input") {
    std::int64_t input = integer_of(file, key, v, INT64_MIN, INT64_MAX, "224");
    if (input < 1 || input > INT_MAX)
      bad_value(file, v, key,
                "must be a positive size (pixels, voxels or tokens), not " + std::to_string(input),
                "224");
    c.input_size = int(input);
  } else if (key == "warmup") {
    c.warmup_steps = int(integer_of(file, key, v, 0, result::kMaxSteps, "5"));
  } else if (key == "steps") {
    c.steps = int(integer_of(file, key, v, 1, result::kMaxSteps, "20"));
  } else if (key == "seed") {
    std::int64_t seed = integer_of(file, key, v, INT64_MIN, INT64_MAX, "42");
    if (seed < 0)
      bad_value(file, v, key, "must not be negative, not " + std::to_string(seed), "42");
    c.seed = std::uint64_t(seed);
  } else if (key == "seconds") {
    c.seconds = number_of(file, key, v, DBL_MAX, "30");
  } else if (key == "repeat") {
    c.repeat = int(integer_of(file, key, v, 1, result::kMaxRepeats, "3"));
  } else if (key == "lr") {
    c.learning_rate = float(number_of(file, key, v, FLT_MAX, "0.01"));
  } else if (key == "momentum") {
    c.momentum = float(number_of(file, key, v, FLT_MAX, "0.9"));
  }
}

// A [defaults] or [[run]] table: every key known, every value (each element of an array) of
// the right type and range. `where` names the table in messages.
void check_table(const std::string& file, const toml::table& t, const std::string& where,
                 bool arrays_allowed) {
  bool has_device = false;
  for (const auto& [k, v] : t) {
    const std::string key(k.str());
    if (std::find(kRunKeys.begin(), kRunKeys.end(), key) == kRunKeys.end()) {
      std::string near = closest_match(key, kRunKeys);
      refuse(file, line_of(k.source()), "unknown key '" + key + "' in " + where,
             (near.empty() ? "" : "did you mean '" + near + "'? ") + "the keys are " +
                 list_of(kRunKeys));
    }
    if (key == "device" || key == "devices") {
      if (has_device)
        refuse(file, line_of(k.source()), "both device and devices in " + where,
               "they are one key: keep one");
      has_device = true;
    }
    result::RunConfig scratch;
    if (const toml::array* values = v.as_array()) {
      if (!arrays_allowed)
        refuse(file, line_of(v.source()), key + " in " + where + " takes one value, not an array",
               "give the array in each [[run]] instead");
      if (values->empty())
        refuse(file, line_of(v.source()), key + " is an empty array, which means no runs",
               "give at least one value, or leave the key out for its default");
      for (const toml::node& value : *values) apply(file, key, value, scratch);
    } else {
      apply(file, key, v, scratch);
    }
  }
}

// The runs a [[run]] stands for, before expanding them: the product of its arrays' lengths,
// saturated just past the limit so no product overflows.
std::size_t run_count(const toml::table& t, std::size_t limit) {
  std::size_t n = 1;
  for (const auto& [k, v] : t) {
    const toml::array* values = v.as_array();
    n = std::min(n * (values ? values->size() : 1), limit + 1);
  }
  return n;
}

// Every combination of a [[run]]'s arrays on top of [defaults], in file order, each checked by
// the runner's own rules with a refusal pointing at the line of the value it names.
void expand(const std::string& file, const toml::table& run, const toml::table* defaults,
            std::vector<SuiteEntry>& out) {
  using Origins = std::map<std::string, const toml::node*>;  // field -> where its value is
  auto field_of = [](const std::string& key) { return key == "devices" ? "device" : key; };
  result::RunConfig base;
  Origins base_origins;
  if (defaults != nullptr)
    for (const auto& [k, v] : *defaults) {
      apply(file, std::string(k.str()), v, base);
      base_origins[field_of(std::string(k.str()))] = &v;
    }
  std::vector<std::pair<std::string, std::vector<const toml::node*>>> axes;
  for (const auto& [k, v] : run) {
    std::vector<const toml::node*> values;
    if (const toml::array* a = v.as_array())
      for (const toml::node& e : *a) values.push_back(&e);
    else
      values.push_back(&v);
    axes.emplace_back(std::string(k.str()), values);
  }
  const std::size_t runs = run_count(run, kMaxSuiteRuns);
  std::function<void(std::size_t, result::RunConfig, Origins)> walk = [&](std::size_t i,
                                                                          result::RunConfig c,
                                                                          Origins origins) {
    if (i < axes.size()) {
      for (const toml::node* v : axes[i].second) {
        result::RunConfig next = c;
        apply(file, axes[i].first, *v, next);
        Origins next_origins = origins;
        next_origins[field_of(axes[i].first)] = v;
        walk(i + 1, next, next_origins);
      }
      return;
    }
    result::RunConfig checked;
    try {
      checked = runner::validated(c);  // the suite fails now, not at run 7
    } catch (const result::ConfigError& e) {
      auto at = origins.find(e.field());
      int line = line_of(at != origins.end() ? at->second->source() : run.source());
      std::string which;
      if (runs > 1) {
        result::RunConfig shown = c;
        if (!shown.batch) shown.batch = runner::default_batch(c);
        which = " (in the run " + entry_label(shown) + ")";
      }
      refuse(file, line, e.field() + " " + e.problem() + which, value_hint(e.field(), e.example()));
    } catch (const Error& e) {
      refuse(file, line_of(run.source()), e.what(), e.hint());
    }
    out.push_back({checked, entry_key(checked), entry_label(checked)});
  };
  walk(0, base, base_origins);
}

toml::table parse_toml(const std::string& path, const std::string& text) {
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    refuse(path, line_of(e.source()), std::string(e.description()), "fix the TOML syntax");
  }
}

}  // namespace

std::string entry_key(const result::RunConfig& c) {
  std::ostringstream key;
  key << "model=" << c.model << " mode=" << to_string(c.mode)
      << " precision=" << to_string(c.precision) << " batch=" << c.batch.value_or(0)
      << " device=" << to_string(c.launch.device) << " input=" << c.input_size
      << " warmup=" << c.warmup_steps << " steps=" << c.steps << " seconds=" << c.seconds
      << " seed=" << c.seed;
  // Only where asked for, so that the entries of suites run before repeats existed still match.
  if (c.repeat != 1) key << " repeat=" << c.repeat;
  return key.str();
}

std::string entry_label(const result::RunConfig& c) {
  std::string label = c.model + " " + to_string(c.mode) + " " + to_string(c.precision) + " batch " +
                      std::to_string(c.batch.value_or(0));
  if (c.input_size) label += " input " + std::to_string(c.input_size);
  label += " on " + to_string(c.launch.device);
  return c.repeat > 1 ? label + ", " + std::to_string(c.repeat) + " repeats" : label;
}

SuiteSpec load_suite(const std::string& path) {
  const toml::table doc = parse_toml(path, read_suite_text(path));
  SuiteSpec spec;
  spec.file = path;
  spec.name = fs::path(path).stem().string();
  const toml::table* defaults = nullptr;
  const toml::array* runs = nullptr;
  for (const auto& [k, v] : doc) {
    const std::string key(k.str());
    const int line = line_of(k.source());
    if (key == "name" || key == "description") {
      std::string text = text_of(path, key, v, key == "name" ? "quick-cpu" : "what it measures");
      if (key == "name" && text.empty())
        refuse(path, line, "name is empty", "give the suite a name, e.g. name = \"quick-cpu\"");
      // Both are stored and shown on terminals and in reports: text, not control characters.
      for (char ch : text)
        if ((unsigned char)ch < 0x20 || ch == 0x7f)
          refuse(path, line_of(v.source()), key + " holds a control character",
                 "write it as plain text on one line");
      (key == "name" ? spec.name : spec.description) = text;
    } else if (key == "defaults") {
      defaults = v.as_table();
      if (defaults == nullptr)
        refuse(path, line, "defaults must be a table, not " + type_name(v),
               "write [defaults] on a line of its own, its keys below");
      check_table(path, *defaults, "[defaults]", false);
    } else if (key == "run") {
      runs = v.as_array();
      if (runs == nullptr)
        refuse(path, line, "run must be an array of tables, not " + type_name(v),
               "write each run as a [[run]] table (two brackets)");
      for (const toml::node& node : *runs) {
        const toml::table* t = node.as_table();
        if (t == nullptr)
          refuse(path, line_of(node.source()), "each run must be a table, not " + type_name(node),
                 "write each run as a [[run]] table (two brackets)");
        check_table(path, *t, "[[run]]", true);
      }
    } else {
      auto shown = [](const std::string& name, const toml::node& node) {
        if (node.is_table()) return "[" + name + "]";
        if (node.is_array_of_tables()) return "[[" + name + "]]";
        return "'" + name + "'";
      };
      const std::string near = closest_match(key, kTopKeys);
      std::string hint = "a suite holds name, description, [defaults] and [[run]] tables";
      if (std::find(kRunKeys.begin(), kRunKeys.end(), key) != kRunKeys.end())
        hint = key + " belongs in [defaults] or a [[run]] table, below its header";
      else if (!near.empty())
        hint = "did you mean " +
               (near == "run"        ? "[[run]]"
                : near == "defaults" ? "[defaults]"
                                     : "'" + near + "'") +
               "? " + hint;
      refuse(path, line,
             std::string("unknown ") +
                 (v.is_table() || v.is_array_of_tables() ? "table " : "key ") + shown(key, v),
             hint);
    }
  }
  if (runs == nullptr || runs->empty())
    refuse(path, 1, "no [[run]] tables",
           "add at least one [[run]] with a model; " + std::string(kFormatHint));

  std::size_t planned = 0;
  for (const toml::node& node : *runs) {
    const toml::table& run = *node.as_table();
    const bool has_model = run.contains("model") || (defaults && defaults->contains("model"));
    if (!has_model)
      refuse(path, line_of(run.source()), "this [[run]] names no model, nor does [defaults]",
             "add e.g. model = \"resnet50\" to it");
    planned += run_count(run, kMaxSuiteRuns);
    if (planned > kMaxSuiteRuns)
      refuse(path, line_of(run.source()),
             "the suite expands to more than " + std::to_string(kMaxSuiteRuns) +
                 " runs (counting this [[run]]'s combinations)",
             "split it into several suites");
  }
  for (const toml::node& node : *runs) expand(path, *node.as_table(), defaults, spec.entries);
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

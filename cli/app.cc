#include "cli/app.h"

#include <algorithm>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "bench/result/run_config.h"
#include "cli/commands.h"
#include "cli/help_format.h"
#include "cli/stop_signals.h"
#include "engine/core/build_info.h"
#include "engine/core/error.h"
#include "engine/core/suggest.h"

namespace dlbench::cli {
namespace {

std::string version_line() {
  const BuildInfo& b = build_info();
  return "dlbench " + b.version + " (git " + b.git_hash + ", " + b.compiler + ", " +
         (b.cuda ? "CUDA sm_" + b.cuda_architectures : std::string("CPU-only")) + ")";
}

// The subcommand the parse stopped in: the deepest one named on the command line (the app
// itself when none was).
const CLI::App& innermost(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return *at;
}

std::vector<std::string> long_flags(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
  return names;
}

// "dlbench micro allreduce"
std::string command_path(const CLI::App& app) {
  std::string path;
  for (const CLI::App* at = &app; at != nullptr; at = at->get_parent())
    path = at->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

// The subcommands, anywhere below app, that have this long flag: "run, micro allreduce".
void owners_of(const CLI::App& app, const std::string& flag, std::string& owners) {
  const std::size_t app_name_length = std::string("dlbench ").size();
  for (const CLI::App* sub : app.get_subcommands({})) {
    const std::vector<std::string> flags = long_flags(*sub);
    if (std::find(flags.begin(), flags.end(), flag) != flags.end())
      owners += (owners.empty() ? "" : ", ") + command_path(*sub).substr(app_name_length);
    owners_of(*sub, flag, owners);
  }
}

// What the user could have meant where they typed it: the flags of the subcommand they were in
// and of the commands above it (the global flags), and its own subcommands. Never the word they
// typed, and never another subcommand's flag.
std::string hint_for(const CLI::App& app) {
  const CLI::App& at = innermost(app);
  std::vector<std::string> names;
  for (const CLI::App* up = &at; up != nullptr; up = up->get_parent())
    for (const std::string& n : long_flags(*up)) names.push_back(n);
  for (const CLI::App* sub : at.get_subcommands({})) names.push_back(sub->get_name());
  const std::string help = "see '" + command_path(at) + " --help'.";
  for (const std::string& typed : app.remaining(true)) {
    const std::string word = typed.substr(0, typed.find('='));
    if (word.rfind("--", 0) == 0 && &at != &app &&
        std::find(names.begin(), names.end(), word) == names.end()) {
      std::string owners;
      owners_of(app, word, owners);
      if (!owners.empty())
        return "'" + command_path(at) + "' has no " + word + " (" + owners + " " +
               (owners.find(',') == std::string::npos ? "has" : "have") + " it); " + help;
    }
    std::vector<std::string> others;
    for (const std::string& n : names)
      if (n != word) others.push_back(n);
    std::string match = closest_match(word, others);
    if (!match.empty()) return "did you mean '" + match + "'? " + help;
  }
  if (&at != &app) return help;
  return "see 'dlbench --help' for the subcommands and 'dlbench SUBCOMMAND --help' for their "
         "flags.";
}

// A value given as "" is a mistake (an unset shell variable), never a request for the default:
// `--db "$DB"` with DB unset must not write into the user's default database.
void refuse_empty_values(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_expected_max() == 0) continue;  // a flag takes no value
    const std::string name = opt->get_name();
    opt->check(CLI::Validator(
        [name](std::string& value) {
          return value.empty() ? "an empty value is not allowed; give one or leave " + name + " out"
                               : std::string();
        },
        "", "not empty"));
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_empty_values(*sub);
}

// The flag of a setting an engine error names (the engine itself names no flag).
const char* flag_of(Setting setting) {
  switch (setting) {
    case Setting::kBatch:
      return "--batch";
    case Setting::kDevice:
      return "--device";
    case Setting::kPrecision:
      return "--precision";
    case Setting::kGpus:
      return "--gpus";
    case Setting::kNone:
      break;
  }
  return nullptr;
}

int report(const Error& e) {
  std::cerr << "dlbench: " << e.what() << "\n";
  std::string hint = e.hint();
  if (const char* flag = flag_of(e.setting().setting); flag && !hint.empty()) {
    hint += std::string(" (") + flag;
    if (!e.setting().value.empty()) hint += " " + e.setting().value;
    hint += ")";
  }
  if (!hint.empty()) std::cerr << "hint: " << hint << "\n";
  return exit_code(e.kind());
}

}  // namespace

int run(int argc, char** argv) {
  GlobalOptions global;
  CLI::App app{"dlbench: how good is this machine at deep learning, and why.", "dlbench"};
  use_help_format(app);  // before the subcommands, which copy it
  app.set_version_flag("--version", version_line(), "Print the version and build, then exit");
  app.add_flag("--json", global.json, "Machine-readable JSON on stdout");
  app.add_flag("-q,--quiet", global.quiet, "Print only results and errors");
  app.add_flag("-v,--verbose", global.verbose, "Print more detail");
  app.add_option("--db", global.db,
                 "Results database: a file (SQLite), a postgresql:// URL or a libpq "
                 "key=value string (default: $XDG_DATA_HOME/dlbench/results.db)")
      ->type_name("DB");
  app.fallthrough();  // global flags work after the subcommand too
  app.require_subcommand(0, 1);

  add_info_command(app, global);
  add_monitor_command(app, global);
  add_run_command(app, global);
  add_runs_command(app, global);
  add_suite_command(app, global);
  add_report_command(app, global);
  add_micro_command(app, global);
  add_scale_command(app, global);
  add_maxbatch_command(app, global);
  refuse_empty_values(app);
  add_global_flags_footer(app);

  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) {
      std::cout << app.help();
      throw Error(ErrorKind::kUsage, "no subcommand given", "try 'dlbench info'.");
    }
    return global.exit_code;
  } catch (const CLI::CallForHelp&) {
    return app.exit(CLI::CallForHelp());
  } catch (const CLI::CallForAllHelp&) {
    return app.exit(CLI::CallForAllHelp());
  } catch (const CLI::CallForVersion&) {
    std::cout << version_line() << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    return report(Error(ErrorKind::kUsage, e.what(), hint_for(app)));
  } catch (const Interrupted& e) {
    // The command stored what it had and said so; end as the signal would have.
    return end_by_signal(e.signal());
  } catch (const result::ConfigError& e) {
    // The runner names a value by its field; on the command line that field is a flag, when
    // the subcommand has it (else the value was the subcommand's own choice).
    const CLI::App& at = innermost(app);
    const std::vector<std::string> flags = long_flags(at);
    if (std::find(flags.begin(), flags.end(), "--" + e.field()) == flags.end())
      return report(Error(ErrorKind::kUsage, e.field() + " " + e.problem(),
                          "see '" + command_path(at) + " --help'."));
    return report(Error(ErrorKind::kUsage, "--" + e.field() + " " + e.problem(),
                        "e.g. --" + e.field() + " " + e.example()));
  } catch (const Error& e) {
    return report(e);
  } catch (const std::bad_alloc&) {
    return report(
        Error(ErrorKind::kResource, "out of host memory", "free memory or try a smaller batch."));
  } catch (const std::exception& e) {
    return report(Error(ErrorKind::kInternal, std::string("unexpected: ") + e.what(),
                        "this is a dlbench bug; please report it with the command line."));
  }
}

}  // namespace dlbench::cli

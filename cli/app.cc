#include "cli/app.h"

#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "bench/result/run_config.h"
#include "cli/commands.h"
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

// Every name a user could have meant: subcommands and long flags, at every level.
void collect_names(const CLI::App& app, std::vector<std::string>& names) {
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
  }
  for (const CLI::App* sub : app.get_subcommands({})) {
    names.push_back(sub->get_name());
    collect_names(*sub, names);
  }
}

std::string hint_for(const CLI::App& app, const CLI::ParseError& e) {
  std::vector<std::string> unexpected = app.remaining(true);
  std::vector<std::string> names;
  collect_names(app, names);
  for (const std::string& word : unexpected) {
    std::string match = closest_match(word, names);
    if (!match.empty()) return "did you mean '" + match + "'? See 'dlbench --help'.";
  }
  (void)e;
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

int report(const Error& e) {
  std::cerr << "dlbench: " << e.what() << "\n";
  if (!e.hint().empty()) std::cerr << "hint: " << e.hint() << "\n";
  return exit_code(e.kind());
}

}  // namespace

int run(int argc, char** argv) {
  GlobalOptions global;
  CLI::App app{"dlbench: how good is this machine at deep learning, and why.", "dlbench"};
  app.set_version_flag("--version", version_line(), "Print the version and build, then exit");
  app.add_flag("--json", global.json, "Machine-readable JSON on stdout");
  app.add_flag("-q,--quiet", global.quiet, "Print only results and errors");
  app.add_flag("-v,--verbose", global.verbose, "Print more detail");
  app.add_option("--db", global.db,
                 "Results database: a file (SQLite), a postgresql:// URL or a libpq "
                 "key=value string (default: $XDG_DATA_HOME/dlbench/results.db)");
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
  refuse_empty_values(app);

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
    return report(Error(ErrorKind::kUsage, e.what(), hint_for(app, e)));
  } catch (const Interrupted& e) {
    // The command stored what it had and said so; end as the signal would have.
    return end_by_signal(e.signal());
  } catch (const result::ConfigError& e) {
    // The runner names a value by its field; on the command line that field is a flag.
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

// `dlbench ... --help` without the CLI library's internals: a flag and its negation read
// "--telemetry, --no-telemetry" (not "--telemetry,--no-telemetry{false}"), an option whose value
// may be left out reads "--json [FILE]" (not "--json TEXT=-", which shows the value it takes
// when given alone as if it were the default), and every subcommand's help ends by naming the
// global flags it accepts too (--db, --json, -q, -v).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace dlbench::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override;
  std::string make_option_opts(const CLI::Option* opt) const override;
};

// The formatter on app (set before its subcommands are added: they copy it), and on every
// subcommand below app, a footer that names the global flags.
void use_help_format(CLI::App& app);
void add_global_flags_footer(CLI::App& app);

}  // namespace dlbench::cli

#include "cli/help_format.h"

#include <memory>

namespace dlbench::cli {

std::string HelpFormatter::make_option_name(const CLI::Option* opt, bool is_positional) const {
  if (is_positional) return opt->get_name(true, false);
  std::string names;
  for (const std::string& s : opt->get_snames()) names += (names.empty() ? "-" : ", -") + s;
  for (const std::string& l : opt->get_lnames()) names += (names.empty() ? "--" : ", --") + l;
  return names;
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  if (opt->get_expected_max() == 0) return "";  // a flag: its description says what it does
  std::string label = opt->get_type_name().empty() ? "VALUE" : opt->get_type_name();
  // A value that may be left out: the "default" the library knows is what the option takes
  // when given alone, which the description says; the option's real default is to be off.
  if (opt->get_expected_min() == 0) return " [" + label + "]";
  std::string text = " " + label;
  if (!opt->get_default_str().empty()) text += " (default " + opt->get_default_str() + ")";
  if (opt->get_required()) text += " (required)";
  return text;
}

void use_help_format(CLI::App& app) {
  auto format = std::make_shared<HelpFormatter>();
  format->column_width(34);
  app.formatter(format);
}

void add_global_flags_footer(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({})) {
    const std::string own = sub->get_footer();  // kept first (monitor's usage line)
    sub->footer(
        (own.empty() ? "" : own + "\n\n") +
        "Global flags, before the subcommand (or after it, where it has no flag of that name):\n"
        "  --db DB          results database: an SQLite file, a postgresql:// URL or a libpq\n"
        "                   key=value string (default: $XDG_DATA_HOME/dlbench/results.db)\n"
        "  --json           machine-readable JSON on stdout\n"
        "  -q, --quiet      only results and errors\n"
        "  -v, --verbose    more detail\n"
        "See 'dlbench --help' for every subcommand.");
    add_global_flags_footer(*sub);
  }
}

}  // namespace dlbench::cli

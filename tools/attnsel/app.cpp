// SPDX-License-Identifier: Apache-2.0
// Builds the CLI11 app, maps its errors onto one stderr line and exit status 2, and dispatches.
#include "app.hpp"

#include "commands.hpp"
#include "errors.hpp"
#include "help_format.hpp"
#include "terminal.hpp"
#include "validators.hpp"

#include <attnsel/config.hpp>
#include <attnsel/override.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

namespace attnsel_cli {

namespace {

constexpr const char* main_footer = R"(Examples:
  attnsel select --platform rocm --arch gfx942
  attnsel explain --platform cuda --arch 9.0 --feature sinks
  attnsel select --platform rocm --arch gfx942 --domain encoder --backend TORCH_SDPA --json
  attnsel list --domain encoder
  attnsel matrix --catalog torch_sdpa --format json
  attnsel validate catalog/vllm.json
  attnsel doctor
  attnsel diff vllm-rocm-env@e2a00c7b vllm
  attnsel lint my_catalog.json

Run 'attnsel COMMAND --help' for the flags of a command.
Exit status: 0 selected (or done), 1 selection failed or bad catalog, 2 usage error,
70 internal error.
Environment: ATTNSEL_BACKEND (decoder override), ATTNSEL_ENCODER_BACKEND (encoder override),
NO_COLOR (no colour even on a terminal).)";

// One line: CLI11 messages may span lines, the contract says one.
std::string one_line(std::string text) {
  for (auto& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return attnsel::printable(text, 400);
}

void print_usage_error(const std::string& message, const std::string& command) {
  std::fprintf(stderr, "attnsel: usage error: %s (see 'attnsel%s --help')\n", one_line(message).c_str(),
               command.empty() ? "" : (" " + command).c_str());
}

// A parse error as one usage line. "A subcommand is required" hides the cause of `attnsel frobnicate`:
// there the word that is not a command is named and the commands are listed.
int usage_status(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const auto parsed = app.get_subcommands();
  if (parsed.empty() && argc > 1 && argv[1][0] != '-') {
    std::string names;
    for (const auto* sub : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
    print_usage_error(quoted_value(argv[1]) + " is not an attnsel command; commands are: " + names, "");
  } else {
    print_usage_error(e.what(), parsed.empty() ? "" : parsed.front()->get_name());
  }
  return exit_usage;
}

}  // namespace

int run_app(int argc, char** argv) {
  CLI::App app{"attnsel: choose the attention backend an inference engine would use, and explain why.", "attnsel"};
  app.formatter(std::make_shared<wrapping_formatter>());
  app.set_version_flag("--version", ATTNSEL_VERSION_STRING, "Print the version and exit");
  app.require_subcommand(1);
  app.footer(main_footer);
  // Registration order is the order --help and the unknown-command message list them in.
  const command commands[] = {setup_select(app), setup_explain(app), setup_plan(app),
                              setup_list(app),   setup_matrix(app),  setup_validate(app),
                              setup_doctor(app), setup_diff(app),    setup_lint(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_status(app, e, argc, argv);
  }
  for (const auto& c : commands) {
    if (!c.cli->parsed()) continue;
    try {
      return c.run();
    } catch (const usage_error& e) {
      print_usage_error(e.what(), c.cli->get_name());
      return exit_usage;
    } catch (const catalog_failure& e) {
      print_diagnostic("error", e.what());
      return exit_failure;
    }
  }
  return exit_usage;  // unreachable: require_subcommand(1) makes parse() throw without a command
}

}  // namespace attnsel_cli

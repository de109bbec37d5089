// SPDX-License-Identifier: Apache-2.0
// Builds the CLI11 app, maps its errors onto one stderr line and exit status 2, and dispatches.
#include "app.hpp"

#include "commands.hpp"
#include "errors.hpp"
#include "help_format.hpp"
#include "terminal.hpp"
#include "validators.hpp"

#include <attnsel/config.hpp>
#include <attnsel/core/override.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace attnsel_cli {

namespace {

constexpr const char* main_footer = R"(Examples:
  attnsel select --platform rocm --arch gfx942
  attnsel explain --platform cuda --arch 9.0 --feature sinks
  attnsel select --platform rocm --arch gfx942 --domain encoder --backend TORCH_SDPA --json
  attnsel list --domain encoder
  attnsel matrix --catalog torch_sdpa --format json
  attnsel validate catalog/vllm@0.33.0.json
  attnsel doctor
  attnsel diff vllm-rocm-env@e2a00c7b vllm
  attnsel lint my_catalog.json

Run 'attnsel COMMAND --help' for the flags of a command.
Exit status: 0 selected (or done), 1 selection failed or bad catalog, 2 usage error,
70 internal error.
Environment: ATTNSEL_BACKEND (decoder override), ATTNSEL_ENCODER_BACKEND (encoder override),
ATTNSEL_DRAFTER_BACKEND (drafter; else the decoder's), ATTNSEL_LINEAR_BACKEND (linear layers),
ATTNSEL_PREFILL_BACKEND / ATTNSEL_DECODE_BACKEND and ATTNSEL_LINEAR_PREFILL_BACKEND /
ATTNSEL_LINEAR_DECODE_BACKEND (one phase of decoder / linear layers), NO_COLOR (no colour even on a
terminal).)";

// One line: CLI11 messages may span lines, the contract says one.
std::string one_line(std::string text) {
  for (auto& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  // Echoed input is already cut (quoted_value); this bounds the whole line, long enough for an enum's
  // every name and the did-you-mean after them (the KV-cache dtypes' list is over 400 characters).
  return attnsel::printable(text, 1000);
}

void print_usage_error(const std::string& message, const std::string& command) {
  std::fprintf(stderr, "attnsel: usage error: %s (see 'attnsel%s --help')\n", one_line(message).c_str(),
               command.empty() ? "" : (" " + command).c_str());
}

// Spellings people bring from engines and model configs, and the flag that means the same here.
struct flag_alias {
  const char* typed;
  const char* meant;
};
constexpr flag_alias flag_aliases[] = {
    {"--head-dim", "--head-size"},
    {"--num-attention-heads", "--num-heads"},
    {"--num-key-value-heads", "--num-kv-heads"},
    {"--kv-heads", "--num-kv-heads"},
    {"--torch-dtype", "--dtype"},
    {"--gpu", "--arch"},
    {"--device", "--arch"},
    {"--compute-capability", "--arch"},
    {"--model", "--model-config"},
    {"--config", "--model-config"},
    {"--tensor-parallel-size", "--tp"},
    {"--vendor", "--platform"},
    {"--mm-attention-backend", "--backend (with --domain encoder)"},
};

// `cli`'s long flags, spelled as typed: `--head-size`.
std::vector<std::string> long_flags(const CLI::App& cli) {
  std::vector<std::string> out;
  for (const auto* opt : cli.get_options())
    for (const auto& n : opt->get_lnames()) out.push_back("--" + n);
  return out;
}

// The flag a person meant by `typed`, among `flags`; empty when nothing is close.
std::string meant_flag(const std::vector<std::string>& flags, const std::string& typed) {
  for (const auto& a : flag_aliases)
    if (typed == a.typed) return a.meant;
  return attnsel::closest_name(typed, flags);
}

// "The following arguments were not expected: 64 --head-dim" names the value first and no fix: name the
// flag that is not one of the command's, and the flag meant.
std::string unexpected_arguments(const CLI::App& cli, int argc, char** argv) {
  const auto known = long_flags(cli);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) continue;
    arg = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), arg) != known.end()) continue;
    const auto meant = meant_flag(known, arg);
    return quoted_value(arg) + " is not a flag of 'attnsel " + cli.get_name() + "'" +
           (meant.empty() ? std::string() : "; did you mean " + meant + "?");
  }
  return {};
}

// A parse error as one usage line. "A subcommand is required" hides the cause of `attnsel frobnicate`:
// there the word that is not a command is named and the commands are listed.
int usage_status(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const auto parsed = app.get_subcommands();
  if (!parsed.empty() && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    if (const auto why = unexpected_arguments(*parsed.front(), argc, argv); !why.empty()) {
      print_usage_error(why, parsed.front()->get_name());
      return exit_usage;
    }
  }
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

  // Engines' parsers (argparse) take `--attention_backend` for `--attention-backend`; so does this one.
  std::vector<std::string> args(argv, argv + argc);
  for (std::size_t i = 1; i < args.size(); ++i) {
    auto& a = args[i];
    if (a == "--") break;
    if (a.rfind("--", 0) != 0) continue;
    const auto end = std::min(a.find('='), a.size());
    std::replace(a.begin() + 2, a.begin() + static_cast<std::ptrdiff_t>(end), '_', '-');
  }
  std::vector<char*> normalised;
  normalised.reserve(args.size());
  for (auto& a : args) normalised.push_back(a.data());
  argv = normalised.data();
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
    } catch (const config_failure& e) {
      print_diagnostic("error", e.what());  // bad input, named by its key: as a bad command line
      return exit_usage;
    } catch (const catalog_failure& e) {
      print_diagnostic("error", e.what());
      return exit_failure;
    }
  }
  return exit_usage;  // unreachable: require_subcommand(1) makes parse() throw without a command
}

}  // namespace attnsel_cli

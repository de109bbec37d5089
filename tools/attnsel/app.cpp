// SPDX-License-Identifier: Apache-2.0
// Builds the CLI11 app, maps its errors onto one stderr line and exit status 2, and dispatches.
#include "app.hpp"

#include "commands.hpp"
#include "errors.hpp"
#include "help_format.hpp"
#include "options.hpp"
#include "terminal.hpp"

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
Exit status: 0 selected (or done), 1 selection failed or bad catalog, 2 usage error.
Environment: ATTNSEL_BACKEND (decoder override), ATTNSEL_ENCODER_BACKEND (encoder override),
NO_COLOR (no colour even on a terminal).)";

constexpr const char* select_footer = R"(Examples:
  attnsel select --platform rocm --arch gfx942
  attnsel select --platform cuda --arch sm_90 --head-size 64 --dtype fp16 --kv-cache-dtype fp8
  attnsel select --platform rocm --arch gfx942 --domain encoder --backend TORCH_SDPA
  attnsel select --platform cuda --arch 10.0 --mla --backend FLASHMLA,auto --json
  ATTNSEL_BACKEND=TRITON_ATTN attnsel select --platform cuda --arch 9.0

Override: --backend wins over $ATTNSEL_BACKEND (decoder) / $ATTNSEL_ENCODER_BACKEND (encoder).
Exit status: 0 selected, 1 selection failed (message on stderr), 2 usage error.)";

constexpr const char* explain_footer = R"(Examples:
  attnsel explain --platform rocm --arch gfx942 --feature sinks
  attnsel explain --platform cuda --arch 9.0 --backend FLASHINFER --json
  attnsel explain --platform cpu --domain encoder

Exit status: 0 selected, 1 selection failed (message on stderr), 2 usage error.)";

constexpr const char* doctor_footer = R"doc(Examples:
  attnsel doctor
  attnsel doctor --json
  attnsel doctor --library-dir "$(python -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))')"
  VLLM_ROCM_USE_AITER=1 attnsel doctor --component aiter

Probes the CUDA driver (libcuda.so.1) and cuDNN through dlopen, AMD GPUs through the KFD topology,
the CPU through /proc/cpuinfo, and engine switches (VLLM_ROCM_USE_AITER*, TORCH_CUDNN_SDPA_DEPRIORITIZED)
through the environment. Exit status: 0 (also when no GPU is found), 2 usage error.)doc";

constexpr const char* list_footer = R"(Examples:
  attnsel list
  attnsel list --catalogs
  attnsel list --catalog-name vllm@0013943
  attnsel list --catalog torch_sdpa --json
  attnsel list --domain encoder --catalog my_backends.json)";

constexpr const char* matrix_footer = R"(Examples:
  attnsel matrix > vllm.md
  attnsel matrix --catalog torch_sdpa --format json
  attnsel matrix --catalog my_backends.json)";

constexpr const char* validate_footer = R"(Examples:
  attnsel validate catalog/vllm.json

Prints 'FILE: ok (N backends, M rules)' and exits 0, or the loader's error (FILE: POINTER: problem)
and exits 1.)";

constexpr const char* diff_footer = R"(Examples:
  attnsel diff vllm-rocm-env@e2a00c7b vllm
  attnsel diff vllm@0013943 vllm --domain decoder --json
  attnsel diff catalog/vllm.json my_changed_vllm.json

A and B are built-in catalog names (attnsel list --catalogs) or catalog files.
Exit status: 0 no decision differs, 1 some decisions differ,
2 usage error (or a catalog that does not load).)";

constexpr const char* lint_footer = R"(Examples:
  attnsel lint my_catalog.json
  attnsel lint vllm --json
  attnsel lint engine.json --component my_kernels

Exit status: 0 clean, 1 findings (FILE: POINTER: CODE: MESSAGE),
2 usage error (or a catalog that does not load).)";

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

}  // namespace

int run_app(int argc, char** argv) {
  CLI::App app{"attnsel: choose the attention backend an inference engine would use, and explain why.", "attnsel"};
  app.formatter(std::make_shared<wrapping_formatter>());
  app.set_version_flag("--version", ATTNSEL_VERSION_STRING, "Print the version and exit");
  app.require_subcommand(1);
  app.footer(main_footer);

  select_flags select_args;
  auto* select_cmd = app.add_subcommand("select", "Print the backend that would be selected");
  auto* select_backend = add_select_flags(*select_cmd, select_args);
  select_cmd->footer(select_footer);

  select_flags explain_args;
  auto* explain_cmd = app.add_subcommand("explain", "Show every candidate, its verdict and reasons, and the rule used");
  auto* explain_backend = add_select_flags(*explain_cmd, explain_args);
  explain_cmd->footer(explain_footer);

  list_flags list_args;
  auto* list_cmd = app.add_subcommand("list", "List the backends of a catalog");
  add_catalog_flags(*list_cmd, list_args.catalog);
  list_cmd->add_option("--domain", list_args.domain, "Only backends serving decoder or encoder")->type_name("DOMAIN");
  list_cmd->add_flag("--json", list_args.json, "Print a JSON array");
  list_cmd->add_flag("--catalogs", list_args.catalogs, "List the built-in catalogs and their source commits");
  list_cmd->footer(list_footer);

  matrix_flags matrix_args;
  auto* matrix_cmd = app.add_subcommand("matrix", "Print the capability matrix of a catalog (docs/backends.md)");
  add_catalog_flags(*matrix_cmd, matrix_args.catalog);
  matrix_cmd->add_option("--format", matrix_args.format, "markdown or json (default: markdown)")->type_name("FORMAT");
  matrix_cmd->footer(matrix_footer);

  std::string validate_path;
  auto* validate_cmd = app.add_subcommand("validate", "Check a catalog file; print ok or the precise error");
  validate_cmd->add_option("FILE", validate_path, "Catalog file to check")->required()->check(non_empty_path());
  validate_cmd->footer(validate_footer);

  doctor_flags doctor_args;
  auto* doctor_cmd =
      app.add_subcommand("doctor", "Show what attnsel detects on this machine and which backends can run");
  add_doctor_flags(*doctor_cmd, doctor_args);
  doctor_cmd->footer(doctor_footer);
  diff_flags diff_args;
  auto* diff_cmd = app.add_subcommand("diff", "Show every configuration whose decision differs between two catalogs");
  diff_cmd->add_option("A", diff_args.a, "Built-in catalog name or catalog FILE (before)")->required();
  diff_cmd->add_option("B", diff_args.b, "Built-in catalog name or catalog FILE (after)")->required();
  diff_cmd->add_option("--domain", diff_args.domain, "Only decoder or encoder (default: both)")->type_name("DOMAIN");
  diff_cmd->add_flag("--no-overrides", diff_args.no_overrides, "Compare automatic selection only, no forced backends");
  diff_cmd->add_flag("--json", diff_args.json, "Print one JSON report");
  diff_cmd->footer(diff_footer);

  lint_flags lint_args;
  auto* lint_cmd = app.add_subcommand("lint", "Find what a catalog allows but almost certainly does not mean");
  lint_cmd->add_option("FILE", lint_args.catalog, "Catalog file (or built-in catalog name) to lint")->required();
  lint_cmd
      ->add_option("--component", lint_args.components,
                   "A component your platform detection defines (repeatable; comma-separated lists too)")
      ->type_name("NAME")
      ->allow_extra_args(false)
      ->delimiter(',');
  lint_cmd->add_flag("--json", lint_args.json, "Print a JSON array of findings");
  lint_cmd->footer(lint_footer);

  std::string command;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const auto parsed = app.get_subcommands();
    if (parsed.empty() && argc > 1 && argv[1][0] != '-') {
      // "A subcommand is required" hides the cause: say which word is not a command, and list them.
      std::string names;
      for (const auto* sub : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
      print_usage_error("'" + attnsel::printable(argv[1], 40) + "' is not an attnsel command; commands are: " + names,
                        "");
      return exit_usage;
    }
    print_usage_error(e.what(), parsed.empty() ? "" : parsed.front()->get_name());
    return exit_usage;
  }
  command = app.get_subcommands().front()->get_name();

  try {
    if (select_cmd->parsed()) {
      select_args.backend_given = select_backend->count() > 0;
      return run_select(select_args, false);
    }
    if (explain_cmd->parsed()) {
      explain_args.backend_given = explain_backend->count() > 0;
      return run_select(explain_args, true);
    }
    if (list_cmd->parsed()) return list_args.catalogs ? run_list_catalogs(list_args.json) : run_list(list_args);
    if (diff_cmd->parsed()) return run_diff(diff_args);
    if (lint_cmd->parsed()) return run_lint(lint_args);
    if (matrix_cmd->parsed()) return run_matrix(matrix_args);
    if (doctor_cmd->parsed()) return run_doctor(doctor_args);
    return run_validate(validate_path);
  } catch (const usage_error& e) {
    print_usage_error(e.what(), command);
    return exit_usage;
  } catch (const catalog_failure& e) {
    print_diagnostic("error", e.what());
    return exit_failure;
  }
}

}  // namespace attnsel_cli

// SPDX-License-Identifier: Apache-2.0
// The subcommands, one setup/run pair each: setup registers the typed flags, run returns the exit status.
#pragma once

#include "options.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>

namespace attnsel_cli {

/// A subcommand registered on the app: its CLI11 node, and how to run it once parsed (the closure
/// owns the flags CLI11 writes into). `run` returns the exit status and may throw usage_error or
/// catalog_failure.
struct command {
  CLI::App* cli = nullptr;
  std::function<int()> run;
};

/// Adds subcommand `name` (help: `description`, then `footer`) to `app`; `add_flags(cli, flags)`
/// registers its options on flags that the returned command's `run` (calling `run(flags)`) owns.
template <class Flags, class AddFlags>
[[nodiscard]] command make_command(CLI::App& app, const std::string& name, const std::string& description,
                                   const std::string& footer, int (*run)(const Flags&), AddFlags add_flags) {
  auto flags = std::make_shared<Flags>();
  auto* cli = app.add_subcommand(name, description);
  add_flags(*cli, *flags);
  cli->footer(footer);
  return {cli, [flags, run] { return run(*flags); }};
}

/// `select`: the backend name alone, or with `--json` the report of attnsel::to_json(explanation, ...).
[[nodiscard]] command setup_select(CLI::App& app);
/// `explain`: every candidate with its verdict and reasons, and the rule used (`--json`: the report).
[[nodiscard]] command setup_explain(CLI::App& app);
/// `plan`: the prefill and the decode backend of a decoder layer and their common KV block size.
[[nodiscard]] command setup_plan(CLI::App& app);
/// Runs `select` (explain_mode false) or `explain`. 0 selected, 1 selection failed.
[[nodiscard]] int run_select(const select_flags& flags, bool explain_mode);

/// `list`: every backend with aliases, domains and platforms; `list --catalogs`: the built-in catalogs.
[[nodiscard]] command setup_list(CLI::App& app);
/// Runs `list` (or `list --catalogs`).
[[nodiscard]] int run_list(const list_flags& flags);

/// `matrix`: attnsel::matrix_markdown or matrix_json of the catalog.
[[nodiscard]] command setup_matrix(CLI::App& app);
/// Runs `matrix`.
[[nodiscard]] int run_matrix(const matrix_flags& flags);

/// `validate FILE`: loads the file alone; `FILE: ok (N backends, M rules)` or the loader's error.
[[nodiscard]] command setup_validate(CLI::App& app);
/// Runs `validate`. 0 ok, 1 the file does not load.
[[nodiscard]] int run_validate(const validate_flags& flags);

/// `doctor`: every detected fact with its source, and per built-in catalog the backends this machine
/// can and cannot run (platform, architecture, components).
[[nodiscard]] command setup_doctor(CLI::App& app);
/// Runs `doctor`. 0 whatever was found.
[[nodiscard]] int run_doctor(const doctor_flags& flags);

/// `diff A B`: attnsel::diff_text or to_json of diff_catalogs.
[[nodiscard]] command setup_diff(CLI::App& app);
/// Runs `diff`. 0 no decision differs, 1 some do; throws usage_error (exit 2) for a catalog that does not load.
[[nodiscard]] int run_diff(const diff_flags& flags);

/// `lint FILE`: every lint finding as `FILE: POINTER: CODE: MESSAGE`, or a JSON array.
[[nodiscard]] command setup_lint(CLI::App& app);
/// Runs `lint`. 0 clean, 1 findings; throws usage_error (exit 2) for a catalog that does not load.
[[nodiscard]] int run_lint(const lint_flags& flags);

}  // namespace attnsel_cli

// SPDX-License-Identifier: Apache-2.0
// The subcommands; each returns its exit status and throws usage_error / catalog_failure.
#pragma once

#include "options.hpp"

#include <string>

namespace attnsel_cli {

/// `select` (explain_mode false: the backend name alone) or `explain` (the table); `--json` prints
/// the report of attnsel::to_json(explanation, ...) instead. 0 selected, 1 selection failed.
[[nodiscard]] int run_select(const select_flags& flags, bool explain_mode);

/// `list`: every backend with aliases, domains and platforms.
[[nodiscard]] int run_list(const list_flags& flags);

/// `matrix`: attnsel::matrix_markdown or matrix_json of the catalog.
[[nodiscard]] int run_matrix(const matrix_flags& flags);

/// `doctor`: every detected fact with its source, and per built-in catalog the backends this machine
/// can and cannot run (platform, architecture, components). 0 unless the flags are malformed.
[[nodiscard]] int run_doctor(const doctor_flags& flags);

/// `validate FILE`: loads the file alone; `FILE: ok (N backends, M rules)` or the loader's error.
[[nodiscard]] int run_validate(const std::string& path);

/// `diff A B`: attnsel::diff_text or to_json of diff_catalogs. 0 no decision differs, 1 some do;
/// throws usage_error (exit 2) for a bad flag or a catalog that does not load.
[[nodiscard]] int run_diff(const diff_flags& flags);

/// `lint FILE`: every lint finding as `FILE: POINTER: CODE: MESSAGE`, or a JSON array. 0 clean,
/// 1 findings; throws usage_error (exit 2) for a catalog that does not load.
[[nodiscard]] int run_lint(const lint_flags& flags);

/// `list --catalogs`: the built-in catalogs with their descriptions and source commits.
[[nodiscard]] int run_list_catalogs(bool json);

}  // namespace attnsel_cli

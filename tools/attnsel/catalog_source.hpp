// SPDX-License-Identifier: Apache-2.0
// Resolves `--catalog` / `--catalog-only` into one loaded catalog.
#pragma once

#include "options.hpp"

// catalog.hpp uses printable() without including override.hpp; include it first until fixed.
#include <attnsel/catalog/catalog.hpp>
#include <attnsel/core/override.hpp>

#include <exception>
#include <string>

namespace attnsel_cli {

/// The catalog the flags name:
///  - nothing: the built-in `vllm` catalog;
///  - `--catalog NAME` or `--catalog-name NAME` (`attnsel list --catalogs`): that built-in as the base
///    (at most one built-in);
///  - `--catalog FILE`: each file merged on the base in order (`registry::merge`: backends add or
///    replace by name, rules go in front); the catalog is then named `BASE+STEM,STEM...`
///    (`vllm+overlay` for overlay.json);
///  - `--catalog-only FILE`: that file alone.
/// Throws catalog_failure with the loader's message, or usage_error for two built-in names.
[[nodiscard]] attnsel::catalog load_catalog(const catalog_flags& flags);

/// A built-in catalog by name, else the catalog FILE alone. Throws catalog_failure; a word that is
/// neither a built-in name nor an existing file (no '/', no `.json`) fails as an unknown catalog name.
[[nodiscard]] attnsel::catalog load_named_catalog(const std::string& name_or_file);

/// `overlay` layered on `base` (load_named_catalog), as `--catalog BASE --catalog FILE` layers it: the
/// merged catalog, named `BASE+STEM`. Throws catalog_failure naming the file at fault.
[[nodiscard]] attnsel::catalog load_overlay(const std::string& base, const std::string& overlay);
/// A loader error's message with the file name and pointer escaped (`printable`): a line break in a
/// path must not start a line of its own in a diagnostic. Other exceptions: `what()`.
[[nodiscard]] std::string catalog_message(const std::exception& e);

/// The one JSON object a `--json` command prints on stdout when its catalog does not load:
/// `{"error": {"code": "catalog", "message": ..., "suggestions": []}}` (and `"backend": null` for
/// select/explain, whose success reports have that key).
void print_catalog_error_json(const std::string& message, bool with_backend, const char* code = "catalog");

}  // namespace attnsel_cli

// SPDX-License-Identifier: Apache-2.0
// The flags of each subcommand as plain strings, and their registration on a CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace attnsel_cli {

/// Refuses an empty path value (`--catalog-only ""`): a usage error, exit status 2.
const CLI::Validator& non_empty_path();

/// `--catalog NAME_OR_FILE` (repeatable) and `--catalog-only FILE`.
struct catalog_flags {
  std::vector<std::string> layers;  ///< in command-line order
  std::string only;                 ///< `--catalog-only`; empty when not given
};

/// `--platform`, `--arch`, `--component`.
struct platform_flags {
  std::string vendor;  ///< empty: detect
  std::string arch;    ///< empty: unknown
  std::vector<std::string> components;
};

/// The query flags, still as typed; `build_query` validates them.
struct query_flags {
  std::string domain = "decoder";
  std::string head_size = "128";
  std::string head_size_v;
  std::string dtype = "bfloat16";
  std::string kv_cache_dtype = "auto";
  std::string block_size;
  std::string attn_type = "decoder";
  std::string num_heads;
  bool mla = false;
  bool sparse = false;
  std::vector<std::string> features;
};

/// Everything `select` and `explain` take.
struct select_flags {
  platform_flags platform;
  query_flags query;
  catalog_flags catalog;
  std::string backend;
  bool backend_given = false;  ///< `--backend` appeared, even with an empty value
  bool prefer = false;
  bool json = false;
};

/// What `list` takes.
struct list_flags {
  catalog_flags catalog;
  std::string domain;  ///< empty: both domains
  bool json = false;
};

/// What `matrix` takes.
struct matrix_flags {
  catalog_flags catalog;
  std::string format = "markdown";
};

/// Registers `--catalog` and `--catalog-only` on `app`.
void add_catalog_flags(CLI::App& app, catalog_flags& flags);

/// Registers every flag of `select` / `explain` on `app`; returns the `--backend` option so the
/// caller can tell "given empty" from "absent".
CLI::Option* add_select_flags(CLI::App& app, select_flags& flags);

}  // namespace attnsel_cli

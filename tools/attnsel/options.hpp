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
  std::string name;                 ///< `--catalog-name`: a built-in catalog as the base; empty when not given
};

/// `--platform`, `--arch`, `--component`, `--no-detect`, `--library-dir`.
struct platform_flags {
  std::string vendor;  ///< empty: detect
  std::string arch;    ///< empty: unknown
  std::vector<std::string> components;
  bool no_detect = false;                 ///< without --platform/--arch: cpu, nothing probed
  std::vector<std::string> library_dirs;  ///< searched for cuDNN before the loader's path
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
  bool catalogs = false;  ///< `--catalogs`: list the built-in catalogs instead of backends
};

/// What `diff` takes.
struct diff_flags {
  std::string a;  ///< built-in catalog name or FILE
  std::string b;
  std::string domain;  ///< empty: both domains
  bool no_overrides = false;
  bool json = false;
};

/// What `lint` takes.
struct lint_flags {
  std::string catalog;                  ///< built-in catalog name or FILE
  std::vector<std::string> components;  ///< components a detection layer defines
  bool json = false;
};

/// What `matrix` takes.
struct matrix_flags {
  catalog_flags catalog;
  std::string format = "markdown";
};

/// What `doctor` takes.
struct doctor_flags {
  std::vector<std::string> library_dirs;
  std::vector<std::string> components;
  std::string device = "0";
  bool json = false;
};

/// Registers `--catalog`, `--catalog-name` and `--catalog-only` on `app`.
void add_catalog_flags(CLI::App& app, catalog_flags& flags);

/// Registers every flag of `select` / `explain` on `app`; returns the `--backend` option so the
/// caller can tell "given empty" from "absent".
CLI::Option* add_select_flags(CLI::App& app, select_flags& flags);

/// Registers the flags of `doctor` on `app`.
void add_doctor_flags(CLI::App& app, doctor_flags& flags);

}  // namespace attnsel_cli

// SPDX-License-Identifier: Apache-2.0
// The typed flags of each subcommand, and the registration of the flag groups several subcommands share.
#pragma once

#include <attnsel/core/enums.hpp>
#include <attnsel/core/query.hpp>

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace attnsel_cli {

/// `--catalog NAME_OR_FILE` (repeatable) and `--catalog-only FILE`.
struct catalog_flags {
  std::vector<std::string> layers;  ///< in command-line order
  std::string only;                 ///< `--catalog-only`; empty when not given
  std::string name;                 ///< `--catalog-name`: a built-in catalog as the base; empty when not given
};

/// `--platform`, `--arch`, `--component`, `--no-detect`, `--library-dir`.
struct platform_flags {
  std::optional<attnsel::device_vendor> vendor;  ///< nullopt: detect (or implied by --arch)
  std::string arch;                              ///< empty: unknown
  std::vector<std::string> components;
  std::optional<std::string> device_name;  ///< `--device-name`: replaces the detected name
  bool no_detect = false;                  ///< without --platform/--arch: cpu, nothing probed
  bool no_stock = false;                   ///< `--no-stock`: a described platform gets no stock install
  std::vector<std::string> library_dirs;   ///< searched for cuDNN before the loader's path
};

/// The query flags: CLI11 writes the typed values straight into `query` (its defaults are the
/// flags' defaults); `--mla`, `--sparse` and `--feature` are applied by `build_query` / `add_features`.
struct query_flags {
  attnsel::query query;
  bool mla = false;
  bool sparse = false;
  std::vector<std::string> features;
  std::string model_config;                   ///< `--model-config PATH`: a Hugging Face config.json fills the query
  std::string model_part = "text";            ///< `--model-part text|vision`
  std::uint32_t tensor_parallel = 1;          ///< `--tp N`: divides the config's heads into heads per rank
  const CLI::Option* dtype_option = nullptr;  ///< `--dtype`, to tell an explicit dtype from the default
  bool dtype_auto = false;                    ///< `--dtype auto`: the engine's rule (attnsel::auto_dtype)
  const CLI::Option* num_kv_heads_option = nullptr;  ///< `--num-kv-heads`, applied over `--model-config`'s
  const CLI::Option* model_config_option = nullptr;  ///< `--model-config`, to tell `""` from not given
};

/// Everything `select` and `explain` take.
struct select_flags {
  platform_flags platform;
  query_flags query;
  catalog_flags catalog;
  std::string backend;
  bool backend_given = false;                  ///< `--backend` appeared, even with an empty value
  std::optional<std::string> prefill_backend;  ///< `--prefill-backend`; unset inherits the decoder override
  std::optional<std::string> decode_backend;   ///< `--decode-backend`; unset inherits the decoder override
  /// `--linear-prefill-backend` / `--linear-decode-backend`: a linear layer's phase; unset inherits the
  /// linear override.
  std::optional<std::string> linear_prefill_backend;
  std::optional<std::string> linear_decode_backend;
  std::vector<std::string> backend_per_kind;  ///< `plan --backend-per-kind KIND=SPEC`, each as typed
  bool no_prefix_caching = false;             ///< `plan --no-prefix-caching` (vLLM's --no-enable-prefix-caching)
  bool prefer = false;
  bool refuse_advisories = false;  ///< `--refuse-advisories`
  bool json = false;
};

/// What `list` takes.
struct list_flags {
  catalog_flags catalog;
  std::optional<attnsel::attention_domain> domain;  ///< nullopt: both domains
  bool json = false;
  bool catalogs = false;  ///< `--catalogs`: list the built-in catalogs instead of backends
};

/// What `diff` takes.
struct diff_flags {
  std::string a;  ///< built-in catalog name or FILE
  std::string b;
  std::optional<attnsel::attention_domain> domain;  ///< nullopt: both domains
  std::string on;  ///< `--on`: A and B are overlays layered on this catalog; empty: whole catalogs
  bool no_overrides = false;
  bool json = false;
};

/// What `lint` takes.
struct lint_flags {
  std::string catalog;                  ///< built-in catalog name or FILE
  std::string on;                       ///< `--on BASE`: lint FILE layered on BASE (a name or a file)
  std::vector<std::string> components;  ///< components a detection layer defines
  bool json = false;
};

/// What `matrix` takes.
struct matrix_flags {
  catalog_flags catalog;
  std::string format = "markdown";  ///< `markdown` or `json`
};

/// What `doctor` takes.
struct doctor_flags {
  std::vector<std::string> library_dirs;
  std::vector<std::string> components;
  unsigned device = 0;
  bool json = false;
};

/// What `validate` takes.
struct validate_flags {
  std::string path;
  std::string on;  ///< `--on BASE`: check FILE as an overlay of BASE (a built-in name or a file)
};

/// Registers `--catalog`, `--catalog-name` and `--catalog-only` on `app`.
void add_catalog_flags(CLI::App& app, catalog_flags& flags);

/// Registers `--domain` (decoder or encoder, both when absent) for `list` and `diff`.
void add_domain_filter(CLI::App& app, std::optional<attnsel::attention_domain>& domain);

/// Registers `--library-dir DIR` (repeatable), searched for cuDNN first.
void add_library_dirs(CLI::App& app, std::vector<std::string>& dirs);

/// Registers `--component` (repeatable, comma-separated lists too) with this command's help text;
/// `type_name` is how the help shows one value.
void add_component_list(CLI::App& app, std::vector<std::string>& components, const std::string& help,
                        const std::string& type_name = "NAME[=VER]");

/// Registers `--platform`, `--arch`, `--component`, `--no-detect` and `--library-dir` on `app`.
void add_platform_flags(CLI::App& app, platform_flags& flags);

/// Registers the query flags (`--domain`, `--head-size` ... `--feature`) on `app`, typed and
/// range-checked by CLI11 against attnsel::limits.
void add_query_flags(CLI::App& app, query_flags& flags);

}  // namespace attnsel_cli

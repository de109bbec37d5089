// SPDX-License-Identifier: Apache-2.0
// The diff subcommand: compare the decisions of two catalogs over the enumerated configuration space.
#include "catalog_source.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "validators.hpp"

#include <attnsel/catalog/builtin_catalog.hpp>
#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/diff.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnsel_cli {

namespace {

constexpr const char* diff_footer = R"(Examples:
  attnsel diff vllm-rocm-env@e2a00c7b vllm
  attnsel diff vllm@0013943 vllm --domain decoder --json
  attnsel diff catalog/vllm@0.33.0.json my_changed_vllm.json
  attnsel diff --on torch_sdpa measured_old.json measured_new.json

A and B are built-in catalog names (attnsel list --catalogs) or catalog files.
Exit status: 0 no decision differs, 1 some decisions differ,
2 usage error (or a catalog that does not load), 70 internal error.)";

// A catalog that does not load is an input error here: exit 1 must mean "decisions differ". With
// `on`, the side is an overlay file layered on that catalog (two tuned overlays, one base).
attnsel::catalog load_side(const std::string& name_or_file, const std::string& on) {
  try {
    if (on.empty()) return load_named_catalog(name_or_file);
    catalog_flags layered;
    layered.name = on;  // as `--catalog-name ON --catalog FILE`: named ON+STEM
    layered.layers = {name_or_file};
    return load_catalog(layered);
  } catch (const catalog_failure& e) {
    throw usage_error(e.what());
  }
}

}  // namespace

command setup_diff(CLI::App& app) {
  return make_command<diff_flags>(
      app, "diff", "Show every configuration whose decision differs between two catalogs", diff_footer, run_diff,
      [](CLI::App& cli, diff_flags& flags) {
        cli.add_option("A", flags.a, "Built-in catalog name or catalog FILE (before)")->required();
        cli.add_option("B", flags.b, "Built-in catalog name or catalog FILE (after)")->required();
        add_domain_filter(cli, flags.domain);
        std::vector<std::string> builtin(attnsel::builtin_catalog_names.begin(), attnsel::builtin_catalog_names.end());
        cli.add_option("--on", flags.on,
                       "Layer A and B (overlay files, e.g. two tuned overlays) on this built-in catalog")
            ->type_name("NAME")
            ->check(one_of(builtin));
        cli.add_flag("--no-overrides", flags.no_overrides, "Compare automatic selection only, no forced backends");
        cli.add_flag("--json", flags.json, "Print one JSON report");
      });
}

int run_diff(const diff_flags& flags) {
  attnsel::diff_options options;
  if (flags.domain) {
    options.decoder = *flags.domain == attnsel::attention_domain::decoder;
    options.encoder = *flags.domain == attnsel::attention_domain::encoder;
    options.drafter = *flags.domain == attnsel::attention_domain::drafter;
    options.linear = *flags.domain == attnsel::attention_domain::linear;
  }
  options.overrides = !flags.no_overrides;
  const auto a = load_side(flags.a, flags.on);
  const auto b = load_side(flags.b, flags.on);
  attnsel::catalog_diff d;
  try {
    d = attnsel::diff_catalogs(a, b, options);
  } catch (const std::length_error& e) {
    throw usage_error(e.what());
  }
  if (flags.json) {
    std::printf("%s\n", attnsel::json_text(attnsel::to_json(d)).c_str());
  } else {
    std::fputs(attnsel::diff_text(d).c_str(), stdout);
  }
  return d.empty() ? exit_ok : exit_failure;
}

}  // namespace attnsel_cli

// SPDX-License-Identifier: Apache-2.0
// The lint subcommand: report what a catalog allows but almost certainly does not mean.
#include "catalog_source.hpp"
#include "commands.hpp"
#include "errors.hpp"

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/lint.hpp>
#include <attnsel/core/override.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>

namespace attnsel_cli {

namespace {

constexpr const char* lint_footer = R"(Examples:
  attnsel lint my_catalog.json
  attnsel lint vllm --json
  attnsel lint engine.json --component my_kernels
  attnsel lint my_overlay.json --on vllm        (pointers then name the merged catalog)

Exit status: 0 clean, 1 findings (FILE: POINTER: CODE: MESSAGE),
2 usage error (or a catalog that does not load), 70 internal error.)";

}  // namespace

command setup_lint(CLI::App& app) {
  return make_command<lint_flags>(
      app, "lint", "Find what a catalog allows but almost certainly does not mean", lint_footer, run_lint,
      [](CLI::App& cli, lint_flags& flags) {
        cli.add_option("FILE", flags.catalog, "Catalog file (or built-in catalog name) to lint")->required();
        add_component_list(cli, flags.components,
                           "A component your platform detection defines (repeatable; comma-separated lists too)",
                           "NAME");
        cli.add_option("--on", flags.on,
                       "Lint FILE layered on this catalog (a built-in name or a file): finds what the overlay "
                       "breaks in its base, such as base rules its rules shadow")
            ->type_name("BASE");
        cli.add_flag("--json", flags.json, "Print a JSON array of findings");
      });
}

int run_lint(const lint_flags& flags) {
  attnsel::catalog c;
  try {
    c = flags.on.empty() ? load_named_catalog(flags.catalog) : load_overlay(flags.on, flags.catalog);
  } catch (const catalog_failure& e) {
    throw usage_error(e.what());  // exit 1 must mean "findings"
  }
  attnsel::lint_options options;
  options.known_components = flags.components;
  const auto findings = attnsel::lint_catalog(c, options);
  if (flags.json) {
    auto out = nlohmann::json::array();
    for (const auto& f : findings) out.push_back(attnsel::to_json(f));
    std::printf("%s\n", attnsel::json_text(out).c_str());
  } else if (findings.empty()) {
    std::printf("%s: clean\n", attnsel::printable(flags.catalog, 1000).c_str());
  } else {
    // With --on the pointers name the merged catalog (the overlay's rules first, then the base's).
    const auto where = attnsel::printable(flags.catalog, 1000) +
                       (flags.on.empty() ? std::string() : " on " + attnsel::printable(flags.on, 1000));
    for (const auto& f : findings)
      std::printf("%s: %s: %s: %s\n", where.c_str(), f.pointer.c_str(), std::string(attnsel::to_string(f.code)).c_str(),
                  attnsel::printable(f.message, 2000).c_str());
    std::printf("%zu finding%s\n", findings.size(), findings.size() == 1 ? "" : "s");
  }
  return findings.empty() ? exit_ok : exit_failure;
}

}  // namespace attnsel_cli

// SPDX-License-Identifier: Apache-2.0
// The matrix subcommand: the capability matrix of a catalog, the generator of docs/backends.md.
#include "catalog_source.hpp"
#include "commands.hpp"
#include "errors.hpp"

// matrix_inl.hpp uses helpers of checks_inl.hpp without including checks.hpp; include it first until fixed.
#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/matrix.hpp>
#include <attnsel/core/checks.hpp>
#include <attnsel/core/override.hpp>

#include "validators.hpp"

#include <cstdio>

namespace attnsel_cli {

namespace {

constexpr const char* matrix_footer = R"(Examples:
  attnsel matrix > vllm.md
  attnsel matrix --catalog torch_sdpa --format json
  attnsel matrix --catalog my_backends.json)";

// The matrix is a document (UTF-8 arrows, Markdown), so it is not passed through printable(); only
// terminal control bytes a hostile catalog might carry are replaced.
std::string without_controls(std::string text) {
  for (auto& ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && ch != '\n' && ch != '\t') || c == 0x7f) ch = '?';
  }
  return text;
}

}  // namespace

command setup_matrix(CLI::App& app) {
  return make_command<matrix_flags>(app, "matrix", "Print the capability matrix of a catalog (docs/backends.md)",
                                    matrix_footer, run_matrix, [](CLI::App& cli, matrix_flags& flags) {
                                      add_catalog_flags(cli, flags.catalog);
                                      cli.add_option("--format", flags.format,
                                                     "markdown or json (default: " + flags.format + ")")
                                          ->type_name("FORMAT")
                                          ->check(one_of({"markdown", "json"}));
                                    });
}

int run_matrix(const matrix_flags& flags) {
  attnsel::catalog c;
  try {
    c = load_catalog(flags.catalog);
  } catch (const catalog_failure& e) {
    if (flags.format == "json") print_catalog_error_json(e.what(), false);  // one JSON document, failures included
    throw;
  }
  if (flags.format == "json") {
    const auto j = attnsel::matrix_json(c);
    std::printf("%s\n", without_controls(attnsel::json_text(j)).c_str());
  } else {
    std::fputs(without_controls(attnsel::matrix_markdown(c)).c_str(), stdout);
  }
  return exit_ok;
}

}  // namespace attnsel_cli

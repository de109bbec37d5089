// SPDX-License-Identifier: Apache-2.0
// The validate subcommand: load one catalog file alone and report ok or the loader's precise error.
#include "catalog_source.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "terminal.hpp"

// catalog.hpp uses printable() without including override.hpp; include it first until fixed.
#include <attnsel/catalog.hpp>
#include <attnsel/override.hpp>

#include "validators.hpp"

#include <cstdio>
#include <exception>
#include <new>

namespace attnsel_cli {

namespace {

constexpr const char* validate_footer = R"(Examples:
  attnsel validate catalog/vllm.json

Prints 'FILE: ok (N backends, M rules)' and exits 0, or the loader's error (FILE: POINTER: problem)
and exits 1.)";

}  // namespace

command setup_validate(CLI::App& app) {
  return make_command<validate_flags>(
      app, "validate", "Check a catalog file; print ok or the precise error", validate_footer, run_validate,
      [](CLI::App& cli, validate_flags& flags) {
        cli.add_option("FILE", flags.path, "Catalog file to check")->required()->check(non_empty_path());
      });
}

int run_validate(const validate_flags& flags) {
  const auto& path = flags.path;
  try {
    const auto c = attnsel::read_catalog_file(path);
    std::printf("%s: ok (%zu backends, %zu rules)\n", attnsel::printable(path, 1000).c_str(), c.registry.size(),
                c.registry.policy().rules.size());
    return exit_ok;
  } catch (const std::bad_alloc&) {
    throw;  // an internal error (status 70), not a bad catalog
  } catch (const std::exception& e) {
    print_diagnostic("error", catalog_message(e));
    return exit_failure;
  }
}

}  // namespace attnsel_cli

// SPDX-License-Identifier: Apache-2.0
// The validate subcommand: load one catalog file alone and report ok or the loader's precise error.
#include "catalog_source.hpp"
#include "commands.hpp"
#include "errors.hpp"
#include "terminal.hpp"

// catalog.hpp uses printable() without including override.hpp; include it first until fixed.
#include <attnsel/catalog/catalog.hpp>
#include <attnsel/core/override.hpp>

#include "validators.hpp"

#include <cstdio>
#include <exception>
#include <new>

namespace attnsel_cli {

namespace {

constexpr const char* validate_footer = R"(Examples:
  attnsel validate catalog/vllm@0.33.0.json

Prints 'FILE: ok (N backends, M rules)' and exits 0, or the loader's error (FILE: POINTER: problem)
and exits 1.)";

}  // namespace

command setup_validate(CLI::App& app) {
  return make_command<validate_flags>(
      app, "validate", "Check a catalog file; print ok or the precise error", validate_footer, run_validate,
      [](CLI::App& cli, validate_flags& flags) {
        cli.add_option("FILE", flags.path, "Catalog file to check")->required()->check(non_empty_path());
        cli.add_option("--on", flags.on,
                       "Check FILE as an overlay layered on this catalog (a built-in name or a file), as "
                       "--catalog BASE --catalog FILE layers it")
            ->type_name("BASE")
            ->check(non_empty_path());
      });
}

int run_validate(const validate_flags& flags) {
  const auto& path = flags.path;
  try {
    if (!flags.on.empty()) {
      const auto c = load_overlay(flags.on, path);
      std::printf("%s: ok on %s (%zu backends, %zu rules merged)\n", attnsel::printable(path, 1000).c_str(),
                  attnsel::printable(flags.on, 1000).c_str(), c.registry.size(), c.registry.policy().rules.size());
      return exit_ok;
    }
    const auto c = attnsel::read_catalog_file(path);
    std::printf("%s: ok (%zu backends, %zu rules)\n", attnsel::printable(path, 1000).c_str(), c.registry.size(),
                c.registry.policy().rules.size());
    return exit_ok;
  } catch (const catalog_failure& e) {
    print_diagnostic("error", e.what());
    return exit_failure;
  } catch (const std::bad_alloc&) {
    throw;  // an internal error (status 70), not a bad catalog
  } catch (const std::exception& e) {
    auto message = catalog_message(e);
    // An overlay names its base's backends: checked alone, they are unknown.
    if (flags.on.empty() && message.find("unknown backend") != std::string::npos)
      message += "; if FILE is an overlay, check it on its base: attnsel validate FILE --on BASE";
    print_diagnostic("error", message);
    return exit_failure;
  }
}

}  // namespace attnsel_cli

// SPDX-License-Identifier: Apache-2.0
// The validate subcommand: load one catalog file alone and report ok or the loader's precise error.
#include "commands.hpp"
#include "errors.hpp"
#include "terminal.hpp"

// catalog.hpp uses printable() without including override.hpp; include it first until fixed.
#include <attnsel/catalog.hpp>
#include <attnsel/override.hpp>

#include <cstdio>
#include <exception>

namespace attnsel_cli {

int run_validate(const std::string& path) {
  try {
    const auto c = attnsel::read_catalog_file(path);
    std::printf("%s: ok (%zu backends, %zu rules)\n", attnsel::printable(path, 1000).c_str(), c.registry.size(),
                c.registry.policy().rules.size());
    return exit_ok;
  } catch (const std::exception& e) {
    print_diagnostic("error", e.what());
    return exit_failure;
  }
}

}  // namespace attnsel_cli

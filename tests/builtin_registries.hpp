// SPDX-License-Identifier: Apache-2.0
// The registry of each built-in catalog, parsed once per test program, by catalog name.
#pragma once

#include <attnsel/catalog/builtin_catalog.hpp>

#include <map>
#include <string>

namespace fixtures {

/// The registry `builtin_catalog(name)` describes; throws std::out_of_range for an unknown name.
inline const attnsel::registry& catalog_registry(const std::string& name) {
  static const std::map<std::string, attnsel::registry> registries = [] {
    std::map<std::string, attnsel::registry> out;
    for (auto n : attnsel::builtin_catalog_names) out.emplace(std::string(n), attnsel::builtin_catalog(n).registry);
    return out;
  }();
  return registries.at(name);
}

}  // namespace fixtures

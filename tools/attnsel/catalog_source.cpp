// SPDX-License-Identifier: Apache-2.0
// Catalog loading for the tool: built-ins by name, files layered with merge_catalog_file.
#include "catalog_source.hpp"

#include "errors.hpp"
#include "validators.hpp"

#include <attnsel/builtin_catalog.hpp>
#include <attnsel/override.hpp>
#include <attnsel/reference.hpp>
#include <attnsel/registry.hpp>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <string>
#include <vector>

namespace attnsel_cli {

namespace {

bool is_builtin(const std::string& name) {
  return std::find(attnsel::builtin_catalog_names.begin(), attnsel::builtin_catalog_names.end(), name) !=
         attnsel::builtin_catalog_names.end();
}

}  // namespace

attnsel::catalog load_named_catalog(const std::string& name_or_file) {
  try {
    if (is_builtin(name_or_file)) return attnsel::builtin_catalog(name_or_file);
    return attnsel::read_catalog_file(name_or_file);
  } catch (const std::exception& e) {
    throw catalog_failure(e.what());
  }
}

namespace {

// `dir/overlay.json` -> `overlay`: names the layer in the merged catalog's name.
std::string stem(const std::string& path) {
  const auto slash = path.find_last_of('/');
  auto name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) name.resize(name.size() - 5);
  return name;
}

}  // namespace

attnsel::catalog load_catalog(const catalog_flags& flags) {
  try {
    if (!flags.only.empty()) return attnsel::read_catalog_file(flags.only);

    std::string base = "vllm";
    std::vector<std::string> files;
    bool named = false;
    if (!flags.name.empty()) {  // CLI11 checked it is a built-in name
      base = flags.name;
      named = true;
    }
    for (const auto& layer : flags.layers) {
      if (!is_builtin(layer)) {
        files.push_back(layer);
        continue;
      }
      if (named && layer != base)
        throw usage_error("--catalog: names two built-in catalogs (" + quoted_value(base) + " and " +
                          quoted_value(layer) + "); give one built-in catalog, then catalog files to layer on it");
      base = layer;
      named = true;
    }
    auto c = attnsel::builtin_catalog(base);
    for (std::size_t i = 0; i < files.size(); ++i) {
      attnsel::merge_catalog_file(c.registry, files[i]);
      c.info.name += (i == 0 ? "+" : ",") + stem(files[i]);
    }
    return c;
  } catch (const usage_error&) {
    throw;
  } catch (const std::exception& e) {
    throw catalog_failure(e.what());
  }
}

}  // namespace attnsel_cli

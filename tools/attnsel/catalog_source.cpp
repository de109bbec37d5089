// SPDX-License-Identifier: Apache-2.0
// Catalog loading for the tool: built-ins by name, files layered with merge_catalog_file.
#include "catalog_source.hpp"

#include "terminal.hpp"

#include "errors.hpp"
#include "validators.hpp"

#include <attnsel/catalog/builtin_catalog.hpp>
#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/lint.hpp>
#include <attnsel/catalog/reference.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/override.hpp>
#include <attnsel/core/registry.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

namespace attnsel_cli {

namespace {

bool is_builtin(const std::string& name) {
  return std::find(attnsel::builtin_catalog_names.begin(), attnsel::builtin_catalog_names.end(), name) !=
         attnsel::builtin_catalog_names.end();
}

std::string builtin_list() { return attnsel::detail::join(attnsel::builtin_catalog_names, ", "); }

// A word that names no built-in catalog and no file is a mistyped name more often than a missing
// file: say so, and list the names. Anything with a '/' or a `.json` ending is a path.
void check_file_or_name(const std::string& value) {
  std::error_code ec;
  if (value.find('/') != std::string::npos || std::filesystem::exists(value, ec)) return;
  if (value.size() >= 5 && value.compare(value.size() - 5, 5, ".json") == 0) return;
  std::vector<std::string> names(attnsel::builtin_catalog_names.begin(), attnsel::builtin_catalog_names.end());
  const auto hint = attnsel::closest_name(value, names);
  throw catalog_failure("unknown catalog name " + quoted_value(value) +
                        (hint.empty() ? std::string() : "; did you mean '" + hint + "'?") +
                        " Built-in catalogs: " + builtin_list() + "; or give the path of a catalog file");
}

[[noreturn]] void rethrow_as_failure(const std::exception& e) { throw catalog_failure(catalog_message(e)); }

}  // namespace

std::string catalog_message(const std::exception& e) {
  if (const auto* ce = dynamic_cast<const attnsel::catalog_error*>(&e))
    return attnsel::printable(ce->origin(), 1000) + ": " +
           (ce->pointer().empty() ? std::string("/") : attnsel::printable(ce->pointer(), 1000)) + ": " + ce->problem();
  return e.what();
}

attnsel::catalog load_named_catalog(const std::string& name_or_file) {
  try {
    if (is_builtin(name_or_file)) return attnsel::builtin_catalog(name_or_file);
    check_file_or_name(name_or_file);
    return attnsel::read_catalog_file(name_or_file);
  } catch (const std::bad_alloc&) {
    throw;  // an internal error, not a bad catalog
  } catch (const catalog_failure&) {
    throw;
  } catch (const std::exception& e) {
    rethrow_as_failure(e);
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

// An overlay's rules go in front of the base's: one that matches everything a base rule matches silently
// turns that rule off (vLLM's Hopper mm_prefix rules under a plain Hopper rule). Said once, on stderr.
void warn_shadowed_base_rules(const attnsel::catalog& merged, const std::string& base,
                              const std::vector<std::string>& files, std::size_t overlay_rules) {
  std::size_t shadowed = 0;
  for (const auto& f : attnsel::lint_catalog(merged)) {
    if (f.code != attnsel::lint_code::shadowed_rule) continue;
    const auto slash = f.pointer.find_last_of('/');
    const auto index = std::strtoul(f.pointer.c_str() + slash + 1, nullptr, 10);
    if (index >= overlay_rules) ++shadowed;
  }
  if (shadowed == 0) return;
  print_diagnostic("warning", "the rules of " + attnsel::detail::join(files, ", ") + " shadow " +
                                  std::to_string(shadowed) + " rule" + (shadowed == 1 ? "" : "s") + " of " + base +
                                  ", which never match now ('attnsel lint " + files.back() + " --on " + base +
                                  "' lists them)");
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
        check_file_or_name(layer);
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
    const std::size_t base_rules = c.registry.policy().rules.size();
    for (std::size_t i = 0; i < files.size(); ++i) {
      attnsel::merge_catalog_file(c.registry, files[i]);
      c.info.name += (i == 0 ? "+" : ",") + stem(files[i]);
    }
    if (!files.empty()) warn_shadowed_base_rules(c, base, files, c.registry.policy().rules.size() - base_rules);
    return c;
  } catch (const usage_error&) {
    throw;
  } catch (const catalog_failure&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;  // an internal error, not a bad catalog
  } catch (const std::exception& e) {
    rethrow_as_failure(e);
  }
}

attnsel::catalog load_overlay(const std::string& base, const std::string& overlay) {
  auto c = load_named_catalog(base);
  try {
    check_file_or_name(overlay);
    attnsel::merge_catalog_file(c.registry, overlay);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const catalog_failure&) {
    throw;
  } catch (const std::exception& e) {
    rethrow_as_failure(e);
  }
  c.info.name += "+" + stem(overlay);
  return c;
}

void print_catalog_error_json(const std::string& message, bool with_backend, const char* code) {
  nlohmann::json report = {{"error", {{"code", code}, {"message", message}, {"suggestions", nlohmann::json::array()}}}};
  if (with_backend) report["backend"] = nullptr;
  std::printf("%s\n", attnsel::json_text(report).c_str());
  std::fflush(stdout);
}

}  // namespace attnsel_cli

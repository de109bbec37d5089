// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for builtin_catalog.hpp: the embedded catalog text and its parse.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/builtin_catalog.hpp>
#endif

#include <attnsel/generated/catalogs.hpp>

#include <stdexcept>
#include <string>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE std::string_view builtin_catalog_json(std::string_view name) noexcept {
  for (const auto& c : generated::catalog_texts)
    if (c.name == builtin_catalog_target(name)) return c.json;
  return {};
}

ATTNSEL_INLINE catalog builtin_catalog(std::string_view name) {
  const auto text = builtin_catalog_json(name);
  if (text.empty()) {
    std::string known;
    for (auto n : builtin_catalog_names) known += (known.empty() ? "" : ", ") + std::string(n);
    throw std::invalid_argument("no built-in catalog named '" + std::string(name) + "' (built-in: " + known + ")");
  }
  // The embedded text was checked when it was built in (the generator loaded it): no depth pre-scan.
  catalog_limits trusted;
  trusted.max_depth = text.size();
  return parse_catalog_text(text, "builtin:" + std::string(name), trusted);
}

ATTNSEL_END_NAMESPACE

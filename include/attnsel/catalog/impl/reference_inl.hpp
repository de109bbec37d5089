// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for reference.hpp: the registries of the compiled-in catalogs.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/reference.hpp>
#endif

#include <attnsel/generated/catalog_tables.hpp>

#include <stdexcept>
#include <string>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE registry builtin_registry(std::string_view name) {
  for (const auto* c : detail::tables::builtin)
    if (c->name == builtin_catalog_target(name)) return detail::tables::build_registry(*c);
  std::string known;
  for (auto n : builtin_catalog_names) known += (known.empty() ? "" : ", ") + std::string(n);
  throw std::invalid_argument("no built-in catalog named '" + std::string(name) + "' (built-in: " + known + ")");
}

ATTNSEL_INLINE registry reference_registry() { return builtin_registry("vllm"); }

ATTNSEL_INLINE registry torch_sdpa_registry() { return builtin_registry("torch_sdpa"); }

ATTNSEL_END_NAMESPACE

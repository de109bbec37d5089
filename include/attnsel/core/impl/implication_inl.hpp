// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for implication.hpp: validation, the closure check and the closure.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/implication.hpp>
#endif

#include <attnsel/core/query.hpp>
#include <attnsel/core/registry.hpp>

#include <algorithm>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {
// A name from untrusted input, safe to quote: at most 64 characters, anything unprintable as '?'.
// (override.hpp's printable() cannot be used here: override.hpp includes registry.hpp, which includes this.)
inline std::string quoted_name(const std::string& name) {
  std::string out;
  for (char c : name.substr(0, 64)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out + (name.size() > 64 ? "..." : "");
}
}  // namespace detail

ATTNSEL_INLINE std::string implication_problem(const std::vector<component_implication>& implications) {
  if (implications.size() > implication_limits::max_entries)
    return std::to_string(implications.size()) + " implications; the limit is " +
           std::to_string(implication_limits::max_entries);
  for (std::size_t i = 0; i < implications.size(); ++i) {
    const auto& imp = implications[i];
    if (!is_valid_feature_name(imp.component))
      return "component \"" + detail::quoted_name(imp.component) + "\" is not a lower_snake name";
    for (std::size_t k = 0; k < i; ++k)
      if (implications[k].component == imp.component) return "component " + imp.component + " is listed twice";
    if (imp.implies.empty()) return "component " + imp.component + " implies nothing";
    if (imp.implies.size() > implication_limits::max_implied)
      return "component " + imp.component + " implies " + std::to_string(imp.implies.size()) +
             " components; the limit is " + std::to_string(implication_limits::max_implied);
    for (std::size_t k = 0; k < imp.implies.size(); ++k) {
      const auto& name = imp.implies[k];
      if (!is_valid_feature_name(name))
        return "component " + imp.component + " implies \"" + detail::quoted_name(name) + "\", not a lower_snake name";
      if (name == imp.component) return "component " + imp.component + " implies itself";
      if (std::find(imp.implies.begin(), imp.implies.begin() + static_cast<std::ptrdiff_t>(k), name) !=
          imp.implies.begin() + static_cast<std::ptrdiff_t>(k))
        return "component " + imp.component + " implies " + name + " twice";
    }
  }
  return {};
}

ATTNSEL_INLINE bool is_closed(const registry& reg, const platform& p) noexcept {
  // Both lists are sorted by name: one merge finds the implications whose component is present (every
  // select runs this, so it avoids a look-up per implication).
  const auto& imps = reg.implications();
  const auto& comps = p.components();
  auto imp = imps.begin();
  for (auto c = comps.begin(); c != comps.end() && imp != imps.end();) {
    const int order = c->name.compare(imp->component);
    if (order < 0) {
      ++c;
    } else if (order > 0) {
      ++imp;
    } else {
      for (const auto& name : imp->implies)
        if (!p.has_component(name)) return false;
      ++c;
      ++imp;
    }
  }
  return true;
}

ATTNSEL_INLINE closed_platform close_platform(const registry& reg, const platform& p) {
  closed_platform out{p, {}};
  // Each pass adds at least one component or stops; a chain is at most as long as the table.
  for (std::size_t pass = 0; pass <= reg.implications().size(); ++pass) {
    bool added = false;
    for (const auto& imp : reg.implications()) {
      if (!out.value.has_component(imp.component)) continue;
      for (const auto& name : imp.implies) {
        if (out.value.has_component(name)) continue;
        out.value.add_component(name);
        out.implied.push_back(implied_component{name, imp.component});
        added = true;
      }
    }
    if (!added) break;
  }
  return out;
}

ATTNSEL_END_NAMESPACE

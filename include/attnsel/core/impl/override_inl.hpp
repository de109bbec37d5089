// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for override.hpp: validation, messages and "did you mean".
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/override.hpp>
#endif

#include <attnsel/core/engine_names.hpp>
#include <attnsel/core/impl/text.hpp>

#include <algorithm>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE override_plan override_plan::parse(std::string_view spec, const registry& reg) {
  override_plan plan;
  plan.reg_ = &reg;
  plan.spec_ = detail::trim(spec);
  if (plan.spec_.empty()) return plan;

  // Forced names are remembered so that duplicates and contradictions are caught in one pass.
  index_set forced;
  std::size_t exclusions = 0;
  std::optional<override_problem> problem;
  const auto fail = [&](override_problem::kind k, std::string_view token, std::size_t position) {
    if (!problem) problem = override_problem{k, token, position};
  };
  detail::split_entries(plan.spec_, [&](std::string_view entry, std::size_t position) {
    if (problem) return;
    if (entry.empty()) return fail(override_problem::kind::empty_entry, entry, position);
    if (detail::iequals(entry, "auto")) {
      if (plan.explicit_auto_) return fail(override_problem::kind::auto_twice, entry, position);
      plan.explicit_auto_ = true;
      return;
    }
    const bool exclude = entry.front() == '-';
    const auto name = exclude ? detail::trim(entry.substr(1)) : entry;
    if (exclude && name.empty()) return fail(override_problem::kind::lone_dash, entry, position);
    if (exclude && detail::iequals(name, "auto")) return fail(override_problem::kind::excluded_auto, entry, position);
    const auto index = reg.index_of(name);
    if (!index) return fail(override_problem::kind::unknown_name, name, position);
    if (forced.contains(*index) || plan.excluded_.contains(*index)) {
      const bool contradiction = exclude ? forced.contains(*index) : plan.excluded_.contains(*index);
      return fail(contradiction ? override_problem::kind::forced_and_excluded : override_problem::kind::duplicate, name,
                  position);
    }
    if (exclude) {
      plan.excluded_.insert(*index);
      ++exclusions;
    } else {
      forced.insert(*index);
      ++plan.forced_;
    }
  });
  if (!problem && exclusions > 0 && plan.forced_ > 0 && !plan.explicit_auto_)
    problem = override_problem{override_problem::kind::exclusion_without_auto, plan.spec_, 0};
  plan.problem_ = problem;
  return plan;
}

ATTNSEL_INLINE std::string printable(std::string_view text, std::size_t limit) {
  return detail::escape_text(text, limit);
}

ATTNSEL_INLINE std::string closest_name(std::string_view text, const std::vector<std::string>& candidates) {
  // Names are at most 64 characters; a longer input is no typo of one.
  if (text.empty() || text.size() > 80) return {};
  std::size_t best = std::string::npos;
  std::string best_name;
  std::vector<std::size_t> row;
  for (const auto& cand : candidates) {
    // Levenshtein distance, one row at a time.
    row.resize(cand.size() + 1);
    for (std::size_t j = 0; j <= cand.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= text.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= cand.size(); ++j) {
        const std::size_t up = row[j];
        const bool same = detail::ascii_lower(text[i - 1]) == detail::ascii_lower(cand[j - 1]);
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
        diag = up;
      }
    }
    if (row[cand.size()] < best) {
      best = row[cand.size()];
      best_name = cand;
    }
  }
  const std::size_t allowed = std::max<std::size_t>(2, text.size() / 3);
  return best <= allowed ? best_name : std::string();
}

ATTNSEL_INLINE std::string override_problem::message(const registry& reg) const {
  return message(reg, type == kind::unknown_name ? suggest_backend(token, reg) : std::string());
}

namespace detail {
// `typed` as another built-in catalog's name for a kernel family `reg` has under its own name.
inline equivalent_name equivalent_in(std::string_view typed, const registry& reg) {
  return find_equivalent(typed, [&reg](std::string_view n) { return reg.index_of(n).has_value(); });
}
}  // namespace detail

ATTNSEL_INLINE std::string suggest_backend(std::string_view typed, const registry& reg) {
  const auto eq = detail::equivalent_in(typed, reg);
  if (eq.found) return std::string(eq.name);
  return closest_name(typed, reg.all_names());
}

ATTNSEL_INLINE std::string override_problem::message(const registry& reg, const std::string& hint) const {
  const std::string where = position ? " (entry " + std::to_string(position) + ")" : "";
  const std::string tok = "'" + printable(token) + "'";
  switch (type) {
    case kind::empty_entry:
      return "override has an empty entry" + where + "; entries are separated by single commas";
    case kind::lone_dash:
      return "override entry '-'" + where + " needs a backend name, e.g. -FLASHINFER";
    case kind::auto_twice:
      return "override names 'auto' more than once" + where;
    case kind::excluded_auto:
      return "override entry '-auto'" + where + " is meaningless; leave 'auto' out instead";
    case kind::duplicate:
      return "override names backend " + tok + " twice" + where;
    case kind::forced_and_excluded:
      return "override both forces and excludes backend " + tok + where;
    case kind::exclusion_without_auto:
      return "override " + tok +
             " excludes backends but has no 'auto': exclusions only affect automatic selection; add ',auto'";
    case kind::unknown_name: {
      const auto names = reg.all_names();
      std::string out = "unknown attention backend " + tok + where + ".";
      if (!hint.empty()) out += " Did you mean " + hint + "?";
      const auto eq = detail::equivalent_in(token, reg);
      if (eq.found)
        out += " (" + tok + " is the " + std::string(eq.from_catalog) + " catalog's name for " +
               std::string(eq.family) + "; this catalog calls it " + std::string(eq.name) + ".)";
      out += " Valid options are: auto, " + detail::join_limited(names, ", ");
      return out;
    }
  }
  return "malformed override";
}

ATTNSEL_END_NAMESPACE

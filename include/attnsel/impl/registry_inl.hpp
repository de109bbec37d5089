// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for registry.hpp: validation, name index and policy resolution.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/registry.hpp>
#endif

#include <algorithm>
#include <array>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// Upper-cases `name` into `buf` (names are at most 64 characters); false when it cannot be a name.
inline bool upper_into(std::string_view name, std::array<char, 64>& buf, std::string_view& out) noexcept {
  if (name.empty() || name.size() > buf.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    buf[i] = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  }
  out = std::string_view(buf.data(), name.size());
  return true;
}

inline void validate_capabilities(const std::string& where, const capabilities& c) {
  const auto check_spec = [&](const head_size_spec& s, const char* field) {
    if (s.form == head_size_spec::kind::set && s.values.empty())
      throw registry_error(where + ": " + field + " is an empty set (use any)");
    if (s.form == head_size_spec::kind::range && (s.min > s.max || s.multiple_of == 0))
      throw registry_error(where + ": " + field + " range is empty (min > max or multiple_of 0)");
  };
  check_spec(c.head_sizes, "head_sizes");
  if (c.value_head_sizes) check_spec(*c.value_head_sizes, "value_head_sizes");
  for (auto m : c.block_size_multiples)
    if (m == 0) throw registry_error(where + ": block size multiple 0");
  for (const auto& f : c.features)
    if (!is_valid_feature_name(f)) throw registry_error(where + ": feature '" + f + "' is not lower_snake");
  for (const auto& pc : c.platforms)
    if (pc.min_capability && pc.max_capability && *pc.max_capability < *pc.min_capability)
      throw registry_error(where + ": platform capability range is inverted");
  for (const auto& r : c.requires_components)
    if (r.name.empty()) throw registry_error(where + ": required component with an empty name");
}

}  // namespace detail

ATTNSEL_INLINE void validate_descriptor(const backend_descriptor& b) {
  if (!is_valid_backend_name(b.name))
    throw registry_error("backend name '" + b.name + "' is not UPPER_SNAKE ([A-Z][A-Z0-9_]*, at most 64 chars)");
  for (const auto& a : b.aliases)
    if (!is_valid_backend_name(a)) throw registry_error("backend " + b.name + ": alias '" + a + "' is not UPPER_SNAKE");
  if (b.domains.empty()) throw registry_error("backend " + b.name + " serves no domain");
  detail::validate_capabilities("backend " + b.name, b.caps);
  for (const auto& v : b.variants) {
    if (v.variant.empty()) throw registry_error("backend " + b.name + ": a variant has no name");
    detail::validate_capabilities("backend " + b.name + " variant " + v.variant, v);
  }
}

ATTNSEL_INLINE void registry::reindex() {
  std::vector<std::pair<std::string, std::size_t>> names;
  for (std::size_t i = 0; i < backends_.size(); ++i) {
    names.emplace_back(backends_[i].name, i);
    for (const auto& a : backends_[i].aliases) names.emplace_back(a, i);
  }
  std::sort(names.begin(), names.end());
  for (std::size_t i = 1; i < names.size(); ++i)
    if (names[i].first == names[i - 1].first)
      throw registry_error("name " + names[i].first + " is used by both " + backends_[names[i - 1].second].name +
                           " and " + backends_[names[i].second].name);

  std::vector<std::vector<std::size_t>> resolved;
  for (std::size_t r = 0; r < policy_.rules.size(); ++r) {
    const auto& rule = policy_.rules[r];
    std::vector<std::size_t> indices;
    for (const auto& e : rule.order) {
      std::array<char, 64> buf{};
      std::string_view upper;
      const bool fits = detail::upper_into(e.backend, buf, upper);
      const auto it = std::lower_bound(names.begin(), names.end(), upper,
                                       [](const auto& p, std::string_view n) { return std::string_view(p.first) < n; });
      if (!fits || it == names.end() || it->first != upper)
        throw registry_error("policy rule " + std::to_string(r) + " (" + rule.describe() + ") names unknown backend " +
                             e.backend);
      if (std::find(indices.begin(), indices.end(), it->second) != indices.end())
        throw registry_error("policy rule " + std::to_string(r) + " (" + rule.describe() + ") lists " + e.backend +
                             " twice");
      indices.push_back(it->second);
    }
    resolved.push_back(std::move(indices));
  }
  names_ = std::move(names);
  resolved_ = std::move(resolved);
}

// Mutations change the registry in place and undo the change if re-indexing throws: reindex()
// commits its results only at its end, so the strong guarantee holds without copying the registry
// (a copy per add made loading a catalog quadratic).
ATTNSEL_INLINE void registry::add(backend_descriptor backend) {
  validate_descriptor(backend);
  backends_.push_back(std::move(backend));
  try {
    reindex();
  } catch (...) {
    backends_.pop_back();
    throw;
  }
}

ATTNSEL_INLINE void registry::replace(backend_descriptor backend) {
  validate_descriptor(backend);
  const auto it = std::find_if(backends_.begin(), backends_.end(),
                               [&](const backend_descriptor& b) { return b.name == backend.name; });
  if (it == backends_.end()) throw registry_error("cannot replace unknown backend " + backend.name);
  std::swap(*it, backend);
  try {
    reindex();
  } catch (...) {
    std::swap(*it, backend);
    throw;
  }
}

ATTNSEL_INLINE void registry::add_or_replace(backend_descriptor backend) {
  const bool exists = std::any_of(backends_.begin(), backends_.end(),
                                  [&](const backend_descriptor& b) { return b.name == backend.name; });
  if (exists)
    replace(std::move(backend));
  else
    add(std::move(backend));
}

ATTNSEL_INLINE void registry::remove(std::string_view name) {
  const auto index = index_of(name);
  if (!index) throw registry_error("cannot remove unknown backend " + std::string(name));
  registry next = *this;
  next.backends_.erase(next.backends_.begin() + static_cast<std::ptrdiff_t>(*index));
  next.reindex();  // throws when a policy entry still names it
  *this = std::move(next);
}

ATTNSEL_INLINE void registry::set_policy(priority_policy policy) {
  std::swap(policy_, policy);
  try {
    reindex();
  } catch (...) {
    std::swap(policy_, policy);
    throw;
  }
}

ATTNSEL_INLINE void registry::prepend_rules(std::vector<policy_rule> rules) {
  priority_policy merged;
  merged.rules = std::move(rules);
  merged.rules.insert(merged.rules.end(), policy_.rules.begin(), policy_.rules.end());
  set_policy(std::move(merged));
}

ATTNSEL_INLINE void registry::merge(const registry& overlay) {
  registry next = *this;
  for (const auto& b : overlay.backends_) {
    const auto it = std::find_if(next.backends_.begin(), next.backends_.end(),
                                 [&](const backend_descriptor& x) { return x.name == b.name; });
    if (it != next.backends_.end())
      *it = b;
    else
      next.backends_.push_back(b);
  }
  std::vector<policy_rule> rules = overlay.policy_.rules;
  rules.insert(rules.end(), next.policy_.rules.begin(), next.policy_.rules.end());
  next.policy_.rules = std::move(rules);
  next.reindex();
  if (!overlay.implications_.empty()) {
    auto implications = next.implications_;
    for (const auto& imp : overlay.implications_) {
      const auto it = std::find_if(implications.begin(), implications.end(),
                                   [&](const component_implication& x) { return x.component == imp.component; });
      if (it != implications.end())
        *it = imp;
      else
        implications.push_back(imp);
    }
    next.set_implications(std::move(implications));
  }
  *this = std::move(next);
}

ATTNSEL_INLINE void registry::set_implications(std::vector<component_implication> implications) {
  const auto problem = implication_problem(implications);
  if (!problem.empty()) throw registry_error("implications: " + problem);
  // One canonical order (by component), so a catalog round-trips through its JSON object exactly.
  std::sort(implications.begin(), implications.end(),
            [](const component_implication& a, const component_implication& b) { return a.component < b.component; });
  implications_ = std::move(implications);
}

ATTNSEL_INLINE std::optional<std::size_t> registry::index_of(std::string_view name) const noexcept {
  std::array<char, 64> buf{};
  std::string_view upper;
  if (!detail::upper_into(name, buf, upper)) return std::nullopt;
  const auto it = std::lower_bound(names_.begin(), names_.end(), upper,
                                   [](const auto& p, std::string_view n) { return std::string_view(p.first) < n; });
  if (it == names_.end() || it->first != upper) return std::nullopt;
  return it->second;
}

ATTNSEL_INLINE const backend_descriptor* registry::find(std::string_view name) const noexcept {
  const auto index = index_of(name);
  return index ? &backends_[*index] : nullptr;
}

ATTNSEL_INLINE std::vector<std::string> registry::all_names() const {
  std::vector<std::string> out;
  out.reserve(names_.size());
  for (const auto& n : names_) out.push_back(n.first);
  return out;
}

ATTNSEL_END_NAMESPACE

// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for registry.hpp: validation, name index and policy resolution.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/registry.hpp>
#endif

#include <attnsel/core/limits.hpp>

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <attnsel/core/impl/text.hpp>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// Swaps `incoming` into `member`, then reindexes; when reindexing throws, `member` is as it was (and
// `incoming` holds what was refused).
template <class T, class Reindex>
void swap_in(T& member, T& incoming, Reindex&& reindex) {
  std::swap(member, incoming);
  try {
    reindex();
  } catch (...) {
    std::swap(member, incoming);
    throw;
  }
}

// Upper-cases `name` into `buf` (names are at most 64 characters); false when it cannot be a name.
inline bool upper_into(std::string_view name, std::array<char, limits::name_length>& buf,
                       std::string_view& out) noexcept {
  if (name.empty() || name.size() > buf.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    buf[i] = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  }
  out = std::string_view(buf.data(), name.size());
  return true;
}

inline void validate_head_sizes(const std::string& where, const head_size_spec& s, std::string_view name) {
  const auto bound = std::to_string(limits::head_size);
  const std::string field(name);
  if (s.form == head_size_spec::kind::set) {
    if (s.values.empty()) throw registry_error(where + ": " + field + " is an empty set (use any)");
    if (s.values.front() == 0 || s.values.back() > limits::head_size)
      throw registry_error(where + ": " + field + " holds a size outside [1, " + bound + "]");
  }
  if (s.form == head_size_spec::kind::range) {
    if (s.min > s.max || s.multiple_of == 0)
      throw registry_error(where + ": " + field + " range is empty (min > max or multiple_of 0)");
    // max == UINT32_MAX is the "unbounded" range the writer leaves out.
    const bool max_ok = s.max <= limits::head_size || s.max == std::numeric_limits<std::uint32_t>::max();
    if (s.min == 0 || s.min > limits::head_size || !max_ok || s.multiple_of > limits::head_size)
      throw registry_error(where + ": " + field + " range " + to_string(s) + " goes outside [1, " + bound + "]");
  }
}

// Each capability field's check, by its type (the field list's codec for validation): a count within
// the field's bound, head sizes within the limits, feature names, platform constraints that can
// match, named components, call rules' head sizes and components. A type with nothing to check (an
// enum or enum set, a name, the call's ranges, which count_range bounds) passes; any other type must
// say how it is checked.
template <class T>
void validate_value(const std::string&, const capability_field&, const T&) {
  static_assert(std::is_enum_v<T>, "a capability field of a new type: say how the registry checks it (validate_value)");
}
template <class E>
void validate_value(const std::string&, const capability_field&, enum_set<E>) {}
inline void validate_value(const std::string&, const capability_field&, const std::string&) {}
inline void validate_value(const std::string&, const capability_field&, const shape_limits&) {}

inline void validate_value(const std::string& where, const capability_field& f, const head_size_spec& s) {
  validate_head_sizes(where, s, f.name);
}

inline void validate_value(const std::string& where, const capability_field& f,
                           const std::optional<head_size_spec>& s) {
  if (s) validate_value(where, f, *s);
}

inline void validate_value(const std::string& where, const capability_field& f,
                           const std::vector<dtype_head_sizes>& by_dtype) {
  for (const auto& d : by_dtype)
    validate_head_sizes(where, d.head_sizes, std::string(f.name) + " " + std::string(to_string(d.dtype)));
}

inline void validate_value(const std::string& where, const capability_field& f, std::uint32_t count) {
  if (f.bound != 0 && count > f.bound)
    throw registry_error(where + ": " + std::string(f.name) + " " + std::to_string(count) + " is above " +
                         std::to_string(f.bound));
}

inline void validate_value(const std::string& where, const capability_field& f,
                           const std::vector<std::uint32_t>& counts) {
  if (f.bound == 0) return;
  for (auto n : counts)
    if (n == 0 || n > f.bound)
      throw registry_error(where + ": " + std::string(f.name) + " holds " + std::to_string(n) + ", outside [1, " +
                           std::to_string(f.bound) + "]");
}

inline void validate_value(const std::string& where, const capability_field&, const feature_set& features) {
  for (const auto& name : features)
    if (!is_valid_feature_name(name))
      throw registry_error(where + ": feature '" + detail::escape_text(name, limits::echoed_text) +
                           "' is not lower_snake");
}

inline void validate_value(const std::string& where, const capability_field&,
                           const std::vector<platform_constraint>& platforms) {
  for (const auto& pc : platforms) {
    if (pc.min_capability && pc.max_capability && *pc.max_capability < *pc.min_capability)
      throw registry_error(where + ": platform capability range is inverted");
    const auto bad = pc.unmatchable_field(pc.vendor);
    if (!bad.empty())
      throw registry_error(where + ": platform " + to_string(pc) + " can never match (" + std::string(bad) + " on " +
                           std::string(to_string(pc.vendor)) + ")");
  }
}

inline void validate_value(const std::string& where, const capability_field&,
                           const std::vector<component_requirement>& components) {
  for (const auto& r : components)
    if (r.name.empty()) throw registry_error(where + ": required component with an empty name");
}

inline void validate_value(const std::string& where, const capability_field& f, const std::vector<call_rule>& rules) {
  for_each_condition(rules, [&](const call_condition& cond, std::string_view role) {
    // The condition's name, built only for a message (a valid catalog loads without it).
    const auto part = [&] {
      std::string name(f.name);
      name += ' ';
      name += role;
      return name;
    };
    if (cond.head_sizes) validate_head_sizes(where, *cond.head_sizes, part() + " head_sizes");
    if (cond.value_head_sizes) validate_head_sizes(where, *cond.value_head_sizes, part() + " value_head_sizes");
    for (const auto& c : cond.components)
      if (c.name.empty()) {
        std::string message = where;
        message += ": ";
        message += part();
        message += " names a component with an empty name";
        throw registry_error(message);
      }
  });
}

// Every field of the capability list through its check. `inherited_features`: the list is the
// backend's own, shared (copy-on-write) and checked already; checking it again per variant made
// loading O(variants x features).
inline void validate_capabilities(const std::string& where, const capabilities& c, bool inherited_features = false) {
  field_list<capabilities>::members([&](const capability_field& f, auto m) {
    const auto& value = c.*decltype(m)::value;
    if constexpr (std::is_same_v<bare_t<decltype(value)>, feature_set>) {
      if (inherited_features) return;
    }
    validate_value(where, f, value);
  });
}

}  // namespace detail

ATTNSEL_INLINE bool detail::registry_reads_call(const registry& reg) noexcept {
  for (const auto& b : reg.backends()) {
    if (b.caps.reads_call() || b.forced_only || !b.advisories.empty()) return true;
    for (const auto& v : b.variants)
      if (v.reads_call()) return true;
  }
  for (const auto& r : reg.policy().rules) {
    if (!r.phases.empty() || !r.shape.empty() || r.measured || !r.head_sizes.empty() || !r.attn_types.empty() ||
        r.forced != forced_handling::honoured)
      return true;
    for (const auto& e : r.order)
      if (!e.phases.empty() || !e.shape.empty()) return true;
  }
  return false;
}

ATTNSEL_INLINE void validate_descriptor(const backend_descriptor& b) {
  if (!is_valid_backend_name(b.name))
    throw registry_error("backend name '" + detail::escape_text(b.name, limits::echoed_text) +
                         "' is not UPPER_SNAKE ([A-Z][A-Z0-9_]*, at most 64 chars)");
  for (const auto& a : b.aliases)
    if (!is_valid_backend_name(a))
      throw registry_error("backend " + b.name + ": alias '" + detail::escape_text(a, limits::echoed_text) +
                           "' is not UPPER_SNAKE");
  if (b.domains.empty()) throw registry_error("backend " + b.name + " serves no domain");
  detail::validate_capabilities("backend " + b.name, b.caps);
  for (const auto& v : b.variants) {
    if (v.variant.empty() || v.variant.size() > limits::name_length)
      throw registry_error("backend " + b.name + ": a variant name is empty or longer than " +
                           std::to_string(limits::name_length) + " characters");
    detail::validate_capabilities(
        "backend " + b.name + " variant " + detail::escape_text(v.variant, limits::echoed_text), v,
        v.features.shares_storage_with(b.caps.features));
  }
  for (std::size_t i = 0; i < b.advisories.size(); ++i) {
    const auto& a = b.advisories[i];
    const auto where = "backend " + b.name + " advisory '" + detail::escape_text(a.id, limits::echoed_text) + "'";
    if (!is_valid_advisory_id(a.id))
      throw registry_error(where + ": the id is not lower-kebab ([a-z0-9][a-z0-9.-]*, at most " +
                           std::to_string(limits::name_length) + " characters)");
    for (std::size_t k = 0; k < i; ++k)
      if (b.advisories[k].id == a.id) throw registry_error(where + " is listed twice");
    if (!a.variant.empty() && std::none_of(b.variants.begin(), b.variants.end(),
                                           [&](const capabilities& v) { return v.variant == a.variant; }))
      throw registry_error(where + " names variant '" + detail::escape_text(a.variant, limits::echoed_text) +
                           "', which the backend does not have");
    if (a.message.empty()) throw registry_error(where + " has no message");
    if (a.upstream.empty()) throw registry_error(where + " cites no upstream issue");
    for (const auto& url : a.upstream)
      if (url.rfind("https://", 0) != 0 || url.size() > limits::url_length)
        throw registry_error(where + ": upstream '" + detail::escape_text(url, limits::echoed_text) +
                             "' is not an https:// URL of at most " + std::to_string(limits::url_length) +
                             " characters");
    for (const auto& pc : a.platforms)
      if (!pc.unmatchable_field(pc.vendor).empty() ||
          (pc.min_capability && pc.max_capability && *pc.max_capability < *pc.min_capability))
        throw registry_error(where + ": platform " + to_string(pc) + " can never match");
    if (a.when.never || a.when.phases.contains(attention_phase::unstated))
      throw registry_error(where + ": its condition can never hold (never, or the phase unstated)");
  }
}

ATTNSEL_INLINE void validate_rule(const policy_rule& r) {
  const auto where = [&] { return "policy rule (" + to_string(r) + ")"; };
  if (r.min_num_heads > limits::num_heads || r.max_num_heads > limits::num_heads)
    throw registry_error(where() + ": num_heads bound above " + std::to_string(limits::num_heads));
  if (r.max_num_heads && r.min_num_heads > r.max_num_heads)
    throw registry_error(where() + ": num_heads range is inverted (max < min)");
  if (r.min_capability && r.max_capability && *r.max_capability < *r.min_capability)
    throw registry_error(where() + ": capability range is inverted");
  // Matching and lint search the head sizes: sorted, each once, each a head size.
  for (std::size_t i = 0; i < r.head_sizes.size(); ++i)
    if (r.head_sizes[i] == 0 || r.head_sizes[i] > max_head_size || (i > 0 && r.head_sizes[i - 1] >= r.head_sizes[i]))
      throw registry_error(where() + ": head_sizes must be distinct sizes in [1, " + std::to_string(max_head_size) +
                           "], sorted");
  const auto bad = r.unmatchable_field(r.vendor);
  if (!bad.empty())
    throw registry_error(where() + " can never match (" + std::string(bad) + " on " + std::string(to_string(r.vendor)) +
                         ")");
  for (const auto* fs : {&r.features, &r.without_features})
    for (const auto& f : *fs)
      if (!is_valid_feature_name(f))
        throw registry_error(where() + ": feature '" + detail::escape_text(f, limits::echoed_text) +
                             "' is not lower_snake");
}

namespace detail {
inline bool name_less(const std::pair<std::string, std::size_t>& p, std::string_view n) noexcept {
  return std::string_view(p.first) < n;
}

inline char upper_char(char c) noexcept { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

// The key of reindex's table of names: the length and three upper-cased characters (a policy entry may
// spell a name in any case; the names are upper case). Equal keys cost a comparison, never a miss.
inline std::uint64_t name_key(std::string_view name) noexcept {
  const auto at = [&](std::size_t i) {
    return static_cast<std::uint64_t>(static_cast<unsigned char>(upper_char(name[i])));
  };
  const std::size_t n = name.size();
  if (n == 0) return 0;
  return (((n * 131U + at(0)) * 131U + at(n / 2)) * 131U + at(n - 1)) * 0x9E3779B97F4A7C15ULL;
}

// The first eight bytes of `name`, big-endian and zero-padded: ordering two keys orders the two names
// unless the keys are equal.
inline std::uint64_t name_prefix(std::string_view name) noexcept {
  std::uint64_t key = 0;
  for (std::size_t i = 0; i < 8; ++i) key = (key << 8U) | (i < name.size() ? static_cast<unsigned char>(name[i]) : 0U);
  return key;
}

// True when `name` upper-cased is `upper`.
inline bool equals_upper(std::string_view name, std::string_view upper) noexcept {
  if (name.size() != upper.size()) return false;
  if (name == upper) return true;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (upper_char(name[i]) != upper[i]) return false;
  return true;
}
}  // namespace detail

ATTNSEL_INLINE void registry::reindex() {
  std::size_t name_count = backends_.size();
  for (const auto& b : backends_) name_count += b.aliases.size();
  // Sorted as views (moving a few words, not strings) keyed by their first eight bytes (most comparisons
  // are one integer comparison, not a call to memcmp), then copied once into the index.
  struct name_view {
    std::uint64_t prefix;
    std::string_view name;
    std::size_t index;
  };
  std::vector<name_view> views;
  views.reserve(name_count);
  for (std::size_t i = 0; i < backends_.size(); ++i) {
    views.push_back({detail::name_prefix(backends_[i].name), backends_[i].name, i});
    for (const auto& a : backends_[i].aliases) views.push_back({detail::name_prefix(a), a, i});
  }
  std::sort(views.begin(), views.end(), [](const name_view& a, const name_view& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const int c = a.name.compare(b.name);
    return c < 0 || (c == 0 && a.index < b.index);
  });
  for (std::size_t i = 1; i < views.size(); ++i)
    if (views[i].name == views[i - 1].name)
      throw registry_error("name " + std::string(views[i].name) + " is used by both " +
                           backends_[views[i - 1].index].name + " and " + backends_[views[i].index].name);
  std::vector<std::pair<std::string, std::size_t>> names;
  names.reserve(views.size());
  for (const auto& v : views) names.emplace_back(v.name, v.index);
  // Policy entries resolve through an open-addressed table of the names (one key, then about one
  // comparison) instead of a binary search each: a catalog's policy lists a hundred entries and more.
  unsigned bits = 4;
  while ((std::size_t{1} << bits) < 2 * views.size()) ++bits;
  const std::size_t mask = (std::size_t{1} << bits) - 1;
  constexpr auto no_name = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> slots(mask + 1, no_name);  // -> position in `views`
  for (std::size_t k = 0; k < views.size(); ++k) {
    auto h = static_cast<std::size_t>(detail::name_key(views[k].name) >> (64 - bits));
    while (slots[h] != no_name) h = (h + 1) & mask;
    slots[h] = k;
  }
  const auto backend_of = [&](std::string_view name) {
    if (name.empty() || name.size() > limits::name_length) return no_name;
    for (auto h = static_cast<std::size_t>(detail::name_key(name) >> (64 - bits)); slots[h] != no_name;
         h = (h + 1) & mask)
      if (detail::equals_upper(name, views[slots[h]].name)) return views[slots[h]].index;
    return no_name;
  };

  std::size_t entry_count = 0;
  for (const auto& rule : policy_.rules) entry_count += rule.order.size();
  std::vector<std::size_t> resolved;
  resolved.reserve(entry_count);
  std::vector<std::size_t> starts;
  starts.reserve(policy_.rules.size());
  std::vector<std::size_t> seen(backends_.size(), std::numeric_limits<std::size_t>::max());
  for (std::size_t r = 0; r < policy_.rules.size(); ++r) {
    const auto& rule = policy_.rules[r];
    starts.push_back(resolved.size());
    for (const auto& e : rule.order) {
      const std::size_t backend = backend_of(e.backend);
      if (backend == no_name)
        throw registry_error("policy rule " + std::to_string(r) + " (" + to_string(rule) + ") names unknown backend " +
                             detail::escape_text(e.backend, limits::echoed_text));
      // `seen` marks the backends this rule already listed (by rule number): linear, no rescans.
      if (seen[backend] == r)
        throw registry_error("policy rule " + std::to_string(r) + " (" + to_string(rule) + ") lists " + e.backend +
                             " twice");
      seen[backend] = r;
      resolved.push_back(backend);
    }
  }
  std::vector<detail::rule_screen> screens;
  screens.reserve(policy_.rules.size());
  for (const auto& rule : policy_.rules) screens.push_back(detail::rule_screen::of(rule));
  names_ = std::move(names);
  resolved_ = std::move(resolved);
  rule_starts_ = std::move(starts);
  screens_ = std::move(screens);
  index_served();
}

ATTNSEL_INLINE void registry::index_rules() {
  screens_.clear();
  screens_.reserve(policy_.rules.size());
  for (const auto& rule : policy_.rules) screens_.push_back(detail::rule_screen::of(rule));
  index_served();
}

ATTNSEL_INLINE void registry::index_served() noexcept {
  // The union of the masks, then its members (for_each per backend walks every enumerator).
  std::uint32_t served = 0;
  for (const auto& b : backends_) served |= b.domains.bits();
  served_ = {};
  for (unsigned d = 0; served != 0; ++d, served >>= 1U)
    if ((served & 1U) != 0) served_.insert(static_cast<attention_domain>(d));
}

ATTNSEL_INLINE const policy_rule* registry::match_rule(const query& q, const platform& p) const noexcept {
  // Reading the call's facts costs about as much as passing over eight rules in full (callgrind: the
  // torch_sdpa catalog's six rules, +7 % with the screen): a short policy is walked as it is.
  if (screens_.size() < detail::rule_screen::worth_from) return policy_.match(q, p);
  const auto facts = detail::call_facts::of(q, p);
  for (std::size_t r = 0; r < screens_.size(); ++r)
    if (screens_[r].passes(facts) && policy_.rules[r].matches(q, p)) return &policy_.rules[r];
  return nullptr;
}

// Adding a backend leaves every index of the resolved policy valid: only its names enter the sorted
// index (binary search, then insertion), so n adds move O(n^2) small pairs at worst and never
// re-sort. Strong guarantee: whatever can throw runs before the first change.
ATTNSEL_INLINE void registry::add(backend_descriptor backend) {
  validate_descriptor(backend);
  std::vector<std::pair<std::string, std::size_t>> added;
  added.reserve(1 + backend.aliases.size());
  added.emplace_back(backend.name, backends_.size());
  for (const auto& a : backend.aliases) added.emplace_back(a, backends_.size());
  std::sort(added.begin(), added.end());
  for (std::size_t i = 0; i < added.size(); ++i) {
    if (i > 0 && added[i].first == added[i - 1].first)
      throw registry_error("name " + added[i].first + " is used twice by backend " + backend.name);
    const auto it = std::lower_bound(names_.begin(), names_.end(), added[i].first, detail::name_less);
    if (it != names_.end() && it->first == added[i].first)
      throw registry_error("name " + added[i].first + " is used by both " + backends_[it->second].name + " and " +
                           backend.name);
  }
  names_.reserve(names_.size() + added.size());
  backend.domains.for_each([&](attention_domain d) { served_.insert(d); });
  backends_.push_back(std::move(backend));
  // Capacity is reserved and pairs move without throwing: these insertions cannot fail.
  for (auto& n : added) {
    const auto it = std::lower_bound(names_.begin(), names_.end(), n.first, detail::name_less);
    names_.insert(it, std::move(n));
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

ATTNSEL_INLINE void registry::add_or_replace_all(std::vector<backend_descriptor> list) {
  for (const auto& b : list) validate_descriptor(b);
  // Both name lists sorted once and walked together: O(n log n) however many backends, no hashing.
  // A name given twice in `list` keeps the place of its first occurrence and the content of its last.
  const auto sorted_by_name = [](const std::vector<backend_descriptor>& v) {
    std::vector<std::size_t> order(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) order[i] = i;
    // Ties broken by position (a stable order without stable_sort's temporary buffer).
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      const int c = v[x].name.compare(v[y].name);
      return c < 0 || (c == 0 && x < y);
    });
    return order;
  };
  std::vector<backend_descriptor> next;
  next.reserve(backends_.size() + list.size());
  next = backends_;
  const auto existing = sorted_by_name(next);
  const auto incoming = sorted_by_name(list);
  std::vector<std::pair<std::size_t, std::size_t>> appended;  // (first occurrence, last occurrence) in `list`
  for (std::size_t k = 0; k < incoming.size();) {
    std::size_t last = k;
    while (last + 1 < incoming.size() && list[incoming[last + 1]].name == list[incoming[k]].name) ++last;
    const std::string& name = list[incoming[k]].name;
    const auto it = std::lower_bound(existing.begin(), existing.end(), name,
                                     [&](std::size_t i, const std::string& n) { return next[i].name < n; });
    if (it != existing.end() && next[*it].name == name)
      next[*it] = std::move(list[incoming[last]]);  // same name: the sorted order stays valid
    else
      appended.emplace_back(incoming[k], incoming[last]);
    k = last + 1;
  }
  std::sort(appended.begin(), appended.end());
  for (const auto& a : appended) next.push_back(std::move(list[a.second]));
  detail::swap_in(backends_, next, [this] { reindex(); });
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
  for (const auto& r : policy.rules) validate_rule(r);
  detail::swap_in(policy_, policy, [this] { reindex(); });
}

ATTNSEL_INLINE void registry::prepend_rules(std::vector<policy_rule> rules) {
  priority_policy merged;
  merged.rules = std::move(rules);
  merged.rules.insert(merged.rules.end(), policy_.rules.begin(), policy_.rules.end());
  set_policy(std::move(merged));
}

ATTNSEL_INLINE void registry::merge(const registry& overlay) {
  registry next = *this;
  next.add_or_replace_all(overlay.backends_);
  next.prepend_rules(overlay.policy_.rules);
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

namespace detail {
// One canonical order of implications (by component), so a catalog round-trips through its JSON object
// exactly; both ways into a registry use it.
inline void sort_by_component(std::vector<component_implication>& implications) {
  std::sort(implications.begin(), implications.end(),
            [](const component_implication& a, const component_implication& b) { return a.component < b.component; });
}
}  // namespace detail

ATTNSEL_INLINE registry registry::from_validated(detail::validated_catalog, std::vector<backend_descriptor> backends,
                                                 priority_policy policy,
                                                 std::vector<component_implication> implications) {
  registry out;
  out.backends_ = std::move(backends);
  out.policy_ = std::move(policy);
  out.reindex();
  detail::sort_by_component(implications);
  out.implications_ = std::move(implications);
  return out;
}

ATTNSEL_INLINE registry registry::from_validated(detail::validated_catalog, std::vector<backend_descriptor> backends,
                                                 priority_policy policy,
                                                 std::vector<component_implication> implications,
                                                 detail::catalog_index index) {
  registry out;
  out.backends_ = std::move(backends);
  out.policy_ = std::move(policy);
  out.names_ = std::move(index.names);
  out.resolved_ = std::move(index.resolved);
  out.rule_starts_ = std::move(index.rule_starts);
  out.index_rules();
  detail::sort_by_component(implications);
  out.implications_ = std::move(implications);
  return out;
}

ATTNSEL_INLINE void registry::set_implications(std::vector<component_implication> implications) {
  const auto problem = implication_problem(implications);
  if (!problem.empty()) throw registry_error("implications: " + problem);
  detail::sort_by_component(implications);
  implications_ = std::move(implications);
}

ATTNSEL_INLINE std::optional<std::size_t> registry::index_of(std::string_view name) const noexcept {
  std::array<char, limits::name_length> buf{};
  std::string_view upper;
  if (!detail::upper_into(name, buf, upper)) return std::nullopt;
  const auto it = std::lower_bound(names_.begin(), names_.end(), upper, detail::name_less);
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

// SPDX-License-Identifier: Apache-2.0
// The registry: an ordinary value holding backend descriptors and the priority policy.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/descriptor.hpp>
#include <attnsel/core/implication.hpp>
#include <attnsel/core/policy.hpp>

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// Thrown by registry mutations that would break an invariant (duplicate or malformed names,
/// policies naming unknown backends). The registry is left exactly as it was.
class registry_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
// The key of registry::from_validated: only the builder of compiled-in catalogs names it.
struct validated_catalog {
  explicit validated_catalog() = default;
};
// What registry::reindex computes of a catalog, computed ahead by the generator of compiled-in catalogs.
struct catalog_index {
  std::vector<std::pair<std::string, std::size_t>> names;  // every name and alias, sorted -> backend index
  std::vector<std::size_t> resolved;                       // every rule's entries' backend indices, rule after rule
  std::vector<std::size_t> rule_starts;                    // rule -> its first entry in `resolved`
};
}  // namespace detail

/// Backend descriptors plus the policy that orders them. No hidden singleton: an engine builds one
/// (often from `reference_registry()`), adds its own kernels and passes it to `select`.
/// Registration order is the fallback priority when no policy rule matches.
/// Every mutation gives the strong guarantee: on exception nothing changed.
/// Not synchronised; share it between threads through `shared_registry` (shared_registry.hpp).
class registry {
 public:
  registry() = default;

  /// Appends `backend`. Throws registry_error on an invalid or duplicate name or alias, no domains,
  /// or an inconsistent capability (empty head-size set, min > max, zero block-size multiple).
  void add(backend_descriptor backend);
  /// Replaces the backend of the same canonical name, keeping its position. Throws if absent.
  void replace(backend_descriptor backend);
  /// `replace` when the name exists, else `add`.
  void add_or_replace(backend_descriptor backend);
  /// `add_or_replace` for many backends at once, in order, indexing once at the end: O(n log n) in
  /// the number of names (catalog loaders use it). All or nothing.
  void add_or_replace_all(std::vector<backend_descriptor> list);
  /// Removes a backend. Throws if absent or if a policy entry still names it.
  void remove(std::string_view name);

  /// Replaces the whole policy. Throws registry_error when an entry names an unknown backend.
  void set_policy(priority_policy policy);
  /// Puts `rules` in front of the current ones, so they win where they match.
  void prepend_rules(std::vector<policy_rule> rules);

  /// Replaces the component implications (catalog data; `close_platform` applies them). Throws
  /// registry_error with `implication_problem`'s text when the table is malformed.
  void set_implications(std::vector<component_implication> implications);

  /// Adds or replaces every backend of `overlay` (by name) and puts its rules in front of ours; its
  /// implications replace ours for the same component and add the others.
  /// An engine's own catalog file layered on the reference one uses this.
  void merge(const registry& overlay);

  /// Case-insensitive look-up by canonical name or alias; nullptr if unknown. Allocates nothing.
  [[nodiscard]] const backend_descriptor* find(std::string_view name) const noexcept;
  /// Position of a backend (by name or alias) in `backends()`.
  [[nodiscard]] std::optional<std::size_t> index_of(std::string_view name) const noexcept;

  [[nodiscard]] const std::vector<backend_descriptor>& backends() const noexcept { return backends_; }
  [[nodiscard]] const priority_policy& policy() const noexcept { return policy_; }
  /// Component implications, sorted by implying component.
  [[nodiscard]] const std::vector<component_implication>& implications() const noexcept { return implications_; }
  [[nodiscard]] std::size_t size() const noexcept { return backends_.size(); }
  [[nodiscard]] bool empty() const noexcept { return backends_.empty(); }
  /// True when some backend serves `domain`.
  [[nodiscard]] bool serves(attention_domain domain) const noexcept { return served_.contains(domain); }
  /// The domain whose backends and rules select for `domain`: itself, or the decoder for a drafter that
  /// no backend serves (a catalog that states nothing of its drafter drafts as its decoder).
  [[nodiscard]] attention_domain selecting_domain(attention_domain domain) const noexcept {
    return domain == attention_domain::drafter && !serves(domain) ? attention_domain::decoder : domain;
  }

  /// For catalogs compiled in by tools/codegen (`reference_registry()` and the other built-ins), whose
  /// generator loaded every descriptor, rule and implication through the checking loader: takes them
  /// as they are and only indexes them, once. Duplicate names and unknown policy entries still throw.
  [[nodiscard]] static registry from_validated(detail::validated_catalog, std::vector<backend_descriptor> backends,
                                               priority_policy policy, std::vector<component_implication> implications);
  /// As above, with the name index and resolved policy the generator computed (what reindex would build),
  /// taken unchecked: tests/test_builtin_tables.cpp compares them with reindex's.
  [[nodiscard]] static registry from_validated(detail::validated_catalog, std::vector<backend_descriptor> backends,
                                               priority_policy policy, std::vector<component_implication> implications,
                                               detail::catalog_index index);

  /// The first rule of the policy that matches the call: `policy().match(q, p)`, each rule screened first by
  /// its cheapest tests (detail::rule_screen), kept from the last change of the policy. Allocates nothing.
  [[nodiscard]] const policy_rule* match_rule(const query& q, const platform& p) const noexcept;
  /// Backend index of entry `entry` of rule `rule` (both positions in `policy().rules`).
  [[nodiscard]] std::size_t resolved(std::size_t rule, std::size_t entry) const noexcept {
    return resolved_[rule_starts_[rule] + entry];
  }

  /// Every canonical name and alias, sorted (for "valid options are" messages).
  [[nodiscard]] std::vector<std::string> all_names() const;

  friend bool operator==(const registry& a, const registry& b) {
    return a.backends_ == b.backends_ && a.policy_ == b.policy_ && a.implications_ == b.implications_;
  }
  friend bool operator!=(const registry& a, const registry& b) { return !(a == b); }

 private:
  // Rebuilds the name index and the resolved policy; throws registry_error on a broken invariant.
  void reindex();
  // The part of reindex that needs no name look-up: the rule screens, then index_served.
  void index_rules();
  // Sets served_ from the backends' domains.
  void index_served() noexcept;

  std::vector<backend_descriptor> backends_;
  priority_policy policy_;
  std::vector<std::pair<std::string, std::size_t>> names_;  // sorted: name or alias -> index
  std::vector<std::size_t> resolved_;                       // every rule's entries' backend indices, rule after rule
  std::vector<std::size_t> rule_starts_;                    // rule -> its first entry in resolved_
  std::vector<detail::rule_screen> screens_;                // rule -> its packed cheap tests
  std::vector<component_implication> implications_;
  domain_set served_;  // the union of the backends' domains
};

/// Throws registry_error with a precise message when `backend` is malformed (used by `add`, and by
/// catalog loaders before they touch a registry). Enforces the bounds of limits.hpp, so a registry
/// holds nothing the catalog loader would refuse.
void validate_descriptor(const backend_descriptor& backend);

namespace detail {
/// True when `reg` uses a catalog format 2 field: a variant or a policy condition reads the call, a rule
/// states `forced`, or a backend is `forced_only`.
[[nodiscard]] bool registry_reads_call(const registry& reg) noexcept;
}  // namespace detail

/// Throws registry_error when `rule` holds a value the catalog loader would refuse: a head-count
/// bound past `limits::num_heads` or inverted, an arch filter no device of its vendor can pass, a
/// feature name that is not lower_snake. (Entry names resolve case-insensitively here; catalog files
/// spell them UPPER_SNAKE.) Used by `set_policy` and `prepend_rules`.
void validate_rule(const policy_rule& rule);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/impl/implication_inl.hpp>
#  include <attnsel/core/impl/registry_inl.hpp>
#endif

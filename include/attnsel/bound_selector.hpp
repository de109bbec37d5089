// SPDX-License-Identifier: Apache-2.0
// The platform-bound selector: decides once what depends only on the platform, then selects per query.
#pragma once

#include <attnsel/checks.hpp>
#include <attnsel/config.hpp>
#include <attnsel/decision_cache.hpp>
#include <attnsel/override.hpp>
#include <attnsel/registry.hpp>
#include <attnsel/selector.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// Options of a platform-bound `selector`.
struct selector_options {
  select_options select;           ///< as for the free `select` (prefer mode)
  bool cache = true;               ///< remember successful decisions per complete query
  std::size_t cache_slots = 1024;  ///< rounded up to a power of two; bounded, old entries are replaced
};

namespace detail {

// Feature names as bits of the selector's dictionary (every feature any variant, rule or entry names).
using feature_words = std::array<std::uint64_t, 2>;

// One backend as the platform sees it, per domain: the variant the platform gates resolved, or why not.
struct bound_backend {
  const capabilities* variant = nullptr;
  bool usable = false;       // every domain and platform gate passed
  feature_words declared{};  // the variant's features
};

// One entry of a rule's order with its platform condition decided.
struct bound_entry {
  std::uint32_t backend = 0;
  bool enabled_on_platform = true;
  feature_words unless_features{};
};

// A rule whose platform half matches; only its query half is left to test.
struct bound_rule {
  const policy_rule* rule = nullptr;
  feature_words features{};          // the query must require all of these
  feature_words without_features{};  // and none of these
  std::vector<bound_entry> order;
};

// An override entry, resolved to a registry index.
struct bound_token {
  override_token::kind type = override_token::kind::automatic;
  std::uint32_t backend = 0;
};

// Everything the selector decided for one domain.
struct bound_domain {
  std::vector<bound_backend> backends;            // by registry index
  std::vector<bound_rule> rules;                  // in policy order
  std::vector<std::uint32_t> registration_order;  // backends serving the domain, when no rule matches
  std::string spec;                               // the override, owned
  override_source source = override_source::none;
  bool plan_ok = true;
  bool automatic = true;
  bool explicit_auto = false;
  bool has_forced = false;
  index_set excluded;
  std::vector<bound_token> tokens;
};

struct bound_state {
  const registry* reg = nullptr;
  platform plat;
  selector_options options;
  std::array<bound_domain, 2> domains;     // decoder, encoder
  std::vector<std::string> feature_names;  // every feature any gate or rule reads, sorted: cache key bits
  std::vector<std::pair<std::uint64_t, std::size_t>> feature_heads;  // each name's first 8 bytes and size
  bool feature_names_valid = true;              // all lower_snake, so a query using only these is valid there
  mutable std::optional<decision_cache> cache;  // a cache: filled by const select()
};

}  // namespace detail

/// A selector bound to one registry, one platform and one set of overrides. Built once (an engine
/// does it at start-up), it decides everything that depends only on the platform: per domain the
/// candidates in trial order, each one's variant, the policy rules whose platform half matches, the
/// policy entries' component conditions, the component checks and the parsed override. `select(q)`
/// then runs only the checks that read the query, and with the cache on, only a table look-up for a
/// query it has seen. Results, reasons and errors are exactly those of the free `select`.
///
/// The registry must outlive the selector and stay unchanged (rebuild the selector after a change).
/// `select` and `explain` may be called from many threads at once. Custom checks (`extra_check`) are
/// assumed to depend only on (variant, query, platform), as everywhere else.
class selector {
 public:
  /// Binds `reg` and `p` with per-domain overrides.
  selector(const registry& reg, platform p, const override_set& overrides = {}, selector_options options = {});
  /// Binds `reg` and `p` with one override for both domains (as the free `select` with a request).
  selector(const registry& reg, platform p, const override_request& ovr, selector_options options = {});

  /// Same answer as `attnsel::select(reg, q, p, override, options)`. A success allocates nothing.
  [[nodiscard]] selection_result select(const query& q) const;
  /// As `select`, but throws selection_exception on failure.
  [[nodiscard]] selection select_or_throw(const query& q) const;
  /// Same answer as `attnsel::explain` for the bound registry, platform and override.
  [[nodiscard]] explanation explain(const query& q) const;

  [[nodiscard]] const registry& bound_registry() const noexcept { return *state_.reg; }
  [[nodiscard]] const platform& bound_platform() const noexcept { return state_.plat; }
  /// The override bound for `domain` (a view into the selector).
  [[nodiscard]] override_request bound_override(attention_domain domain) const noexcept;
  [[nodiscard]] bool cache_enabled() const noexcept { return state_.cache.has_value(); }
  /// Hits and misses of the decision cache (zero when it is off).
  [[nodiscard]] cache_stats stats() const noexcept { return state_.cache ? state_.cache->stats() : cache_stats{}; }
  /// Forgets every cached decision. Not safe while another thread selects.
  void clear_cache() noexcept {
    if (state_.cache) state_.cache->clear();
  }

 private:
  // Walks the precomputed candidates; returns the packed answer (see impl) or 0 when the fast path
  // cannot answer alone (no winner, or prefer mode fell back).
  [[nodiscard]] std::uint64_t decide(const detail::bound_domain& d, const query& q,
                                     const detail::feature_words& required) const;
  // The query's required features as dictionary bits; false when one is not in the dictionary.
  [[nodiscard]] bool feature_words_of(const query& q, detail::feature_words& out) const noexcept;
  // The free select's answer: errors, bad overrides and queries, prefer-mode fallbacks.
  [[nodiscard]] selection_result delegate(const detail::bound_domain& d, const query& q) const;
  [[nodiscard]] selection_result answer(const detail::bound_domain& d, std::uint64_t packed) const;

  detail::bound_state state_;  // holds no views into itself, so a selector moves freely
};

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/impl/bound_selector_inl.hpp>
#endif

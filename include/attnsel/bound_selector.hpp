// SPDX-License-Identifier: Apache-2.0
// The platform-bound selector: decides once what depends only on the platform, then selects per query.
#pragma once

#include <attnsel/checks.hpp>
#include <attnsel/config.hpp>
#include <attnsel/decision_cache.hpp>
#include <attnsel/impl/query_gates.hpp>
#include <attnsel/override.hpp>
#include <attnsel/registry.hpp>
#include <attnsel/selector.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
// The most names a dictionary may have for the selector to cache: the cache key keeps the query's
// enums in the feature words' top 40 bits.
constexpr std::size_t cache_feature_limit = 88;

// One backend as a domain's walk sees it: its resolved variant's query gates compiled, or why not.
struct bound_candidate {
  const backend_descriptor* backend = nullptr;  // the registry's descriptor
  query_gates gates;                            // gates.variant is null when no variant resolved
  bool usable = false;                          // every domain and platform gate passed
  bool serves = false;                          // the backend serves the domain (the order when no rule matches)
};

// One entry of a rule's order with everything but its feature condition decided.
struct bound_entry {
  std::uint32_t backend = 0;
  bool skip = false;  // excluded, forced before the automatic walk, or its platform condition fails
  feature_words unless_features{};
};

// A rule whose platform half matches; only its query half is left to test.
struct bound_rule {
  std::uint64_t accepts = 0;        // query words (query_gates.hpp) its mode, dtype and kv fields match
  std::uint32_t min_num_heads = 0;  // as policy_rule; both 0: any
  std::uint32_t max_num_heads = 0;
  feature_words features{};          // the query must require all of these
  feature_words without_features{};  // and none of these
  std::vector<bound_entry> order;
};

// A name entry of the override (resolved to a registry index) or "auto"; exclusions are folded into
// the skip flags.
struct bound_token {
  bool automatic = false;
  std::uint32_t backend = 0;
};

// A dictionary slot: a feature name's first 8 bytes and size, and its bit + 1 (0: empty slot).
struct feature_slot {
  std::uint64_t head = 0;
  std::uint32_t size = 0;
  std::uint32_t bit_plus_one = 0;
};

// Everything the selector decided for one domain.
struct bound_domain {
  std::vector<bound_candidate> candidates;        // by registry index
  std::vector<bound_rule> rules;                  // in policy order
  std::vector<std::uint32_t> registration_order;  // serving backends not skipped, when no rule matches
  std::vector<bound_token> tokens;
  std::string spec;  // the override, owned
  override_source source = override_source::none;
  override_source answer_source = override_source::none;  // a selection's source: none without a spec
  bool plan_ok = true;
  bool automatic = true;
  bool explicit_auto = false;
  bool has_forced = false;
};

struct bound_state {
  const registry* reg = nullptr;
  platform plat;
  selector_options options;
  std::array<bound_domain, 2> domains;          // decoder, encoder
  std::vector<std::string> feature_names;       // every feature any gate or rule reads, sorted: cache key bits
  std::vector<feature_slot> feature_table;      // open addressing over feature_names, a power of two in size
  bool feature_names_valid = true;              // all lower_snake, so a query using only these is valid there
  memo_owner memo_id{};                         // this selector's name in a query feature list's memo
  mutable std::optional<decision_cache> cache;  // a cache: filled by const select()
};

}  // namespace detail

/// A successful selection as a small, trivially copyable value: the hot path of an engine that needs
/// only the winner. `selector::decide` returns it; an empty one (`backend == nullptr`) means
/// `select` fails for that query, and `select` then gives the error with every reason.
struct decision {
  const backend_descriptor* backend = nullptr;  ///< the winner; null when select() fails
  const capabilities* variant = nullptr;        ///< the capabilities that were checked
  std::uint32_t rank = 0;                       ///< 1-based trial position of the winner
  bool overridden = false;                      ///< chosen because the override named it
  bool fell_back = false;                       ///< prefer mode: forced backends failed (`select` records why)
  override_source source = override_source::none;

  explicit operator bool() const noexcept { return backend != nullptr; }
  [[nodiscard]] std::string_view name() const noexcept { return backend ? std::string_view(backend->name) : ""; }
};

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
  /// The winner `select(q)` picks, as a trivially copyable `decision` (empty when `select` fails):
  /// the fields of `selection` but the prefer-mode trace. Allocates nothing when it succeeds; with the
  /// cache on, a query seen before costs a table look-up.
  [[nodiscard]] decision decide(const query& q) const;
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
  // The packed answer (see impl) for `q`: from the cache, or by walking the precomputed candidates.
  // 0 when only the free select answers (no winner, a query or override the fast path does not take).
  [[nodiscard]] std::uint64_t fast_answer(const detail::bound_domain& d, const query& q) const noexcept;
  // A cache miss: validates, walks and stores. Out of line, so a hit saves no registers for it.
  [[nodiscard]] std::uint64_t miss(const detail::bound_domain& d, const query& q, const detail::feature_words& required,
                                   const cache_key& key) const noexcept;
  // True when the walk may answer `q` (a valid query, a valid override).
  [[nodiscard]] bool valid_for_walk(const detail::bound_domain& d, const query& q) const noexcept;
  // Walks the precomputed candidates; the packed answer or 0 when no candidate passes.
  [[nodiscard]] std::uint64_t walk(const detail::bound_domain& d, const query& q,
                                   const detail::query_facts& facts) const noexcept;
  // The query's required features as dictionary bits; false when one is not in the dictionary.
  [[nodiscard]] bool feature_words_of(const query& q, detail::feature_words& out) const noexcept;
  // The free select's answer: errors, bad overrides and queries, prefer-mode fallbacks. Out of line.
  [[nodiscard]] selection_result delegate(const detail::bound_domain& d, const query& q) const;
  // decide() when only the free select answers. Out of line.
  [[nodiscard]] decision delegate_decision(const detail::bound_domain& d, const query& q) const;
  [[nodiscard]] static selection_result answer(const detail::bound_domain& d, std::uint64_t packed);
  [[nodiscard]] static decision answer_decision(const detail::bound_domain& d, std::uint64_t packed) noexcept;
  // The precomputed half of the query's domain.
  [[nodiscard]] const detail::bound_domain& domain_of(const query& q) const noexcept;
  // The query's feature bits when its list's memo holds them for this selector (or it has none).
  [[nodiscard]] bool remembered_words(const query& q, detail::feature_words& out) const noexcept;
  // A cache miss after the inlined look-up: the walk and the store (the key recomputed). Out of line.
  [[nodiscard]] std::uint64_t miss_after_look_up(const detail::bound_domain& d, const query& q) const noexcept;
  // Everything select() and decide() do past an inlined cache hit (`packed` 0: no answer yet;
  // `looked_up`: the cache was asked already).
  [[nodiscard]] selection_result select_rest(const detail::bound_domain& d, const query& q, std::uint64_t packed,
                                             bool looked_up) const;
  [[nodiscard]] decision decide_rest(const detail::bound_domain& d, const query& q, bool looked_up) const;

  detail::bound_state state_;  // holds no views into itself, so a selector moves freely
};

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/impl/bound_selector_inl.hpp>
#endif

// SPDX-License-Identifier: Apache-2.0
// The platform-bound selector: decides once what depends only on the platform, then selects per query.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/override.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>
#include <attnsel/core/registry.hpp>
#include <attnsel/core/select.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

ATTNSEL_BEGIN_NAMESPACE

/// Options of a platform-bound `selector`.
struct selector_options {
  select_options select;  ///< as for the free `select` (prefer mode)
  bool cache = true;      ///< remember successful decisions per complete query
  /// Rounded up to a power of two and clamped to [1, max_cache_slots]; bounded, old entries are replaced.
  std::size_t cache_slots = 1024;
  /// The most slots a cache takes (72 bytes each on 64-bit targets: 65,536 slots are 4.5 MiB).
  static constexpr std::size_t max_cache_slots = std::size_t{1} << 16;
};

/// Hit and miss counts of a selector's decision cache since it was built or cleared.
struct cache_stats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;  ///< look-ups that found nothing (the answer was then computed)
};

namespace detail {
struct bound_state;  // what the selector decided once (core/impl/selector_inl.hpp)
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
  const advisory* warning = nullptr;  ///< as `selection::warning`

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
  /// A moved-from selector may only be destroyed or assigned to.
  selector(selector&& other) noexcept;
  selector& operator=(selector&& other) noexcept;
  selector(const selector&) = delete;
  selector& operator=(const selector&) = delete;
  ~selector();

  /// Same answer as `attnsel::select(reg, q, p, override, options)`. A success allocates nothing.
  [[nodiscard]] selection_result select(const query& q) const;
  /// As `select`, but throws selection_exception on failure.
  [[nodiscard]] selection select_or_throw(const query& q) const;
  /// The winner `select(q)` picks, as a trivially copyable `decision` (empty when `select` fails):
  /// the fields of `selection` but the prefer-mode trace. Allocates nothing when it succeeds; with the
  /// cache on, a query seen before costs a table look-up. "Seen" is by value: an equal query built afresh
  /// (its own feature_set of equal names) hits.
  [[nodiscard]] decision decide(const query& q) const;
  /// Same answer as `attnsel::explain` for the bound registry, platform and override.
  [[nodiscard]] explanation explain(const query& q) const;

  [[nodiscard]] const registry& bound_registry() const noexcept;
  /// The bound platform, closed under the registry's implications.
  [[nodiscard]] const platform& bound_platform() const noexcept;
  /// The override bound for `domain` (a view into the selector).
  [[nodiscard]] override_request bound_override(attention_domain domain) const noexcept;
  [[nodiscard]] bool cache_enabled() const noexcept;
  /// Hits and misses of the decision cache (zero when it is off). Counted per thread shard without a
  /// locked instruction: exact while no two threads share a shard (the first 64 threads of a process
  /// that look up get one each); beyond that, a count racing another on a shared shard may be lost.
  [[nodiscard]] cache_stats stats() const noexcept;
  /// Forgets every cached decision. Not safe while another thread selects.
  void clear_cache() noexcept;

 private:
  detail::bound_state* state_;  // owned; holds no views into itself, so a selector moves freely
};

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/impl/selector_inl.hpp>
#endif

// SPDX-License-Identifier: Apache-2.0
// The selector: the only code that walks descriptors and policy to pick a backend, and explains it.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/checks.hpp>
#include <attnsel/core/measurement.hpp>
#include <attnsel/core/override.hpp>
#include <attnsel/core/registry.hpp>

#include <cstddef>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {
struct bound_result;  // builds the bound selector's results in place (core/impl/selector_inl.hpp)
}  // namespace detail

class selector;  // selector.hpp

/// Selection options.
struct select_options {
  /// Opt-in "prefer" mode: when every backend the override names is rejected, fall back to automatic
  /// selection instead of failing, and record why in `selection::fallback`. Off by default: a forced
  /// backend is never silently replaced.
  bool prefer = false;
  /// Opt-in: a backend with a warning advisory that holds for the call (`advisory`, action `warn`) is
  /// refused as one the engine demotes is (reason `advisory`). Off by default: the engine runs it and the
  /// selection carries the advisory (`selection::warning`).
  bool refuse_advisories = false;
};

/// One candidate in a trace: its place, verdict and every reason.
struct candidate_report {
  std::string name;
  std::string variant;   ///< the variant that was checked; empty if none applied
  std::size_t rank = 0;  ///< 1-based order of trial; 0 for backends that were not tried
  verdict outcome = verdict::skipped;
  bool forced = false;  ///< named by the override
  std::vector<reason> reasons;
  /// Its time, when a measured policy rule (`attnsel tune`) gave the order; explain fills it.
  std::optional<measured_time> measured{};
  /// Warning advisories that hold for a backend that passed its checks (code `advisory`); explain fills it.
  std::vector<reason> warnings{};
};

/// A successful selection. Pointers refer into the registry it was made from and stay valid while
/// that registry is alive and unchanged (a `shared_registry` snapshot keeps it alive).
struct selection {
  const backend_descriptor* backend = nullptr;
  const capabilities* variant = nullptr;           ///< the capabilities that were checked
  std::size_t rank = 0;                            ///< 1-based trial position of the winner
  bool overridden = false;                         ///< chosen because the override named it
  override_source source = override_source::none;  ///< where the override came from (none if no override)
  bool fell_back = false;                          ///< prefer mode: forced backends failed, automatic choice used
  std::vector<candidate_report> fallback;          ///< prefer mode: why each forced backend was rejected
  /// The first warning advisory of the chosen backend that holds for the call (a known-bad combination
  /// the engine runs anyway), or nullptr; explain lists every one. Points into the registry.
  const advisory* warning = nullptr;

  [[nodiscard]] std::string_view name() const noexcept { return backend ? std::string_view(backend->name) : ""; }
  [[nodiscard]] std::string_view variant_name() const noexcept {
    return variant ? std::string_view(variant->variant) : "";
  }
  /// vLLM's block-size negotiation: `current` if the chosen kernel accepts it, else its preferred size,
  /// else its smallest supported multiple.
  [[nodiscard]] std::uint32_t block_size_for(std::uint32_t current) const noexcept;
};

/// A failed selection, with everything needed to act on it.
struct selection_error {
  error_code code = error_code::no_backend;
  std::string message;                       ///< one paragraph; the first line is a summary
  std::vector<candidate_report> candidates;  ///< every candidate tried, with all reasons
  std::vector<std::string> suggestions;      ///< backends that would work for this query (validated)
};

/// Exception thrown by `select_or_throw`.
class selection_exception : public std::runtime_error {
 public:
  explicit selection_exception(selection_error e) : std::runtime_error(e.message), error_(std::move(e)) {}
  [[nodiscard]] const selection_error& error() const noexcept { return error_; }

 private:
  selection_error error_;
};

/// Either a selection or an error. Cheap to move; test with `ok()` or `operator bool`. A success is
/// held in place and an error on the heap (the error path allocates anyway), so building, reading and
/// destroying a success is a handful of instructions: the bound selector's cache hit returns one.
class selection_result {
 public:
  selection_result(selection s) noexcept {
    new (&value_) selection(std::move(s));
  }                                    // NOLINT(google-explicit-constructor)
  selection_result(selection_error e)  // NOLINT(google-explicit-constructor)
      : error_(new selection_error(std::move(e))) {
    new (&value_) selection();
  }
  selection_result(const selection_result& other)
      : error_(other.error_ ? new selection_error(*other.error_) : nullptr) {
    new (&value_) selection(other.value_);
  }
  selection_result(selection_result&& other) noexcept : error_(other.error_) {
    new (&value_) selection(std::move(other.value_));
    other.error_ = nullptr;
  }
  selection_result& operator=(const selection_result& other) {
    if (this != &other) *this = selection_result(other);
    return *this;
  }
  selection_result& operator=(selection_result&& other) noexcept {
    if (this != &other) {
      delete error_;
      value_ = std::move(other.value_);
      error_ = other.error_;
      other.error_ = nullptr;
    }
    return *this;
  }
  // Inline and two tests for the usual success: nothing to free unless an error or a prefer-mode
  // trace was stored.
  ~selection_result() {
    if (error_ != nullptr || value_.fallback.capacity() != 0) release();
  }

  [[nodiscard]] bool ok() const noexcept { return error_ == nullptr; }
  explicit operator bool() const noexcept { return ok(); }
  /// The selection; throws selection_exception (with the error) when !ok().
  [[nodiscard]] const selection& value() const {
    if (error_ != nullptr) throw_error();
    return value_;
  }
  /// The error; throws std::logic_error when ok().
  [[nodiscard]] const selection_error& error() const {
    if (error_ == nullptr) throw_no_error();
    return *error_;
  }
  [[nodiscard]] const selection* operator->() const { return &value(); }

 private:
  friend struct detail::bound_result;
  selection_result() noexcept { new (&value_) selection(); }  // an empty success: the bound selector fills it

  [[noreturn]] void throw_error() const;
  [[noreturn]] static void throw_no_error();
  void release() noexcept;  // destroys what the destructor's tests found to free

  // A union member, so the destructor can skip selection's (out-of-line) destructor when its one
  // vector never allocated: a vector without storage owns nothing.
  union {
    selection value_;  // meaningful when error_ is null
  };
  selection_error* error_ = nullptr;  // owned; set exactly when the selection failed
};

/// A limit or policy condition the answer depends on that reads a field the query left unstated
/// (format 2): with that field stated, the answer may differ.
struct unstated_dependency {
  std::string subject;    ///< `CUDNN_ATTENTION/SM90`, `policy rule decoder cuda phase decode`, `policy entry X`
  std::string fields;     ///< the unstated fields it reads: `seq_len_q, seq_len_kv`
  std::string condition;  ///< the limit or condition: `seq_len_kv [2, any]`

  friend bool operator==(const unstated_dependency& a, const unstated_dependency& b) {
    return a.subject == b.subject && a.fields == b.fields && a.condition == b.condition;
  }
};

/// A measured policy rule that would have given the order had it been measured on this platform: its
/// timings are stale here, so the next rule (or the registration order) decided instead.
struct stale_measurement {
  std::string rule;                      ///< `to_string(rule)`
  std::string measured_on;               ///< `to_string(measurement)`: device and component versions
  std::vector<std::string> differences;  ///< what differs here, one clause per fact

  friend bool operator==(const stale_measurement& a, const stale_measurement& b) {
    return a.rule == b.rule && a.measured_on == b.measured_on && a.differences == b.differences;
  }
};

/// Everything `explain` found: the result and the full trace in trial order.
struct explanation {
  selection_result result;
  /// Every backend serving the domain: tried ones in trial order (forced first, then the policy
  /// order), then those skipped (excluded, condition not met, not in the platform's order).
  std::vector<candidate_report> candidates;
  std::string rule;  ///< the policy rule that gave the order (`to_string(rule)`), empty if none matched
  std::string note;  ///< that rule's note
  /// Components the catalog's implications added to the platform before selection, with the
  /// component that implied each; empty when the platform was already closed (`close_platform`).
  std::vector<implied_component> implied;
  /// What the answer depends on that the query left unstated (phase, sequence lengths, batch, GQA
  /// group), with the thresholds that matter; empty when the answer holds for every call.
  std::vector<unstated_dependency> unstated;
  /// Measured rules in front of the rule used (or of none) whose timings were taken on another device
  /// or with other component versions, and what differs; empty when no measurement was set aside.
  std::vector<stale_measurement> stale;
};

/// Selects a backend for `q` on `p`. The success path allocates nothing and formats nothing; an
/// error carries every candidate's reasons. A platform not closed under the registry's implications
/// is closed first (one copy); close it once with `close_platform` to keep the path allocation-free.
[[nodiscard]] selection_result select(const registry& reg, const query& q, const platform& p,
                                      const override_request& ovr = {}, const select_options& options = {});

/// Selects with the override `q` reads (`override_set::for_query`): a decoder override never affects
/// encoder selection, and a phase override only that phase.
[[nodiscard]] inline selection_result select(const registry& reg, const query& q, const platform& p,
                                             const override_set& overrides, const select_options& options = {}) {
  return select(reg, q, p, overrides.for_query(q), options);
}

/// As `select`, but throws selection_exception on failure.
[[nodiscard]] selection select_or_throw(const registry& reg, const query& q, const platform& p,
                                        const override_request& ovr = {}, const select_options& options = {});

/// Runs the same selection and records every candidate with its verdict and all reasons, and the
/// components the registry's implications added to `p`.
[[nodiscard]] explanation explain(const registry& reg, const query& q, const platform& p,
                                  const override_request& ovr = {}, const select_options& options = {});

/// Both phases' backends for one decoder layer (SGLang's prefill/decode split, vLLM's per-phase
/// backends). Each phase is selected on its own (with its override), then the pair is checked to share
/// one KV cache: the same kv-cache dtype (given by the query) and a block size both accept.
struct phase_plan {
  selection_result prefill;  ///< the prefill query's selection
  selection_result decode;   ///< the decode query's selection
  query prefill_query;       ///< what prefill was selected for (explain it with the same query)
  query decode_query;        ///< what decode was selected for
  /// The KV-cache block size of the pair: the query's when pinned, else the decode backend's choice
  /// (decode first, as vLLM's composite inherits the decode backend's KV layout) when prefill accepts
  /// it, else prefill's when decode accepts it; 0 when the two share none (see `conflict`).
  std::uint32_t block_size = 0;
  std::string conflict;  ///< why the two selected backends cannot share one KV cache; empty when they can

  [[nodiscard]] bool ok() const noexcept { return prefill.ok() && decode.ok() && conflict.empty(); }
};

/// Plans both phases of the decoder layer `layer` (its own phase is ignored) with the overrides'
/// prefill and decode entries (unset ones inherit the decoder override): prefill is `layer` in phase
/// prefill, decode is `layer` in phase decode with one query token.
[[nodiscard]] phase_plan plan_phases(const registry& reg, const query& layer, const platform& p,
                                     const override_set& overrides = {}, const select_options& options = {});

/// As above, with each phase's query given (their `phase` is set to prefill and decode): for layers
/// whose phases attend differently, as MLA's prefill (the per-head sizes, `qk_nope + qk_rope` and
/// `v_head_dim`) and decode (the latent `kv_lora_rank + qk_rope`). The kv-cache dtypes must match.
[[nodiscard]] phase_plan plan_phases(const registry& reg, query prefill, query decode, const platform& p,
                                     const override_set& overrides = {}, const select_options& options = {});

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/impl/select_inl.hpp>
#endif

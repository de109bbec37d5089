// SPDX-License-Identifier: Apache-2.0
// Deciding by measured speed: an engine times its own kernels through a callback, and these functions
// time them interleaved, decide whether one may move ahead of the catalog's default (the spread limit,
// the margin and the second pass), and write the measured rule. `python -m attnsel.tune` runs the same
// functions (docs/tuning.md). A layer on the core: nothing of the core includes it.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/measurement.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/policy.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// How a tuning run measures and when a measurement may reorder. Each backend of a class is timed in
/// `rounds` rounds of `reps` samples, interleaved (round r starts at backend r). A class whose winner or
/// default spreads more than `spread_limit_pct` (p90 - p10 over the median) is measured again, at most
/// `retries` times. A winner must beat the default by more than the margin (gain_over) in the first pass
/// and in a second pass of `confirm_rounds` rounds over the two, measured again as the first is.
struct tuning_method {
  std::uint32_t rounds = 5;
  std::uint32_t reps = 4;
  double spread_limit_pct = 10.0;
  std::uint32_t retries = 2;
  double min_gain_pct = 3.0;
  std::uint32_t confirm_rounds = 8;
};

/// One backend's samples summarised: the median and spread of `samples` per-call times.
struct backend_timing {
  std::string backend;
  double median_us = 0;
  double spread_pct = 0;  ///< (p90 - p10) / median, percent
  std::uint32_t samples = 0;

  friend bool operator==(const backend_timing& a, const backend_timing& b) {
    return a.backend == b.backend && a.median_us == b.median_us && a.spread_pct == b.spread_pct &&
           a.samples == b.samples;
  }
};

/// The median and spread of per-call times (microseconds): p10 and p90 are the sorted samples at
/// floor(0.1 (n - 1)) and ceil(0.9 (n - 1)). std::invalid_argument for no samples, or one that is not
/// finite and positive.
[[nodiscard]] backend_timing summarize_samples(std::string backend, std::vector<double> samples_us);

/// The engine's clock for the class being measured: `reps` per-call times of `backend`, microseconds,
/// each finite and > 0 (summarize_samples refuses others). It throws std::runtime_error (or a type
/// derived from it) when the kernel cannot run: that backend is dropped with the first line of the
/// message. Any other exception propagates.
using kernel_timer = std::function<std::vector<double>(const std::string& backend, std::uint32_t reps)>;

/// Backends timed interleaved, fastest first, and those dropped (backend, why).
struct interleaved_timings {
  std::vector<backend_timing> times;
  std::vector<std::pair<std::string, std::string>> dropped;
};

/// Times `backends` in `rounds` rounds of `reps` samples each, round r starting at backend r (mod the
/// backends still running), so a drifting clock reaches each alike.
[[nodiscard]] interleaved_timings time_interleaved(const std::vector<std::string>& backends, const kernel_timer& timer,
                                                   std::uint32_t rounds, std::uint32_t reps);

/// How much faster `winner` is than `default_time`, and the margin it must exceed, both in percent: the
/// larger of min_gain_pct and the two spreads, doubled while a spread is over the limit (a noisy pair is
/// told apart only by a gain noise cannot reach twice over).
struct tuning_gain {
  double gain_pct = 0;
  double margin_pct = 0;
};
[[nodiscard]] tuning_gain gain_over(const backend_timing& winner, const backend_timing& default_time,
                                    const tuning_method& method);

/// A class's first pass, as a decision reads it.
struct first_pass {
  std::vector<backend_timing> times;  ///< the backends that passed the output check, fastest first
  std::string default_backend;        ///< what the catalog answers without a measured rule
  std::string default_excluded;       ///< why the default has no time (empty when it was timed)
  std::uint32_t attempts = 1;         ///< measurements made (more than one when it was noisy)
};

/// Whether a class's rule may put a backend ahead of the default, and the evidence.
struct tuning_decision {
  std::optional<std::string> winner;    ///< the backend the rule puts first; none: keep the default
  std::string why;                      ///< for a person: the decision and its numbers
  std::vector<backend_timing> confirm;  ///< the second pass (winner and default), when one ran
};

/// The first pass over `backends` for an engine's kernels: timed interleaved, again (at most `retries`
/// times) while the winner's or the default's spread is over the limit. Dropped backends are added to
/// `dropped` when given.
[[nodiscard]] first_pass measure_first_pass(const std::vector<std::string>& backends,
                                            const std::string& default_backend, const kernel_timer& timer,
                                            const tuning_method& method = {},
                                            std::vector<std::pair<std::string, std::string>>* dropped = nullptr);

/// After the first pass: keep the default (no winner), or a candidate winner whose why starts "to
/// confirm" (second_pass decides). A default excluded for wrong output or for not running gives way to
/// the fastest backend that passed, with that backend's own time as the evidence.
[[nodiscard]] tuning_decision first_verdict(const first_pass& pass, const tuning_method& method = {});

/// The second, independent pass: the candidate winner and the default timed again, interleaved (again
/// while either spreads over the limit); the winner stays only if it again beats the default by more
/// than the margin. A class first_verdict does not move is returned as first_verdict decides it.
[[nodiscard]] tuning_decision second_pass(const first_pass& pass, const kernel_timer& timer,
                                          const tuning_method& method = {});

/// The measured rule of a class whose decision moves a winner: `conditions` (vendor, arch, dtypes, head
/// sizes, lengths: the calls the class covers) with the order [winner, then `catalog_order` without it
/// and without `wrong_output`], and the measurement: the second pass's times, `p`'s device name, the
/// exact versions of the `fingerprint` components, and `switches` as present or absent on `p`.
/// std::invalid_argument when the decision keeps the default, `p` has no device name, or `p` states a
/// fingerprint component without a version (or not at all).
[[nodiscard]] policy_rule measured_rule(policy_rule conditions, const tuning_decision& decision,
                                        const std::vector<std::string>& catalog_order,
                                        const std::vector<std::string>& wrong_output, const platform& p,
                                        const std::vector<std::string>& fingerprint,
                                        const std::vector<std::string>& switches);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/impl/tuning_inl.hpp>
#endif

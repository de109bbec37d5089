// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for tuning.hpp.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/tuning.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail::tuning {

// printf's %.1f and %g: the figures in a decision's why, as Python's f-strings print them.
inline std::string fixed1(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

inline std::string general(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

inline const backend_timing* time_of(const std::vector<backend_timing>& times, const std::string& backend) {
  const auto it =
      std::find_if(times.begin(), times.end(), [&](const backend_timing& t) { return t.backend == backend; });
  return it == times.end() ? nullptr : &*it;
}

inline bool noisy(const backend_timing& t, const tuning_method& m) { return t.spread_pct > m.spread_limit_pct; }

// "FLASH_ATTENTION spread 15.4%, ..." for the noisy ones of a winner and a default (each named once).
inline std::string noise_of(const backend_timing& a, const backend_timing* b, const tuning_method& m) {
  std::string out;
  for (const backend_timing* t : {&a, b}) {
    if (t == nullptr || !noisy(*t, m) || (t == b && b->backend == a.backend)) continue;
    if (!out.empty()) out += ", ";
    out += t->backend + " spread " + fixed1(t->spread_pct) + "%";
  }
  return out;
}

// At most `limit` bytes of `s`, never cutting a UTF-8 sequence (the text goes back to Python as str).
inline std::string utf8_prefix(const std::string& s, std::size_t limit) {
  if (s.size() <= limit) return s;
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0U) == 0x80U) --end;
  return s.substr(0, end);
}

// The first line of an exception's message (up to \n or \r), at most `limit` bytes.
inline std::string first_line(const char* what, std::size_t limit) {
  std::string s(what);
  return utf8_prefix(s.substr(0, s.find_first_of("\r\n")), limit);
}

}  // namespace detail::tuning

ATTNSEL_INLINE backend_timing summarize_samples(std::string backend, std::vector<double> samples_us) {
  if (samples_us.empty()) throw std::invalid_argument("summarize_samples: " + backend + ": no samples");
  for (double s : samples_us)
    if (!(std::isfinite(s) && s > 0))
      throw std::invalid_argument("summarize_samples: " + backend + ": a sample is not a finite time > 0");
  std::sort(samples_us.begin(), samples_us.end());
  const std::size_t n = samples_us.size();
  const double median = n % 2 ? samples_us[n / 2] : (samples_us[n / 2 - 1] + samples_us[n / 2]) / 2.0;
  const double p10 = samples_us[static_cast<std::size_t>(0.1 * static_cast<double>(n - 1))];
  const double p90 = samples_us[static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(n - 1)))];
  return {std::move(backend), median, 100.0 * (p90 - p10) / median, static_cast<std::uint32_t>(n)};
}

ATTNSEL_INLINE interleaved_timings time_interleaved(const std::vector<std::string>& backends, const kernel_timer& timer,
                                                    std::uint32_t rounds, std::uint32_t reps) {
  std::vector<std::string> live = backends;
  std::vector<std::vector<double>> samples(live.size());
  std::vector<std::string> names = live;  // samples[i] belongs to names[i]
  interleaved_timings out;
  for (std::uint32_t r = 0; r < rounds && !live.empty(); ++r) {
    const std::size_t k = r % live.size();
    std::vector<std::string> order(live.begin() + static_cast<std::ptrdiff_t>(k), live.end());
    order.insert(order.end(), live.begin(), live.begin() + static_cast<std::ptrdiff_t>(k));
    for (const auto& b : order) {
      const auto i = static_cast<std::size_t>(std::find(names.begin(), names.end(), b) - names.begin());
      try {
        const auto got = timer(b, reps);
        samples[i].insert(samples[i].end(), got.begin(), got.end());
      } catch (const std::runtime_error& e) {
        out.dropped.emplace_back(b, "failed while timed: " + detail::tuning::first_line(e.what(), 160));
        live.erase(std::find(live.begin(), live.end(), b));
      }
    }
  }
  for (const auto& b : live) {
    const auto i = static_cast<std::size_t>(std::find(names.begin(), names.end(), b) - names.begin());
    if (!samples[i].empty()) out.times.push_back(summarize_samples(b, samples[i]));
  }
  std::stable_sort(out.times.begin(), out.times.end(),
                   [](const backend_timing& a, const backend_timing& b) { return a.median_us < b.median_us; });
  return out;
}

ATTNSEL_INLINE tuning_gain gain_over(const backend_timing& winner, const backend_timing& default_time,
                                     const tuning_method& method) {
  const double spread = std::max(winner.spread_pct, default_time.spread_pct);
  const double noise = spread > method.spread_limit_pct ? 2.0 * spread : spread;
  return {100.0 * (default_time.median_us / winner.median_us - 1.0), std::max(method.min_gain_pct, noise)};
}

ATTNSEL_INLINE first_pass measure_first_pass(const std::vector<std::string>& backends,
                                             const std::string& default_backend, const kernel_timer& timer,
                                             const tuning_method& method,
                                             std::vector<std::pair<std::string, std::string>>* dropped) {
  first_pass pass;
  pass.default_backend = default_backend;
  pass.attempts = 0;
  std::vector<std::string> passing = backends;
  std::vector<std::pair<std::string, std::string>> drops;
  for (std::uint64_t attempt = 0; attempt <= std::uint64_t{method.retries}; ++attempt) {
    ++pass.attempts;
    auto timed = time_interleaved(passing, timer, method.rounds, method.reps);
    drops.insert(drops.end(), timed.dropped.begin(), timed.dropped.end());
    pass.times = std::move(timed.times);
    passing.clear();
    for (const auto& t : pass.times) passing.push_back(t.backend);
    if (pass.times.empty()) break;
    const backend_timing* dflt = detail::tuning::time_of(pass.times, default_backend);
    if (!detail::tuning::noisy(pass.times.front(), method) &&
        (dflt == nullptr || !detail::tuning::noisy(*dflt, method)))
      break;
  }
  if (detail::tuning::time_of(pass.times, default_backend) == nullptr)
    for (const auto& [b, why] : drops)
      if (b == default_backend) pass.default_excluded = why;
  if (dropped != nullptr) dropped->insert(dropped->end(), drops.begin(), drops.end());
  return pass;
}

ATTNSEL_INLINE tuning_decision first_verdict(const first_pass& pass, const tuning_method& method) {
  using detail::tuning::fixed1;
  if (pass.times.empty()) return {std::nullopt, "no backend passed the check", {}};
  const backend_timing& best = pass.times.front();
  const backend_timing* dflt = detail::tuning::time_of(pass.times, pass.default_backend);
  if (dflt == nullptr) {
    const std::string what = pass.default_excluded.empty() ? "not among the timed backends" : pass.default_excluded;
    if (what.rfind("wrong output", 0) == 0 || what.rfind("did not run", 0) == 0)
      return {best.backend,
              "the default " + pass.default_backend + " is excluded (" + detail::tuning::utf8_prefix(what, 80) + "); " +
                  best.backend + " is the fastest backend that passed",
              {best}};
    return {std::nullopt, "the default " + pass.default_backend + " has no timing (" + what + "): nothing to beat", {}};
  }
  if (best.backend == pass.default_backend)
    return {std::nullopt, "the default " + pass.default_backend + " is the fastest", {}};
  const auto g = gain_over(best, *dflt, method);
  const std::string noise = detail::tuning::noise_of(best, dflt, method);
  if (!noise.empty()) {
    if (g.gain_pct <= g.margin_pct)
      return {std::nullopt,
              "too noisy: " + noise + " over the " + detail::tuning::general(method.spread_limit_pct) +
                  "% limit after " + std::to_string(pass.attempts) + " measurement(s), and " + best.backend + " is " +
                  fixed1(g.gain_pct) + "% faster, within twice the spread (" + fixed1(g.margin_pct) + "%)",
              {}};
    return {best.backend,
            "to confirm: " + best.backend + " " + fixed1(g.gain_pct) + "% faster than " + pass.default_backend +
                ", beyond twice the spread (" + noise + "; margin " + fixed1(g.margin_pct) + "%)",
            {}};
  }
  if (g.gain_pct <= g.margin_pct)
    return {std::nullopt,
            best.backend + " is " + fixed1(g.gain_pct) + "% faster than the default " + pass.default_backend +
                ", within the " + fixed1(g.margin_pct) + "% margin",
            {}};
  return {best.backend,
          "to confirm: " + best.backend + " " + fixed1(g.gain_pct) + "% faster than " + pass.default_backend +
              " (margin " + fixed1(g.margin_pct) + "%)",
          {}};
}

ATTNSEL_INLINE tuning_decision second_pass(const first_pass& pass, const kernel_timer& timer,
                                           const tuning_method& method) {
  using detail::tuning::fixed1;
  tuning_decision first = first_verdict(pass, method);
  const backend_timing* dflt = detail::tuning::time_of(pass.times, pass.default_backend);
  if (!first.winner || dflt == nullptr) return first;
  const std::string& winner = *first.winner;
  interleaved_timings timed;
  for (std::uint64_t attempt = 0; attempt <= std::uint64_t{method.retries}; ++attempt) {
    timed = time_interleaved({winner, pass.default_backend}, timer, method.confirm_rounds, method.reps);
    if (timed.times.size() < 2)
      return {std::nullopt, "second pass: " + winner + " or " + pass.default_backend + " failed while timed",
              timed.times};
    if (detail::tuning::noise_of(timed.times[0], &timed.times[1], method).empty()) break;
  }
  const backend_timing& win = *detail::tuning::time_of(timed.times, winner);
  const backend_timing& def = *detail::tuning::time_of(timed.times, pass.default_backend);
  const auto g1 = gain_over(*detail::tuning::time_of(pass.times, winner), *dflt, method);
  const auto g = gain_over(win, def, method);
  const std::string said = "second pass " + winner + " " + fixed1(win.median_us) + " us vs " + pass.default_backend +
                           " " + fixed1(def.median_us) + " us, " + fixed1(g.gain_pct) + "% faster (margin " +
                           fixed1(g.margin_pct) + "%)";
  if (g.gain_pct <= g.margin_pct)
    return {std::nullopt, "not confirmed: first pass " + fixed1(g1.gain_pct) + "% faster, " + said, timed.times};
  return {winner, "confirmed: first pass " + fixed1(g1.gain_pct) + "% faster, " + said, timed.times};
}

ATTNSEL_INLINE policy_rule measured_rule(policy_rule conditions, const tuning_decision& decision,
                                         const std::vector<std::string>& catalog_order,
                                         const std::vector<std::string>& wrong_output, const platform& p,
                                         const std::vector<std::string>& fingerprint,
                                         const std::vector<std::string>& switches) {
  if (!decision.winner)
    throw std::invalid_argument("measured_rule: the decision keeps the default (" + decision.why + "): no rule");
  if (p.device_name().empty()) throw std::invalid_argument("measured_rule: the platform names no device");
  const auto wrong = [&](const std::string& b) {
    return std::find(wrong_output.begin(), wrong_output.end(), b) != wrong_output.end();
  };
  const auto entry = [](const std::string& backend) {
    policy_entry e;
    e.backend = backend;
    return e;
  };
  conditions.order.clear();
  conditions.order.push_back(entry(*decision.winner));
  for (const auto& b : catalog_order)
    if (b != *decision.winner && !wrong(b)) conditions.order.push_back(entry(b));
  measurement m;
  m.device = std::string(p.device_name());
  for (const auto& name : fingerprint) {
    const component* c = p.find_component(name);
    if (c == nullptr || !c->version)
      throw std::invalid_argument("measured_rule: the platform states no version of " + name +
                                  ": a measurement must name the version of what it timed");
    m.components.push_back(*c);
  }
  for (const auto& name : switches) (p.has_component(name) ? m.present : m.absent).push_back(name);
  auto times = decision.confirm;
  std::stable_sort(times.begin(), times.end(),
                   [](const backend_timing& a, const backend_timing& b) { return a.median_us < b.median_us; });
  for (const auto& t : times) m.times.push_back({t.backend, t.median_us, t.spread_pct});
  conditions.measured = std::move(m);
  return conditions;
}

ATTNSEL_END_NAMESPACE

// SPDX-License-Identifier: Apache-2.0
// attnsel._tuning_*: the C++ tuning decisions (<attnsel/catalog/tuning.hpp>) that attnsel.tune runs, over plain
// tuples: a timing is (backend, median_us, spread_pct, samples); a method is (rounds, reps,
// spread_limit_pct, retries, min_gain_pct, confirm_rounds); a first pass is (timings, default,
// default_excluded, attempts).
#include "bindings.hpp"

#include <attnsel/catalog/tuning.hpp>
#include <attnsel/core/measurement.hpp>

#include <pybind11/stl.h>

#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace attnsel_py {

namespace {

using timing_tuple = std::tuple<std::string, double, double, std::uint32_t>;
using method_tuple = std::tuple<std::uint32_t, std::uint32_t, double, std::uint32_t, double, std::uint32_t>;
using decision_tuple = std::tuple<std::optional<std::string>, std::string, std::vector<timing_tuple>>;

attnsel::tuning_method method_of(const method_tuple& t) {
  attnsel::tuning_method m;
  std::tie(m.rounds, m.reps, m.spread_limit_pct, m.retries, m.min_gain_pct, m.confirm_rounds) = t;
  return m;
}

attnsel::backend_timing timing_of(const timing_tuple& t) {
  return {std::get<0>(t), std::get<1>(t), std::get<2>(t), std::get<3>(t)};
}

timing_tuple tuple_of(const attnsel::backend_timing& t) { return {t.backend, t.median_us, t.spread_pct, t.samples}; }

std::vector<timing_tuple> tuples_of(const std::vector<attnsel::backend_timing>& times) {
  std::vector<timing_tuple> out;
  out.reserve(times.size());
  for (const auto& t : times) out.push_back(tuple_of(t));
  return out;
}

attnsel::first_pass pass_of(const std::vector<timing_tuple>& times, std::string default_backend,
                            std::string default_excluded, std::uint32_t attempts) {
  attnsel::first_pass p;
  for (const auto& t : times) p.times.push_back(timing_of(t));
  p.default_backend = std::move(default_backend);
  p.default_excluded = std::move(default_excluded);
  p.attempts = attempts;
  return p;
}

// A Python callable (backend, reps) -> per-call microseconds as the C++ timer. Its RuntimeError drops the
// backend (std::runtime_error, as the timer contract says); any other exception propagates to the caller,
// and so does a result that is not an iterable of numbers (a TypeError: a runner's bug, not the kernel's).
attnsel::kernel_timer timer_of(py::object fn) {
  return [fn = std::move(fn)](const std::string& backend, std::uint32_t reps) -> std::vector<double> {
    py::object got;
    try {
      got = fn(backend, reps);
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_RuntimeError)) throw;
      throw std::runtime_error(py::str(e.value()).cast<std::string>());
    }
    const py::list samples(got);  // any iterable; TypeError (error_already_set) otherwise
    std::vector<double> out;
    out.reserve(samples.size());
    for (const py::handle s : samples) {
      if (!PyFloat_Check(s.ptr()) && !PyLong_Check(s.ptr())) {
        PyErr_Format(PyExc_TypeError, "Runner.time(%s): returned %R, not a number of microseconds", backend.c_str(),
                     s.ptr());
        throw py::error_already_set();
      }
      out.push_back(s.cast<double>());
    }
    return out;
  };
}

decision_tuple decision_of(const attnsel::tuning_decision& d) { return {d.winner, d.why, tuples_of(d.confirm)}; }

}  // namespace

void bind_tuning(py::module_& m) {
  m.def(
      "_tuning_summarize",
      [](std::string backend, std::vector<double> samples) {
        return tuple_of(attnsel::summarize_samples(std::move(backend), std::move(samples)));
      },
      py::arg("backend"), py::arg("samples"), "attnsel::summarize_samples: (backend, median_us, spread_pct, samples).");
  m.def(
      "_tuning_gain_over",
      [](const timing_tuple& winner, const timing_tuple& dflt, const method_tuple& method) {
        const auto g = attnsel::gain_over(timing_of(winner), timing_of(dflt), method_of(method));
        return std::make_pair(g.gain_pct, g.margin_pct);
      },
      py::arg("winner"), py::arg("default"), py::arg("method"), "attnsel::gain_over: (gain_pct, margin_pct).");
  m.def(
      "_tuning_interleaved",
      [](const std::vector<std::string>& backends, py::object timer, std::uint32_t rounds, std::uint32_t reps) {
        const auto t = attnsel::time_interleaved(backends, timer_of(std::move(timer)), rounds, reps);
        return std::make_pair(tuples_of(t.times), t.dropped);
      },
      py::arg("backends"), py::arg("timer"), py::arg("rounds"), py::arg("reps"),
      "attnsel::time_interleaved: (timings fastest first, [(backend, why dropped)]).");
  m.def(
      "_tuning_measure_first_pass",
      [](const std::vector<std::string>& backends, const std::string& default_backend, py::object timer,
         const method_tuple& method) {
        std::vector<std::pair<std::string, std::string>> dropped;
        const auto p = attnsel::measure_first_pass(backends, default_backend, timer_of(std::move(timer)),
                                                   method_of(method), &dropped);
        return std::make_tuple(tuples_of(p.times), p.attempts, dropped);
      },
      py::arg("backends"), py::arg("default"), py::arg("timer"), py::arg("method"),
      "attnsel::measure_first_pass: (timings fastest first, attempts, [(backend, why dropped)]).");
  m.def(
      "_tuning_first_verdict",
      [](const std::vector<timing_tuple>& times, std::string dflt, std::string excluded, std::uint32_t attempts,
         const method_tuple& method) {
        return decision_of(
            attnsel::first_verdict(pass_of(times, std::move(dflt), std::move(excluded), attempts), method_of(method)));
      },
      py::arg("times"), py::arg("default"), py::arg("default_excluded"), py::arg("attempts"), py::arg("method"),
      "attnsel::first_verdict: (winner or None, why, second-pass timings).");
  m.def(
      "_tuning_second_pass",
      [](const std::vector<timing_tuple>& times, std::string dflt, std::string excluded, std::uint32_t attempts,
         py::object timer, const method_tuple& method) {
        return decision_of(attnsel::second_pass(pass_of(times, std::move(dflt), std::move(excluded), attempts),
                                                timer_of(std::move(timer)), method_of(method)));
      },
      py::arg("times"), py::arg("default"), py::arg("default_excluded"), py::arg("attempts"), py::arg("timer"),
      py::arg("method"), "attnsel::second_pass: (winner or None, why, second-pass timings).");
  m.def(
      "_tuning_differences",
      [](std::string device, const std::vector<std::string>& components, std::vector<std::string> present,
         std::vector<std::string> absent, const py_platform& platform) {
        attnsel::measurement fingerprint;
        fingerprint.device = std::move(device);
        attnsel::platform measured;  // each NAME=VERSION read as the catalog reads it
        for (const auto& spec : components) measured.add_component_spec(spec);
        fingerprint.components = measured.components();
        fingerprint.present = std::move(present);
        fingerprint.absent = std::move(absent);
        return fingerprint.differences(platform);
      },
      py::arg("device"), py::arg("components"), py::arg("present"), py::arg("absent"), py::arg("platform"),
      "attnsel::measurement::differences: what differs on `platform` from a measured rule's fingerprint.");
}

}  // namespace attnsel_py

// SPDX-License-Identifier: Apache-2.0
// Tuning an engine's own kernels from C++ (tuning.hpp): a scripted clock stands for the engine's timer;
// the samples are summarised, timed interleaved, decided with the spread limit, the margin and the
// second pass, and the winner written as a measured rule that selects on the measured machine only.
// (tests/python/test_tune.py runs the same decisions through attnsel.tune.)
#include "catch.hpp"
#include "fixtures.hpp"

#include <attnsel/all.hpp>

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace attnsel;

namespace {

// Per-call microseconds by backend; `noise` alternates samples by that fraction.
struct scripted_clock {
  std::map<std::string, double> us;
  std::map<std::string, double> noise;
  std::vector<std::string> calls;

  kernel_timer timer() {
    return [this](const std::string& backend, std::uint32_t reps) {
      calls.push_back(backend);
      if (backend == "BROKEN") throw std::runtime_error("no kernel image for this device\nmore detail");
      std::vector<double> out;
      for (std::uint32_t i = 0; i < reps; ++i) out.push_back(us.at(backend) * (1.0 + noise[backend] * (i % 2)));
      return out;
    };
  }
};

const char* const two_kernels = R"({
  "format": "attnsel-catalog", "version": 2, "name": "engine",
  "backends": [
    {"name": "STOCK", "domains": ["decoder"], "head_sizes": [128], "platforms": [{"vendor": "cuda"}]},
    {"name": "MINE", "domains": ["decoder"], "head_sizes": [128], "platforms": [{"vendor": "cuda"}]}
  ],
  "policies": [{"domain": "decoder", "vendor": "cuda", "order": ["STOCK", "MINE"]}]
})";

platform h100() { return fixtures::hopper_device("NVIDIA H100 80GB HBM3", {"mykernels=1.2", "cudnn_preferred"}); }

}  // namespace

TEST_CASE("samples are summarised by their median and the p10-p90 spread", "[tuning]") {
  const auto t = summarize_samples("MINE", {12.0, 10.0, 11.0, 30.0, 10.0});
  CHECK(t.backend == "MINE");
  CHECK(t.median_us == 11.0);
  CHECK(t.samples == 5);
  CHECK(t.spread_pct == Approx(100.0 * (30.0 - 10.0) / 11.0));
  CHECK(summarize_samples("MINE", {10.0, 20.0}).median_us == 15.0);
  CHECK_THROWS_AS(summarize_samples("MINE", {}), std::invalid_argument);
  CHECK_THROWS_AS(summarize_samples("MINE", {1.0, -2.0}), std::invalid_argument);
}

TEST_CASE("backends are timed interleaved, and one whose kernel cannot run is dropped", "[tuning]") {
  scripted_clock clock{{{"A", 20.0}, {"B", 10.0}, {"C", 30.0}}, {}, {}};
  const auto t = time_interleaved({"A", "B", "C"}, clock.timer(), 3, 2);
  CHECK(clock.calls == std::vector<std::string>{"A", "B", "C", "B", "C", "A", "C", "A", "B"});
  REQUIRE(t.times.size() == 3);
  CHECK(t.times[0].backend == "B");  // fastest first
  CHECK(t.times[0].samples == 6);

  scripted_clock broken{{{"A", 20.0}}, {}, {}};
  const auto d = time_interleaved({"BROKEN", "A"}, broken.timer(), 2, 1);
  REQUIRE(d.dropped.size() == 1);
  CHECK(d.dropped[0] == std::make_pair(std::string("BROKEN"), std::string("failed while timed: no kernel image for "
                                                                          "this device")));
  CHECK(d.times.size() == 1);
  // Any other exception is not the kernel's refusal: it propagates.
  const kernel_timer bug = [](const std::string&, std::uint32_t) -> std::vector<double> {
    throw std::logic_error("bug");
  };
  CHECK_THROWS_AS(time_interleaved({"A"}, bug, 1, 1), std::logic_error);
}

TEST_CASE("an engine's kernel that beats the default in two passes is written as a measured rule", "[tuning]") {
  scripted_clock clock{{{"STOCK", 20.0}, {"MINE", 10.0}}, {}, {}};
  const tuning_method method;
  std::vector<std::pair<std::string, std::string>> dropped;
  const auto pass = measure_first_pass({"STOCK", "MINE"}, "STOCK", clock.timer(), method, &dropped);
  CHECK(pass.attempts == 1);
  CHECK(dropped.empty());
  CHECK(first_verdict(pass, method).why == "to confirm: MINE 100.0% faster than STOCK (margin 3.0%)");
  const auto decision = second_pass(pass, clock.timer(), method);
  REQUIRE(decision.winner == std::optional<std::string>("MINE"));
  CHECK(decision.why ==
        "confirmed: first pass 100.0% faster, second pass MINE 10.0 us vs STOCK 20.0 us, 100.0% "
        "faster (margin 3.0%)");
  CHECK(clock.calls.size() == 2 * method.rounds + 2 * method.confirm_rounds);

  auto reg = parse_catalog_text(two_kernels, "engine").registry;
  policy_rule conditions;
  conditions.min_capability = conditions.max_capability = cuda_capability{9, 0};
  conditions.head_sizes = {128};
  const auto rule =
      measured_rule(conditions, decision, {"STOCK", "MINE"}, {}, h100(), {"mykernels"}, {"cudnn_preferred", "aiter"});
  REQUIRE(rule.measured.has_value());
  CHECK(to_string(*rule.measured) == "NVIDIA H100 80GB HBM3 [mykernels=1.2, cudnn_preferred, no aiter]");
  CHECK(rule.measured->times.front().backend == "MINE");
  CHECK(rule.order.size() == 2);
  reg.prepend_rules({rule});
  query q;
  q.head_size = 128;
  CHECK(select(reg, q, h100())->name() == "MINE");
  platform newer = h100();
  newer.add_component_spec("mykernels=1.3");  // another version of the engine's kernels: the rule is stale
  CHECK(select(reg, q, newer)->name() == "STOCK");
  CHECK_THROWS_AS(measured_rule(conditions, first_verdict(first_pass{}, method), {}, {}, h100(), {}, {}),
                  std::invalid_argument);
}

TEST_CASE("noise keeps the default unless the gain is beyond twice the spread", "[tuning]") {
  const tuning_method method;
  // MINE spreads 40% and is 20% faster: within twice the spread.
  scripted_clock close{{{"STOCK", 30.0}, {"MINE", 20.0}}, {{"MINE", 0.5}}, {}};
  const auto kept = measure_first_pass({"STOCK", "MINE"}, "STOCK", close.timer(), method);
  CHECK(kept.attempts == 3);
  const auto why = first_verdict(kept, method).why;
  CHECK(why.rfind("too noisy: MINE spread 40.0% over the 10% limit after 3 measurement(s)", 0) == 0);
  const auto timed_before = close.calls.size();
  CHECK_FALSE(second_pass(kept, close.timer(), method).winner);
  CHECK(close.calls.size() == timed_before);  // nothing to confirm: no second pass ran
  // MINE spreads 15% and runs in a third of the time: noise cannot explain it.
  scripted_clock far{{{"STOCK", 30.0}, {"MINE", 10.0}}, {{"MINE", 0.15}}, {}};
  const auto moved =
      second_pass(measure_first_pass({"STOCK", "MINE"}, "STOCK", far.timer(), method), far.timer(), method);
  CHECK(moved.winner == std::optional<std::string>("MINE"));
  // A gain within the margin keeps the default.
  scripted_clock even{{{"STOCK", 10.2}, {"MINE", 10.0}}, {}, {}};
  const auto same = first_verdict(measure_first_pass({"STOCK", "MINE"}, "STOCK", even.timer(), method), method);
  CHECK_FALSE(same.winner);
  CHECK(same.why == "MINE is 2.0% faster than the default STOCK, within the 3.0% margin");
}

TEST_CASE("a default that cannot run gives way to the fastest kernel that passed", "[tuning]") {
  first_pass pass;
  pass.times = {summarize_samples("MINE", {10.0, 10.0})};
  pass.default_backend = "STOCK";
  pass.default_excluded = "did not run: unsupported head size";
  const auto d = first_verdict(pass, {});
  CHECK(d.winner == std::optional<std::string>("MINE"));
  CHECK(d.why ==
        "the default STOCK is excluded (did not run: unsupported head size); MINE is the fastest backend "
        "that passed");
  CHECK(d.confirm == pass.times);
  pass.default_excluded.clear();
  CHECK(first_verdict(pass, {}).why ==
        "the default STOCK has no timing (not among the timed backends): nothing to beat");
}

TEST_CASE("a default that fails while timed gives way, and its reason reaches the decision", "[tuning]") {
  scripted_clock clock{{{"MINE", 10.0}}, {}, {}};
  const auto pass = measure_first_pass({"BROKEN", "MINE"}, "BROKEN", clock.timer(), {});  // no dropped list
  CHECK(pass.default_excluded == "failed while timed: no kernel image for this device");
  CHECK(first_verdict(pass, {}).why ==
        "the default BROKEN has no timing (failed while timed: no kernel image for "
        "this device): nothing to beat");
}

TEST_CASE("a second pass that does not confirm, or fails, writes no rule", "[tuning]") {
  const tuning_method method;
  // 25% faster in the first pass, level in the second.
  scripted_clock drifting{{{"STOCK", 25.0}, {"MINE", 20.0}}, {}, {}};
  const auto pass = measure_first_pass({"STOCK", "MINE"}, "STOCK", drifting.timer(), method);
  drifting.us["MINE"] = 25.0;
  const auto level = second_pass(pass, drifting.timer(), method);
  CHECK_FALSE(level.winner);
  CHECK(level.why ==
        "not confirmed: first pass 25.0% faster, second pass MINE 25.0 us vs STOCK 25.0 us, 0.0% faster "
        "(margin 3.0%)");
  CHECK(level.confirm.size() == 2);
  const kernel_timer gone = [](const std::string& b, std::uint32_t) -> std::vector<double> {
    throw std::runtime_error(b + " is gone");
  };
  const auto failed = second_pass(pass, gone, method);
  CHECK_FALSE(failed.winner);
  CHECK(failed.why == "second pass: MINE or STOCK failed while timed");
}

TEST_CASE("a measured rule leaves out wrong-output backends and names what it was measured with", "[tuning]") {
  tuning_decision won{
      std::string("MINE"), "confirmed", {summarize_samples("STOCK", {20.0}), summarize_samples("MINE", {10.0})}};
  const auto rule = measured_rule({}, won, {"STOCK", "MINE", "WRONG", "OTHER"}, {"WRONG"}, h100(), {"mykernels"}, {});
  std::vector<std::string> order;
  for (const auto& e : rule.order) order.push_back(e.backend);
  CHECK(order == std::vector<std::string>{"MINE", "STOCK", "OTHER"});
  CHECK(rule.measured->times.front().backend == "MINE");  // fastest first, whatever order the pass gave
  platform unnamed = h100();
  unnamed.set_device_name("");
  CHECK_THROWS_AS(measured_rule({}, won, {}, {}, unnamed, {}, {}), std::invalid_argument);
  platform unversioned = platform::cuda(9, 0);
  unversioned.add_component_spec("mykernels");
  unversioned.set_device_name("NVIDIA H100 80GB HBM3");
  CHECK_THROWS_WITH(measured_rule({}, won, {}, {}, unversioned, {"mykernels"}, {}),
                    Catch::Contains("states no version of mykernels"));
}

TEST_CASE("a kernel's message is cut to its first line, never inside a UTF-8 character", "[tuning]") {
  std::string long_message = "CUDA error: ";
  for (int i = 0; i < 100; ++i) long_message += "\xc3\xa9";  // U+00E9, two bytes each
  const kernel_timer failing = [&](const std::string&, std::uint32_t) -> std::vector<double> {
    throw std::runtime_error(long_message + "\r\nsecond line");
  };
  const auto t = time_interleaved({"A"}, failing, 1, 1);
  REQUIRE(t.dropped.size() == 1);
  const std::string why = t.dropped[0].second.substr(std::string("failed while timed: ").size());
  CHECK(why.size() <= 160);
  CHECK(why.size() % 2 == 0);  // "CUDA error: " is 12 bytes, then whole two-byte characters only
  CHECK(why.find('\r') == std::string::npos);
}

// SPDX-License-Identifier: Apache-2.0
// Measured policy rules (attnsel tune): the fingerprint decides where a measured order applies, explain
// shows the times and the stale measurements, the catalog reads, writes and lints them.
#include "catch.hpp"
#include "fixtures.hpp"

#include <attnsel/all.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

using namespace attnsel;

namespace {

// Two backends; the catalog's own order says A first, a measured rule in front says B first.
const char* const measured_catalog = R"({
  "format": "attnsel-catalog", "version": 2, "name": "measured_test",
  "backends": [
    {"name": "A", "domains": ["decoder"], "head_sizes": [64, 128], "platforms": [{"vendor": "cuda"}]},
    {"name": "B", "domains": ["decoder"], "head_sizes": [64, 128], "platforms": [{"vendor": "cuda"}]}
  ],
  "policies": [
    {"domain": "decoder", "vendor": "cuda", "min_capability": "9.0", "max_capability": "9.0", "dtypes": ["bfloat16"],
     "note": "measured: prefill", "order": ["B", "A"],
     "measured": {"device": "NVIDIA H200", "components": ["torch=2.11.0", "cudnn=9.19.0"],
                  "times": [{"backend": "B", "median_us": 10.5, "spread_pct": 1.5},
                            {"backend": "A", "median_us": 21.0, "spread_pct": 2.0}]}},
    {"domain": "decoder", "vendor": "cuda", "min_capability": "9.0", "max_capability": "9.0", "dtypes": ["bfloat16"],
     "order": ["A", "B"]}
  ]
})";

platform h200() { return fixtures::hopper_device("NVIDIA H200", {"torch=2.11.0", "cudnn=9.19.0"}); }

query bf16() {
  query q;
  q.head_size = 128;
  q.dtype = data_type::bfloat16;
  return q;
}

registry measured_registry() { return parse_catalog_text(measured_catalog, "measured_test").registry; }

std::string refusal(const std::string& from, const std::string& to) {
  std::string text = measured_catalog;
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  try {
    (void)parse_catalog_text(text, "bad");
  } catch (const catalog_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a measured rule gives the order on the measured machine only", "[measured]") {
  const auto reg = measured_registry();
  const auto q = bf16();
  CHECK(select(reg, q, h200())->name() == "B");
  const selector bound(reg, h200());
  CHECK(bound.select(q)->name() == "B");

  platform h100 = h200();
  h100.set_device_name("NVIDIA H100 80GB HBM3");
  CHECK(select(reg, q, h100)->name() == "A");
  const selector bound_h100(reg, h100);
  CHECK(bound_h100.select(q)->name() == "A");

  platform old_torch = h200();
  old_torch.add_component_spec("torch=2.10.0");
  CHECK(select(reg, q, old_torch)->name() == "A");
  platform unnamed = platform::cuda(9, 0);
  unnamed.add_component_spec("torch=2.11.0");
  unnamed.add_component_spec("cudnn=9.19.0");
  CHECK(select(reg, q, unnamed)->name() == "A");
  // Extra components do not matter; only the measured ones, exactly.
  platform more = h200();
  more.add_component_spec("flashinfer=0.2.5");
  CHECK(select(reg, q, more)->name() == "B");
}

TEST_CASE("a measured rule holds only with its switches present and absent as measured", "[measured]") {
  // Measured with cudnn_preferred on and no aiter: a platform with the other setting of either is elsewhere.
  std::string text = measured_catalog;
  const std::string from = R"("components": ["torch=2.11.0", "cudnn=9.19.0"],)";
  text.replace(text.find(from), from.size(), from + R"( "present": ["cudnn_preferred"], "absent": ["aiter"],)");
  const auto reg = parse_catalog_text(text, "switches").registry;
  const auto q = bf16();
  platform on = h200();
  on.add_component("cudnn_preferred");
  CHECK(select(reg, q, on)->name() == "B");
  CHECK(selector(reg, on).select(q)->name() == "B");
  CHECK(select(reg, q, h200())->name() == "A");
  CHECK(selector(reg, h200()).select(q)->name() == "A");
  platform with_aiter = on;
  with_aiter.add_component("aiter");
  CHECK(select(reg, q, with_aiter)->name() == "A");
  const auto off = explain(reg, q, h200());
  REQUIRE(off.stale.size() == 1);
  CHECK(off.stale[0].differences == std::vector<std::string>{"no cudnn_preferred (measured with it)"});
  CHECK(off.stale[0].measured_on == "NVIDIA H200 [torch=2.11.0, cudnn=9.19.0, cudnn_preferred, no aiter]");
  CHECK(explain(reg, q, with_aiter).stale[0].differences == std::vector<std::string>{"aiter (measured without it)"});
  // The writer keeps the switches, and the text reads back to the same catalog.
  const auto c = parse_catalog_text(text, "switches");
  const auto j = to_json(c);
  CHECK(j["policies"][0]["measured"]["present"] == nlohmann::json{"cudnn_preferred"});
  CHECK(j["policies"][0]["measured"]["absent"] == nlohmann::json{"aiter"});
  CHECK(parse_catalog(j) == c);

  const std::string switches = R"("present": ["cudnn_preferred"], "absent": ["aiter"],)";
  const auto bad = [&](const std::string& with) { return refusal(from, from + " " + with); };
  CHECK_THAT(bad(R"("present": ["cudnn=9.19.0"],)"),
             ATTNSEL_CONTAINS("/policies/0/measured/present/0: expected a component name "
                              "without a version (a switch)"));
  CHECK_THAT(bad(R"("present": ["torch"],)"), ATTNSEL_CONTAINS("component torch is named twice in the fingerprint"));
  CHECK_THAT(bad(R"("present": ["x"], "absent": ["x"],)"),
             ATTNSEL_CONTAINS("/policies/0/measured/absent/0: component x is named twice"));
  CHECK_THAT(bad(R"("absent": ["Bad Name"],)"), ATTNSEL_CONTAINS("/policies/0/measured/absent/0"));
  CHECK(bad(switches).empty());
}

TEST_CASE("explain shows the measured times, or why a measurement was set aside", "[measured]") {
  const auto reg = measured_registry();
  const auto ex = explain(reg, bf16(), h200());
  REQUIRE(ex.result.ok());
  CHECK(ex.note == "measured: prefill");
  CHECK(ex.stale.empty());
  REQUIRE(ex.candidates.size() == 2);
  REQUIRE(ex.candidates[0].measured);
  CHECK(ex.candidates[0].name == "B");
  CHECK(ex.candidates[0].measured->median_us == 10.5);
  CHECK(ex.candidates[1].measured->spread_pct == 2.0);
  const auto j = to_json(ex, bf16(), h200(), {});
  CHECK(j["candidates"][0]["measured"]["median_us"] == 10.5);
  CHECK(j["stale"].empty());
  CHECK(j["platform"]["device"] == "NVIDIA H200");

  platform other = platform::cuda(9, 0);
  other.add_component_spec("torch=2.10.0");
  other.set_device_name("NVIDIA H100");
  const auto stale = explain(reg, bf16(), other);
  CHECK(stale.result->name() == "A");
  REQUIRE(stale.stale.size() == 1);
  CHECK(stale.stale[0].measured_on == "NVIDIA H200 [torch=2.11.0, cudnn=9.19.0]");  // as the catalog lists them
  CHECK(stale.stale[0].differences == std::vector<std::string>{"device NVIDIA H100 (measured on NVIDIA H200)",
                                                               "torch=2.10.0 (measured with torch=2.11.0)",
                                                               "no cudnn (measured with cudnn=9.19.0)"});
  for (const auto& c : stale.candidates) CHECK_FALSE(c.measured);
  CHECK(to_json(stale, bf16(), other, {})["stale"][0]["differences"].size() == 3);

  // Another arch: the rule's own filter is the difference named first.
  platform blackwell = h200();
  blackwell.set_capability({10, 0});
  const auto far = explain(reg, bf16(), blackwell);
  // Neither rule matches sm100 (both are 9.0 only): registration order, and the stale note says why.
  REQUIRE(far.stale.size() == 1);
  CHECK(far.stale[0].differences.front() == "platform cuda 10.0 is outside the rule's arch");

  // A query the measured rule does not cover (float16) is no stale measurement: nothing was set aside.
  query fp16 = bf16();
  fp16.dtype = data_type::float16;
  CHECK(explain(reg, fp16, other).stale.empty());
  // An override fixes the order: no rule, no stale note.
  CHECK(explain(reg, bf16(), other, override_request{"A"}).stale.empty());
}

TEST_CASE("measured rules are written, read back and linted as data", "[measured]") {
  const auto c = parse_catalog_text(measured_catalog, "measured_test");
  const auto& rule = c.registry.policy().rules.front();
  REQUIRE(rule.measured);
  CHECK(rule.measured->device == "NVIDIA H200");
  CHECK(rule.measured->components.size() == 2);
  CHECK(rule.measured->time_of("A")->median_us == 21.0);
  CHECK(rule.measured->time_of("C") == nullptr);
  const auto j = to_json(c);
  CHECK(j["version"] == 2);
  CHECK(j["policies"][0]["measured"]["components"] == nlohmann::json{"torch=2.11.0", "cudnn=9.19.0"});
  CHECK(parse_catalog(j) == c);
  // The second rule has the same conditions: without the measurement it would be shadowed. The
  // measured one holds on one machine, so lint finds nothing.
  for (const auto& f : lint_catalog(c)) CHECK(f.code != lint_code::shadowed_rule);
  // Rules differing only in their measurement differ.
  auto changed = to_json(c);
  changed["policies"][0]["measured"]["times"][0]["median_us"] = 11.0;
  CHECK_FALSE(parse_catalog(changed) == c);
  CHECK(parse_catalog(to_json(c)) == c);
}

TEST_CASE("a measured block is read strictly", "[measured]") {
  CHECK_THAT(refusal(R"("version": 2)", R"("version": 1)"), ATTNSEL_CONTAINS("version 2"));
  CHECK_THAT(refusal(R"("torch=2.11.0")", R"("torch")"), ATTNSEL_CONTAINS("exact version"));
  CHECK_THAT(refusal(R"("torch=2.11.0")", R"("Torch=2")"), ATTNSEL_CONTAINS("lower_snake"));
  CHECK_THAT(refusal(R"("cudnn=9.19.0")", R"("torch=2.11.0")"), ATTNSEL_CONTAINS("listed twice"));
  CHECK_THAT(refusal(R"("median_us": 10.5)", R"("median_us": -1)"),
             ATTNSEL_CONTAINS("/policies/0/measured/times/0/median_us"));
  CHECK_THAT(refusal(R"("median_us": 10.5)", R"("median_us": "fast")"), ATTNSEL_CONTAINS("a number"));
  CHECK_THAT(refusal(R"({"backend": "B", "median_us": 10.5)", R"({"backend": "C", "median_us": 10.5)"),
             ATTNSEL_CONTAINS("unknown backend \"C\""));
  CHECK_THAT(refusal(R"("device": "NVIDIA H200",)", R"("device": "NVIDIA H200", "gpu": 1,)"), ATTNSEL_CONTAINS("gpu"));
  CHECK_THAT(refusal(R"("spread_pct": 1.5)", R"("spread_pct": -1)"), ATTNSEL_CONTAINS("spread_pct"));
  CHECK_THAT(refusal(R"({"backend": "A", "median_us": 21.0)", R"({"backend": "B", "median_us": 21.0)"),
             ATTNSEL_CONTAINS("backend B is timed twice"));
  CHECK_THAT(refusal(R"("spread_pct": 1.5})", R"("spread_pct": 1.5, "p90": 3})"), ATTNSEL_CONTAINS("p90"));
  CHECK_THAT(refusal(R"("times": [{"backend": "B", "median_us": 10.5, "spread_pct": 1.5},
                            {"backend": "A", "median_us": 21.0, "spread_pct": 2.0}])",
                     R"("times": [])"),
             ATTNSEL_CONTAINS("times"));
}

TEST_CASE("a measured rule whose order its own times contradict is refused at the entry", "[measured]") {
  // B measured 10.5 us, A 21.0 us: an order listing A first claims the slower backend is faster.
  const auto why = refusal(R"("order": ["B", "A"],)", R"("order": ["A", "B"],)");
  CHECK_THAT(why, ATTNSEL_CONTAINS("/policies/0/order/1"));
  CHECK_THAT(why, ATTNSEL_CONTAINS("B (10.5 us) is ranked after A (21.0 us)"));
  // The times listed in another order are fine: the order is what must follow them.
  CHECK(refusal(R"("times": [{"backend": "B", "median_us": 10.5, "spread_pct": 1.5},
                            {"backend": "A", "median_us": 21.0, "spread_pct": 2.0}])",
                R"("times": [{"backend": "A", "median_us": 21.0, "spread_pct": 2.0},
                            {"backend": "B", "median_us": 10.5, "spread_pct": 1.5}])")
            .empty());
  // Equal times may stand in either order.
  CHECK(refusal(R"("median_us": 21.0)", R"("median_us": 10.5)").empty());
}

TEST_CASE("a measured rule names a device or none: an empty name would hold on every device", "[measured]") {
  CHECK_THAT(refusal(R"("device": "NVIDIA H200")", R"("device": "")"), ATTNSEL_CONTAINS("/policies/0/measured/device"));
  CHECK_THAT(refusal(R"("device": "NVIDIA H200")", R"("device": "")"), ATTNSEL_CONTAINS("a device name"));
}

TEST_CASE("a platform's device name is a fact of its own", "[measured]") {
  platform a = h200();
  platform b = h200();
  CHECK(a == b);
  b.set_device_name("NVIDIA H100");
  CHECK_FALSE(a == b);
  const auto j = to_json(a);
  CHECK(j["device"] == "NVIDIA H200");
  CHECK(platform_from_json(j) == a);
  CHECK_FALSE(to_json(platform::cuda(9, 0)).contains("device"));
  CHECK(to_string(a) == "cuda 9.0");  // the arch text stays the arch
}

TEST_CASE("a policy rule can name the head sizes it holds for", "[measured][policy]") {
  auto c = parse_catalog_text(R"({
    "format": "attnsel-catalog", "version": 2, "name": "heads",
    "backends": [
      {"name": "A", "domains": ["decoder"], "head_sizes": [64, 80, 128], "platforms": [{"vendor": "cuda"}]},
      {"name": "B", "domains": ["decoder"], "head_sizes": [64, 80, 128], "platforms": [{"vendor": "cuda"}]}
    ],
    "policies": [
      {"domain": "decoder", "vendor": "cuda", "head_sizes": [80, 64, 80], "order": ["B", "A"]},
      {"domain": "decoder", "vendor": "cuda", "head_sizes": [128], "order": ["A", "B"]},
      {"domain": "decoder", "vendor": "cuda", "order": ["A", "B"]}
    ]})",
                              "heads");
  const auto& rules = c.registry.policy().rules;
  CHECK(rules[0].head_sizes == std::vector<std::uint32_t>{64, 80});  // sorted, each once
  CHECK(to_string(rules[0]) == "decoder cuda head 64|80");
  query q = bf16();
  q.head_size = 80;
  CHECK(select(c.registry, q, h200())->name() == "B");
  q.head_size = 128;
  CHECK(select(c.registry, q, h200())->name() == "A");
  CHECK(explain(c.registry, q, h200()).rule == "decoder cuda head 128");
  // Written and read back; lint finds no shadowed rule (neither head-size rule covers the other, and
  // the catch-all comes last).
  CHECK(parse_catalog(to_json(c)) == c);
  for (const auto& f : lint_catalog(c)) CHECK(f.code != lint_code::shadowed_rule);
  // A rule without head sizes in front covers one with them.
  auto doc = to_json(c);
  std::swap(doc["policies"][0], doc["policies"][2]);
  bool shadowed = false;
  for (const auto& f : lint_catalog(parse_catalog(doc))) shadowed = shadowed || f.code == lint_code::shadowed_rule;
  CHECK(shadowed);
  // Version 1 refuses the key by name.
  auto v1 = nlohmann::json::parse(R"({"format": "attnsel-catalog", "version": 1, "name": "v1",
    "backends": [{"name": "A", "domains": ["decoder"]}],
    "policies": [{"domain": "decoder", "vendor": "cuda", "head_sizes": [64], "order": ["A"]}]})");
  CHECK_THROWS_WITH(parse_catalog(v1), ATTNSEL_CONTAINS("/policies/0/head_sizes: this key needs catalog version 2"));
  // Out of range or empty lists are refused by the reader; a C++ caller's unsorted list by the registry.
  for (const char* bad : {"[]", "[0]", "[70000]", "[\"64\"]"}) {
    auto v2 = v1;
    v2["version"] = 2;
    v2["policies"][0]["head_sizes"] = nlohmann::json::parse(bad);
    INFO(bad);
    CHECK_THROWS_WITH(parse_catalog(v2), ATTNSEL_CONTAINS("/policies/0/head_sizes"));
  }
  policy_rule unsorted;
  policy_entry entry;
  entry.backend = "A";
  unsorted.order.push_back(entry);
  unsorted.head_sizes = {128, 64};
  registry reg;
  backend_descriptor a;
  a.name = "A";
  reg.add(a);
  priority_policy policy;
  policy.rules.push_back(unsorted);
  CHECK_THROWS_WITH(reg.set_policy(policy), ATTNSEL_CONTAINS("head_sizes must be distinct sizes"));
}

TEST_CASE("diff of two measured overlays shows the classes whose backend changed", "[measured][diff]") {
  // The same catalog measured twice: the second measurement ranks A first.
  std::string text = measured_catalog;
  const std::string before = R"("order": ["B", "A"],)";
  const auto at = text.find(before);
  REQUIRE(at != std::string::npos);
  text.replace(at, before.size(), R"("order": ["A", "B"],)");
  // ... because A measured faster there (an order its own times contradict is refused).
  const std::string slow_b = R"({"backend": "B", "median_us": 10.5)";
  const auto b_at = text.find(slow_b);
  REQUIRE(b_at != std::string::npos);
  text.replace(b_at, slow_b.size(), R"({"backend": "B", "median_us": 42.0)");
  const auto a = parse_catalog_text(measured_catalog, "old");
  const auto b = parse_catalog_text(text, "new");
  diff_options options;
  options.overrides = false;
  const auto d = diff_catalogs(a, b, options);
  REQUIRE_FALSE(d.empty());
  bool on_measured_machine = true;
  for (const auto& g : d.groups) {
    on_measured_machine = on_measured_machine && g.platform.find("NVIDIA H200") != std::string::npos;
    for (const auto& t : g.transitions) {
      CHECK(t.from == "B");
      CHECK(t.to == "A");
      for (const auto& ex : t.examples) {
        CHECK(ex.platform.device_name() == "NVIDIA H200");
        CHECK(ex.query.dtype == data_type::bfloat16);
      }
    }
  }
  CHECK(on_measured_machine);  // nowhere else does either measurement hold
  CHECK(std::find(d.space.platforms.begin(), d.space.platforms.end(),
                  "cuda 9.0 [cudnn=9.19.0, torch=2.11.0] on NVIDIA H200") != d.space.platforms.end());
  CHECK(diff_catalogs(a, a, options).empty());
}

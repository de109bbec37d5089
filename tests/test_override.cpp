// SPDX-License-Identifier: Apache-2.0
// The override grammar: every form, every malformed form, and the error texts.
#include "catch.hpp"
#include "fixtures.hpp"

using namespace attnsel;

namespace {
selection_result run(const char* spec, query q = {}, platform p = fixtures::hopper_with_flashinfer(),
                     select_options options = {}) {
  static const auto reg = fixtures::small_registry();
  return select(reg, q, p, override_request{spec, override_source::env}, options);
}
std::string picked(const selection_result& r) {
  return r ? std::string(r->name()) : "error:" + std::string(to_string(r.error().code));
}
}  // namespace

TEST_CASE("empty, blank and 'auto' in any case mean automatic selection", "[override]") {
  for (const char* spec : {"", "auto", "AUTO", "Auto", "  auto  ", " \t "}) {
    INFO('"' << spec << '"');
    const auto r = run(spec);
    REQUIRE(r);
    CHECK(r->name() == "FAST");
    CHECK_FALSE(r->overridden);
  }
  CHECK(run("")->source == override_source::none);
  CHECK(run("auto")->source == override_source::env);
}

TEST_CASE("a single name is strict: that backend or an error, never a substitute", "[override]") {
  const auto ok = run("medium");
  REQUIRE(ok);
  CHECK(ok->name() == "MEDIUM");
  CHECK(ok->overridden);
  CHECK(ok->source == override_source::env);

  query q;
  q.head_size = 72;  // FAST cannot, MEDIUM and SLOW could
  const auto r = run("FAST", q);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == error_code::backend_rejected);
  CHECK_THAT(r.error().message,
             ATTNSEL_CONTAINS("Selected backend FAST is not valid for decoder attention (head_size=72"));
  CHECK_THAT(r.error().message, ATTNSEL_CONTAINS("FAST: head size 72 not in {64, 128, 256}"));
  // Hints are validated: only backends that really support the query are suggested.
  CHECK(r.error().suggestions == std::vector<std::string>{"MEDIUM", "SLOW"});
  REQUIRE(r.error().candidates.size() == 1);
  CHECK(r.error().candidates[0].outcome == verdict::rejected);
  CHECK(r.error().candidates[0].forced);
}

TEST_CASE("an alias forces its backend", "[override]") { CHECK(picked(run("fast_attn")) == "FAST"); }

TEST_CASE("a comma list is tried in exactly that order", "[override]") {
  query q;
  q.head_size = 72;
  CHECK(picked(run("FAST,SLOW,MEDIUM", q)) == "SLOW");
  CHECK(run("FAST,SLOW,MEDIUM", q)->rank == 2);
  q.dtype = data_type::float32;
  q.head_size = 12;  // MEDIUM refuses 12, SLOW takes anything
  const auto r = run("FAST,MEDIUM", q);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == error_code::backend_rejected);
  CHECK(r.error().candidates.size() == 2);
  CHECK_THAT(r.error().message, ATTNSEL_CONTAINS("Selected backend FAST, MEDIUM is not valid"));
}

TEST_CASE("'A,auto' tries A, then the policy order without repeating A", "[override]") {
  query q;
  q.head_size = 72;
  const auto r = run("FAST,auto", q);
  REQUIRE(r);
  CHECK(r->name() == "MEDIUM");
  CHECK_FALSE(r->overridden);
  CHECK(r->rank == 2);  // FAST once, then MEDIUM; FAST is not tried again
  CHECK(picked(run("SLOW,auto")) == "SLOW");
}

TEST_CASE("'-NAME' removes a backend from automatic selection", "[override]") {
  CHECK(picked(run("-FAST")) == "MEDIUM");
  CHECK(picked(run("-fast, -medium")) == "SLOW");
  CHECK(picked(run("-FAST,auto")) == "MEDIUM");
  const auto none = run("-FAST,-MEDIUM,-SLOW");
  REQUIRE_FALSE(none);
  CHECK(none.error().code == error_code::no_backend);
  CHECK_THAT(none.error().message, ATTNSEL_CONTAINS("FAST: removed by the override"));
}

TEST_CASE("unknown names are errors with the valid names and the closest match", "[override]") {
  const auto r = run("FASTT");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == error_code::unknown_backend);
  CHECK_THAT(r.error().message, ATTNSEL_CONTAINS("unknown attention backend 'FASTT' (entry 1). Did you mean FAST?"));
  CHECK_THAT(r.error().message,
             ATTNSEL_CONTAINS("Valid options are: auto, FAST, FAST_ATTN, LATENT, MEDIUM, SLOW, VISION"));
  CHECK(r.error().suggestions == std::vector<std::string>{"FAST"});
  const auto far = run("TOTALLY_DIFFERENT");
  REQUIRE_FALSE(far);
  CHECK_THAT(far.error().message, !ATTNSEL_CONTAINS("Did you mean"));
  CHECK(picked(run("SLOW,NOPE")) == "error:unknown_backend");  // validated before anything is tried
  CHECK(picked(run("-NOPE")) == "error:unknown_backend");
}

TEST_CASE("malformed overrides are bad_override with a precise message", "[override]") {
  struct row {
    const char* spec;
    const char* message_part;
  };
  const row rows[] = {
      {",,", "empty entry (entry 1)"},
      {"FAST,", "empty entry (entry 2)"},
      {"FAST,,SLOW", "empty entry (entry 2)"},
      {"-", "'-' (entry 1) needs a backend name"},
      {"auto,auto", "'auto' more than once (entry 2)"},
      {"-auto", "'-auto' (entry 1) is meaningless"},
      {"FAST,fast", "names backend 'fast' twice (entry 2)"},
      {"FAST,-FAST,auto", "both forces and excludes backend 'FAST'"},
      {"FAST,-SLOW", "exclusions only affect automatic selection"},
  };
  for (const auto& r : rows) {
    INFO(r.spec);
    const auto result = run(r.spec);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == error_code::bad_override);
    CHECK_THAT(result.error().message, ATTNSEL_CONTAINS(r.message_part));
  }
}

TEST_CASE("hostile override strings end in an error, never a crash", "[override]") {
  const std::string huge(1 << 20, 'A');
  const auto r = run(huge.c_str());
  REQUIRE_FALSE(r);
  CHECK(r.error().code == error_code::unknown_backend);
  CHECK(r.error().message.size() < 2000);  // the input is truncated in the message
  const std::string control = std::string("FA\x01ST\n");
  const auto c = run(control.c_str());
  REQUIRE_FALSE(c);
  CHECK_THAT(c.error().message, ATTNSEL_CONTAINS("FA\\x01ST"));
  std::string many;
  for (int i = 0; i < 10000; ++i) many += "SLOW,";
  CHECK(picked(run(many.c_str())) == "error:bad_override");
}

TEST_CASE("prefer mode falls back to automatic selection and records why", "[override]") {
  query q;
  q.head_size = 72;
  select_options prefer;
  prefer.prefer = true;
  const auto r = run("FAST", q, fixtures::hopper_with_flashinfer(), prefer);
  REQUIRE(r);
  CHECK(r->name() == "MEDIUM");
  CHECK(r->fell_back);
  CHECK_FALSE(r->overridden);
  REQUIRE(r->fallback.size() == 1);
  CHECK(r->fallback[0].name == "FAST");
  CHECK(fixtures::codes(r->fallback[0].reasons) == std::set<std::string>{"head_size"});
  const auto honoured = run("SLOW", query{}, fixtures::hopper_with_flashinfer(), prefer);
  CHECK(honoured->name() == "SLOW");
  CHECK_FALSE(honoured->fell_back);
}

TEST_CASE("override_plan exposes the parsed structure", "[override]") {
  const auto reg = fixtures::small_registry();
  const auto plan = override_plan::parse(" FAST , -SLOW , auto ", reg);
  REQUIRE(plan.ok());
  CHECK(plan.has_forced());
  CHECK(plan.explicit_auto());
  CHECK(plan.automatic());
  CHECK(plan.excluded(*reg.index_of("SLOW")));
  CHECK_FALSE(plan.excluded(*reg.index_of("FAST")));
  std::vector<std::string> seen;
  plan.for_each([&](const override_token& t) { seen.emplace_back(t.text); });
  CHECK(seen == std::vector<std::string>{"FAST", "SLOW", "auto"});
}

TEST_CASE("index_set holds positions past 256 inline, and spills only past 16 of them", "[override]") {
  index_set set;
  const std::vector<std::size_t> held{0, 255, 256, 300, 9999, 70000};
  for (const auto i : held) set.insert(i);
  set.insert(300);  // again: still one entry
  for (const auto i : held) CHECK(set.contains(i));
  for (const std::size_t i : {1U, 254U, 257U, 301U, 9998U}) CHECK_FALSE(set.contains(i));
  // Many more than 16 far positions: the rest spill, and every one is still found.
  index_set many;
  for (std::size_t i = 1000; i < 1100; i += 3) many.insert(i);
  for (std::size_t i = 1000; i < 1100; ++i) CHECK(many.contains(i) == ((i - 1000) % 3 == 0));
}

TEST_CASE("an override whose source is none is refused, not reported as forced by nobody", "[override][hardening]") {
  const auto reg = reference_registry();
  const auto p = platform::cuda(9, 0);
  const override_request nobody{"TRITON_ATTN", override_source::none};
  const auto r = select(reg, query{}, p, nobody);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == error_code::bad_override);
  CHECK(r.error().message.find("source none") != std::string::npos);
  const selector bound(reg, p, nobody);
  REQUIRE_FALSE(bound.select(query{}).ok());
  CHECK(bound.select(query{}).error().code == error_code::bad_override);
  CHECK_FALSE(bound.decide(query{}));
  // An empty spec with source none is simply no override.
  CHECK(select(reg, query{}, p, override_request{"", override_source::none}).ok());
}

TEST_CASE("every kernel family's spelling is a backend of the catalog it names", "[override][names]") {
  for (const auto& f : kernel_families)
    for (const auto& n : f.names) {
      if (n.name.empty()) continue;
      INFO(std::string(n.catalog) + " " + std::string(n.name));
      CHECK(builtin_catalog(std::string(n.catalog)).registry.find(n.name) != nullptr);
    }
  // The hint reaches the error: the suggestion is this catalog's name, the message says whose the typed one is.
  const auto r = select(reference_registry(), query{}, platform::cuda(9, 0),
                        override_request{"FLASH_ATTENTION", override_source::api});
  REQUIRE_FALSE(r);
  CHECK(r.error().suggestions == std::vector<std::string>{"FLASH_ATTN"});
  CHECK_THAT(r.error().message,
             ATTNSEL_CONTAINS("'FLASH_ATTENTION' is the torch_sdpa catalog's name for FlashAttention"));
  CHECK(suggest_backend("FLASH_ATN", reference_registry()) == "FLASH_ATTN");  // a typo: the closest name
  CHECK(suggest_backend("QQQQQQQQQQ", reference_registry()).empty());
}

TEST_CASE("feature_set::erase removes one name and keeps the set sorted and shared-safe", "[override][features]") {
  feature_set a{"sinks", "alibi", "softcap"};
  const feature_set copy = a;
  a.erase("alibi");
  CHECK(a == feature_set{"sinks", "softcap"});
  CHECK(copy == feature_set{"alibi", "sinks", "softcap"});  // the copy's shared list is untouched
  a.erase("missing");
  CHECK(a.size() == 2);
  a.erase("sinks");
  a.erase("softcap");
  CHECK(a.empty());
  CHECK(a == feature_set{});
  CHECK(to_string(reason{reason_code::head_size, "head size 72 not in {64, 128}"}) ==
        "head_size: head size 72 not in {64, 128}");
}

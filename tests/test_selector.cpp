// SPDX-License-Identifier: Apache-2.0
// The selector: policy order, domains, conditions, traces, errors and the throwing form.
#include "catch.hpp"
#include "fixtures.hpp"

using namespace attnsel;
using fixtures::find_candidate;

TEST_CASE("automatic selection returns the first supported backend in policy order", "[selector]") {
  const auto reg = fixtures::small_registry();
  query q;
  CHECK(select(reg, q, fixtures::hopper_with_flashinfer())->name() == "FAST");
  CHECK(select(reg, q, platform::cuda(9, 0))->name() == "MEDIUM");  // FAST needs flashinfer
  q.required.insert("alibi");
  CHECK(select(reg, q, fixtures::hopper_with_flashinfer())->name() == "MEDIUM");
  q.required.insert("sinks");
  const auto none = select(reg, q, fixtures::hopper_with_flashinfer());
  REQUIRE_FALSE(none);
  CHECK(none.error().code == error_code::no_backend);
  CHECK_THAT(
      none.error().message,
      ATTNSEL_CONTAINS("No attention backend supports decoder attention (head_size=128, dtype=bfloat16, "
                       "kv_cache_dtype=auto, attn_type=decoder, mode=standard, features=alibi, sinks) on cuda 9.0"));
  CHECK_THAT(none.error().message, ATTNSEL_CONTAINS("FAST: feature alibi not supported (supports: sinks)"));
  CHECK_THAT(none.error().message,
             ATTNSEL_CONTAINS("SLOW: feature alibi not supported (supports: none); feature sinks"));
  CHECK(none.error().candidates.size() == 3);
}

TEST_CASE("the mode picks the policy rule", "[selector]") {
  const auto reg = fixtures::small_registry();
  query q;
  q.mode = attention_mode::mla;
  q.head_size = 576;
  q.head_size_v = 512;
  const auto r = select(reg, q, platform::cuda(9, 0));
  REQUIRE(r);
  CHECK(r->name() == "LATENT");
  CHECK(select(reg, q, platform::cuda(8, 0)).error().code == error_code::no_backend);
}

TEST_CASE("a component condition decides whether a policy entry is tried", "[selector]") {
  const auto reg = fixtures::small_registry();
  auto p = platform::rocm("gfx942");
  CHECK(select(reg, query{}, p)->name() == "SLOW");
  const auto ex = explain(reg, query{}, p);
  const auto* medium = find_candidate(ex.candidates, "MEDIUM");
  REQUIRE(medium);
  CHECK(medium->outcome == verdict::skipped);
  CHECK(medium->reasons.at(0).code == reason_code::policy_condition);
  CHECK(medium->reasons.at(0).message == "the policy tries it only when component aiter is present");
  p.add_component_spec("aiter");
  CHECK(select(reg, query{}, p)->name() == "MEDIUM");
  // The condition orders automatic selection only; forcing does not need it.
  CHECK(select(reg, query{}, platform::rocm("gfx942"), override_request{"MEDIUM"})->name() == "MEDIUM");
}

TEST_CASE("decoder and encoder selections are independent, each with its own override", "[selector][domain]") {
  const auto reg = fixtures::small_registry();
  const auto p = fixtures::hopper_with_flashinfer();
  override_set overrides;
  overrides.decoder = {"SLOW", override_source::flag};
  query dec;
  query enc;
  enc.domain = attention_domain::encoder;
  enc.attn_type = attention_type::encoder_only;
  CHECK(select(reg, dec, p, overrides)->name() == "SLOW");
  CHECK(select(reg, enc, p, overrides)->name() == "VISION");  // decoder override ignored
  CHECK_FALSE(select(reg, enc, p, overrides)->overridden);
  overrides.encoder = {"SLOW", override_source::env};
  const auto forced = select(reg, enc, p, overrides);
  CHECK(forced->name() == "SLOW");
  CHECK(forced->source == override_source::env);
  overrides.decoder = {};
  CHECK(select(reg, dec, p, overrides)->name() == "FAST");
}

TEST_CASE("forcing a backend of the other domain is rejected with a domain reason", "[selector][domain]") {
  const auto reg = fixtures::small_registry();
  query q;
  const auto r = select(reg, q, fixtures::hopper_with_flashinfer(), override_request{"VISION"});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == error_code::backend_rejected);
  CHECK(r.error().candidates.at(0).reasons.at(0).code == reason_code::domain);
}

TEST_CASE("explain lists every candidate with verdicts consistent with select", "[selector][explain]") {
  auto reg = fixtures::small_registry();
  backend_descriptor spare;
  spare.name = "SPARE";  // runs here in standard mode, but the rule does not list it
  reg.add(spare);
  query q;
  q.head_size = 72;
  const auto ex = explain(reg, q, fixtures::hopper_with_flashinfer());
  REQUIRE(ex.result);
  CHECK(ex.result->name() == "MEDIUM");
  CHECK(ex.rule == "decoder cuda mode standard");
  CHECK(ex.note == "fastest first");
  REQUIRE(ex.candidates.size() == 4);
  CHECK(ex.candidates[0].name == "FAST");
  CHECK(ex.candidates[0].outcome == verdict::rejected);
  CHECK(ex.candidates[0].rank == 1);
  CHECK(ex.candidates[1].name == "MEDIUM");
  CHECK(ex.candidates[1].outcome == verdict::selected);
  CHECK(ex.candidates[2].name == "SLOW");
  CHECK(ex.candidates[2].outcome == verdict::supported);
  CHECK(ex.candidates[3].name == "SPARE");  // serves the decoder but not in this rule's order
  CHECK(ex.candidates[3].outcome == verdict::skipped);
  CHECK(ex.candidates[3].reasons.at(0).code == reason_code::not_in_policy);
  CHECK(ex.candidates[3].reasons.size() == 1);           // otherwise it would work: it can be forced
  CHECK_FALSE(find_candidate(ex.candidates, "LATENT"));  // another mode's backend is noise here
  CHECK_FALSE(find_candidate(ex.candidates, "VISION"));  // another domain's too
}

TEST_CASE("explain of a forced backend holds that backend with its reasons", "[selector][explain]") {
  const auto reg = fixtures::small_registry();
  query q;
  q.head_size = 72;
  const auto ex = explain(reg, q, fixtures::hopper_with_flashinfer(), override_request{"FAST"});
  REQUIRE_FALSE(ex.result);
  REQUIRE(ex.candidates.size() == 1);
  CHECK(ex.candidates[0].name == "FAST");
  CHECK(ex.candidates[0].forced);
  CHECK(ex.candidates[0].outcome == verdict::rejected);
  CHECK(ex.rule.empty());
}

TEST_CASE("select_or_throw throws a typed exception carrying the error", "[selector]") {
  const auto reg = fixtures::small_registry();
  query q;
  q.head_size = 72;
  try {
    (void)select_or_throw(reg, q, fixtures::hopper_with_flashinfer(), override_request{"FAST"});
    FAIL("expected selection_exception");
  } catch (const selection_exception& e) {
    CHECK(e.error().code == error_code::backend_rejected);
    CHECK_THAT(std::string(e.what()), ATTNSEL_CONTAINS("Selected backend FAST"));
  }
  CHECK(select_or_throw(reg, query{}, fixtures::hopper_with_flashinfer()).name() == "FAST");
}

TEST_CASE("a selection_result copies, moves and refuses the wrong accessor", "[selector]") {
  const auto reg = fixtures::small_registry();
  query q;
  q.head_size = 72;
  const auto hopper = fixtures::hopper_with_flashinfer();
  const auto failed = select(reg, q, hopper, override_request{"FAST"});
  REQUIRE_FALSE(failed);
  // value() on an error throws the error itself; error() on a success is a logic error.
  CHECK_THROWS_AS((void)failed.value(), selection_exception);
  try {
    (void)failed->rank;
    FAIL("expected selection_exception");
  } catch (const selection_exception& e) {
    CHECK(e.error().code == error_code::backend_rejected);
  }
  const auto chosen = select(reg, query{}, hopper);
  REQUIRE(chosen);
  CHECK_THROWS_AS((void)chosen.error(), std::logic_error);

  // Copies are deep: each owns its error; a moved-from result is a (empty) success.
  auto copy = failed;
  REQUIRE_FALSE(copy);
  CHECK(&copy.error() != &failed.error());
  CHECK(copy.error().message == failed.error().message);
  CHECK(copy.error().candidates.size() == failed.error().candidates.size());
  auto moved = std::move(copy);
  CHECK(moved.error().message == failed.error().message);
  CHECK(copy.ok());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  copy = chosen;     // an error replaced by a success
  REQUIRE(copy);
  CHECK(copy->name() == "FAST");
  copy = moved;  // and back
  REQUIRE_FALSE(copy);
  CHECK(copy.error().code == error_code::backend_rejected);
  const auto& same = copy;
  copy = same;  // self-assignment keeps the value
  CHECK(copy.error().code == error_code::backend_rejected);

  // A prefer-mode success owns its fallback trace: copies and moves keep it.
  select_options prefer;
  prefer.prefer = true;
  const auto fell_back = select(reg, q, hopper, override_request{"FAST"}, prefer);
  REQUIRE(fell_back);
  REQUIRE(fell_back->fell_back);
  REQUIRE_FALSE(fell_back->fallback.empty());
  auto trace = fell_back;
  CHECK(trace->fallback.size() == fell_back->fallback.size());
  auto taken = std::move(trace);
  CHECK(taken->fallback.size() == fell_back->fallback.size());
  taken = failed;
  CHECK_FALSE(taken);
}

TEST_CASE("the chosen kernel negotiates the block size", "[selector]") {
  const auto reg = fixtures::small_registry();
  const auto s = select_or_throw(reg, query{}, fixtures::hopper_with_flashinfer());
  CHECK(s.block_size_for(32) == 32);  // a multiple of 16 is kept
  CHECK(s.block_size_for(8) == 16);   // else the preferred size
  CHECK(s.block_size_for(0) == 16);
  const auto slow = select_or_throw(reg, query{}, platform::xpu());
  CHECK(slow.block_size_for(8) == 8);  // any size
}

TEST_CASE("an empty registry gives no_backend, not a crash", "[selector]") {
  registry empty;
  const auto r = select(empty, query{}, platform::cpu());
  REQUIRE_FALSE(r);
  CHECK(r.error().code == error_code::no_backend);
  CHECK_THAT(r.error().message, ATTNSEL_CONTAINS("no backend serves this domain"));
}

TEST_CASE("errors and reasons format through fmt", "[selector][format]") {
  const auto reg = fixtures::small_registry();
  query q;
  q.head_size = 72;
  const auto r = select(reg, q, fixtures::hopper_with_flashinfer(), override_request{"FAST"});
  CHECK_THAT(fmt::format("{}", r.error()), ATTNSEL_CONTAINS("backend_rejected: Selected backend FAST"));
  CHECK(fmt::format("{}", r.error().candidates[0].reasons[0]) == "head_size: head size 72 not in {64, 128, 256}");
  auto p = platform::rocm("gfx942");
  p.add_component_spec("aiter=0.1.5");
  CHECK(fmt::format("{}", p) == "rocm gfx942 [aiter=0.1.5]");
  CHECK(fmt::format("{}", cuda_capability{9, 0}) == "9.0");
  CHECK_THAT(fmt::format("{}", q), ATTNSEL_CONTAINS("head_size=72"));
}

TEST_CASE("an out-of-range query is bad_query before anything is tried", "[selector][hostile]") {
  const auto reg = fixtures::small_registry();
  const auto p = fixtures::hopper_with_flashinfer();
  struct row {
    const char* what;
    query q;
    const char* message;
  };
  using fixtures::with;
  const std::vector<row> rows = {
      {"zero head size", with([](query& q) { q.head_size = 0; }), "head_size 0 is outside [1, 65536]"},
      {"absurd head size", with([](query& q) { q.head_size = 4000000000u; }), "head_size 4000000000 is outside"},
      {"absurd value head size", with([](query& q) { q.head_size_v = 70000; }),
       "head_size_v 70000 is outside [0, 65536]"},
      {"absurd block size", with([](query& q) { q.block_size = 1u << 30; }), "block_size 1073741824"},
      {"control characters in a feature", with([](query& q) { q.required.insert("sin\x01ks"); }), "is not lower_snake"},
      {"domain out of range", with([](query& q) { q.domain = static_cast<attention_domain>(9); }),
       "domain 9 is not one of decoder"},
      {"phase out of range", with([](query& q) { q.phase = static_cast<attention_phase>(7); }),
       "phase 7 is not one of"},
  };
  for (const auto& r : rows) {
    INFO(r.what);
    const auto result = select(reg, r.q, p, override_request{"FAST"});
    REQUIRE_FALSE(result);
    CHECK(result.error().code == error_code::bad_query);
    CHECK_THAT(result.error().message, ATTNSEL_CONTAINS(r.message));
    CHECK_FALSE(explain(reg, r.q, p).result.ok());
    // The bound selector, with and without its cache, refuses it the same way.
    for (const bool cache : {true, false}) {
      selector_options options;
      options.cache = cache;
      const auto bound = selector(reg, p, override_request{"FAST"}, options).select(r.q);
      REQUIRE_FALSE(bound);
      CHECK(bound.error().code == error_code::bad_query);
    }
  }
}

TEST_CASE("queries and platforms read from JSON reject hostile values", "[selector][hostile]") {
  using nlohmann::json;
  CHECK_THROWS_WITH(query_from_json(json{{"head_size", -3}}), ATTNSEL_CONTAINS("query.head_size"));
  CHECK_THROWS_WITH(query_from_json(json{{"dtype", "float17"}}),
                    ATTNSEL_CONTAINS("query.dtype: expected one of float16"));
  CHECK_THROWS_WITH(query_from_json(json{{"features", {"Sinks"}}}), ATTNSEL_CONTAINS("lower_snake"));
  CHECK_THROWS_WITH(query_from_json(json{{"colour", "red"}}), ATTNSEL_CONTAINS("unknown key \"colour\""));
  CHECK_THROWS_WITH(platform_from_json(json{{"vendor", "quantum"}}), ATTNSEL_CONTAINS("expected one of cuda"));
  CHECK_THROWS_WITH(platform_from_json(json{{"vendor", "cuda"}, {"arch", "sm_"}}),
                    ATTNSEL_CONTAINS("compute capability"));
  CHECK_THROWS_WITH(platform_from_json(json{{"vendor", "rocm"}, {"arch", "gfx"}}), ATTNSEL_CONTAINS("gfx target"));
  CHECK_THROWS_WITH(platform_from_json(json{{"vendor", "cuda"}, {"arch", "99999999999999999999.9"}}),
                    ATTNSEL_CONTAINS("compute capability"));
  // The arch and the components read as --arch and --component read them: one parser for each.
  CHECK_THROWS_WITH(platform_from_json(json{{"vendor", "cpu"}, {"arch", "9.0"}}),
                    ATTNSEL_CONTAINS("platform.arch: '9.0' does not apply to platform cpu"));
  CHECK_THROWS_WITH(platform_from_json(json{{"vendor", "cuda"}, {"components", {"Flash Attn"}}}),
                    ATTNSEL_CONTAINS("platform.components.0: 'Flash Attn' needs a lower_snake NAME"));
  platform cpu(device_vendor::cpu);
  const auto why_arch = set_arch_text(cpu, "9.0");
  CHECK_THROWS_WITH(platform_from_json(json{{"vendor", "cpu"}, {"arch", "9.0"}}), ATTNSEL_CONTAINS(why_arch));
  const auto q = query_from_json(json{{"head_size", 64}, {"features", {"sinks"}}, {"block_size", nullptr}});
  CHECK(q.head_size == 64);
  CHECK(q.required.contains("sinks"));
  CHECK(query_from_json(to_json(q)) == q);
  auto p = platform::rocm("gfx942");
  p.add_component_spec("aiter=0.1.5");
  CHECK(platform_from_json(to_json(p)) == p);
}

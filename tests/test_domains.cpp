// SPDX-License-Identifier: Apache-2.0
// The drafter and linear domains: a drafter that drafts as the decoder unless its catalog says
// otherwise, its inherited override, and linear-attention layers chosen by their kind (the mode).
#include "catch.hpp"
#include "fixtures.hpp"

#include <attnsel/catalog/builtin_catalog.hpp>

#include <string>
#include <vector>

using namespace attnsel;

namespace {

query in(attention_domain d, attention_phase phase = attention_phase::unstated) {
  query q;
  q.domain = d;
  q.phase = phase;
  return q;
}

query linear_layer(attention_mode kind, std::initializer_list<std::string_view> features = {}) {
  query q;
  q.domain = attention_domain::linear;
  q.mode = kind;
  q.required = feature_set(features);
  return q;
}

// The free select and the bound one (cached and not) agree; returns the free one's answer.
selection_result both(const registry& reg, const platform& p, const query& q, const override_set& overrides = {}) {
  auto free_result = select(reg, q, p, overrides);
  for (const bool cache : {true, false}) {
    selector_options so;
    so.cache = cache;
    const selector bound(reg, p, overrides, so);
    for (int round = 0; round < 2; ++round) fixtures::check_same_answer(free_result, bound.select(q));
  }
  return free_result;
}

override_request api(const char* spec) { return override_request{spec, override_source::api}; }

}  // namespace

TEST_CASE("a catalog that states nothing of its drafter drafts as its decoder", "[domains][drafter]") {
  const auto& reg = builtin_catalog("vllm@0.33.0").registry;
  REQUIRE_FALSE(reg.serves(attention_domain::drafter));
  CHECK(reg.selecting_domain(attention_domain::drafter) == attention_domain::decoder);
  for (const auto& p : {platform::cuda(9, 0), platform::cuda(10, 0), platform::rocm("gfx942"), platform::cpu()}) {
    INFO(to_string(p));
    const auto decoder = both(reg, p, in(attention_domain::decoder));
    const auto drafter = both(reg, p, in(attention_domain::drafter));
    REQUIRE(decoder.ok() == drafter.ok());
    if (decoder.ok()) CHECK(decoder->name() == drafter->name());
  }
  const auto ex = explain(reg, in(attention_domain::drafter), platform::cuda(9, 0));
  REQUIRE(ex.result.ok());
  CHECK(ex.rule.find("decoder cuda") == 0);
}

TEST_CASE("a drafter without an override of its own inherits the decoder's, by phase", "[domains][drafter]") {
  const auto& reg = builtin_catalog("vllm@0.33.0").registry;
  const auto hopper = platform::cuda(9, 0);
  override_set overrides;
  overrides.decoder = api("TRITON_ATTN");
  CHECK(both(reg, hopper, in(attention_domain::drafter), overrides)->name() == "TRITON_ATTN");
  CHECK(both(reg, hopper, in(attention_domain::drafter), overrides)->overridden);
  // SGLang's draft extend reads the prefill backend when none is given for the draft.
  overrides.prefill = api("FLEX_ATTENTION");
  CHECK(both(reg, hopper, in(attention_domain::drafter, attention_phase::prefill), overrides)->name() ==
        "FLEX_ATTENTION");
  CHECK(both(reg, hopper, in(attention_domain::drafter, attention_phase::decode), overrides)->name() == "TRITON_ATTN");
  // Its own override (vLLM's speculative_config.attention_backend) serves every phase; "auto" selects anew.
  overrides.drafter = api("auto");
  CHECK(both(reg, hopper, in(attention_domain::drafter, attention_phase::prefill), overrides)->name() == "FLASH_ATTN");
  CHECK_FALSE(both(reg, hopper, in(attention_domain::drafter), overrides)->overridden);
  CHECK(both(reg, hopper, in(attention_domain::decoder), overrides)->name() == "TRITON_ATTN");
  CHECK(overrides.for_domain(attention_domain::drafter).spec == "auto");

  const selector bound(reg, hopper, overrides);
  CHECK(bound.bound_override(attention_domain::drafter).spec == "auto");
  CHECK(bound.bound_override(attention_domain::decoder).spec == "TRITON_ATTN");
}

TEST_CASE("a catalog that serves the drafter selects it with its own backends and rules", "[domains][drafter]") {
  const auto c = parse_catalog_text(R"({"format": "attnsel-catalog", "version": 2, "name": "drafts",
    "backends": [
      {"name": "BIG", "domains": ["decoder"], "platforms": [{"vendor": "cuda"}]},
      {"name": "SMALL", "domains": ["decoder", "drafter"], "platforms": [{"vendor": "cuda"}]}],
    "policies": [{"domain": "decoder", "vendor": "cuda", "order": ["BIG", "SMALL"]},
                 {"domain": "drafter", "vendor": "cuda", "order": ["SMALL"]}]})",
                                    "drafts.json");
  const auto p = platform::cuda(9, 0);
  REQUIRE(c.registry.serves(attention_domain::drafter));
  CHECK(both(c.registry, p, in(attention_domain::decoder))->name() == "BIG");
  CHECK(both(c.registry, p, in(attention_domain::drafter))->name() == "SMALL");
  override_set inherit;
  inherit.decoder = api("BIG");
  const auto refused = both(c.registry, p, in(attention_domain::drafter), inherit);
  REQUIRE_FALSE(refused.ok());  // the inherited override names a backend that does not draft
  CHECK(refused.error().code == error_code::backend_rejected);
  CHECK(refused.error().message.find("serves {decoder}, not the drafter domain") != std::string::npos);
  CHECK(parse_catalog_text(json_text(to_json(c)), "again.json").registry == c.registry);
}

TEST_CASE("vLLM 0.33.0 picks a linear layer's backend by its kind and reads no override", "[domains][linear]") {
  const auto& reg = builtin_catalog("vllm@0.33.0").registry;
  const std::vector<std::pair<attention_mode, const char*>> kinds = {
      {attention_mode::mamba1, "MAMBA1_ATTN"},         {attention_mode::mamba2, "MAMBA2_ATTN"},
      {attention_mode::short_conv, "SHORT_CONV_ATTN"}, {attention_mode::lightning, "LINEAR_ATTN"},
      {attention_mode::gated_delta, "GDN_ATTN"},
  };
  override_set forced;
  forced.linear = api("FLASH_ATTN");
  for (const auto& p : {platform::cuda(9, 0), platform::rocm("gfx942"), platform::xpu(), platform::cpu()}) {
    for (const auto& [kind, name] : kinds) {
      INFO(to_string(p) << " " << name);
      CHECK(both(reg, p, linear_layer(kind))->name() == name);
      const auto ignored = both(reg, p, linear_layer(kind), forced);
      CHECK(ignored->name() == name);
      CHECK(ignored->fell_back);
      const auto invariant = both(reg, p, linear_layer(kind, {"batch_invariant"}));
      REQUIRE_FALSE(invariant.ok());
      CHECK(invariant.error().code == error_code::no_backend);
    }
    CHECK(both(reg, p, linear_layer(attention_mode::gated_delta, {"kda"}))->name() == "GDN_ATTN");
  }
  // A decoder query never gets a linear backend, nor a linear query a decoder one.
  CHECK(both(reg, platform::cuda(9, 0), in(attention_domain::decoder))->name() == "FLASH_ATTN");
  query standard_linear = in(attention_domain::linear);
  CHECK_FALSE(select(reg, standard_linear, platform::cuda(9, 0)).ok());
}

TEST_CASE("a linear layer in a stated phase reads that phase's override, else the linear one", "[domains][linear]") {
  // SGLang 0.5.23: --linear-attn-prefill-backend / --linear-attn-decode-backend override
  // --linear-attn-backend in their phase. The free select and the bound selector (cached and not) agree.
  const auto& reg = builtin_catalog("sglang").registry;
  const auto p = platform::cuda(8, 0);
  override_set overrides;
  overrides.linear = api("TRITON_LINEAR");
  overrides.linear_decode = api("-TRITON_LINEAR");
  const auto in_phase = [](attention_phase phase) {
    auto q = linear_layer(attention_mode::gated_delta);
    q.phase = phase;
    return q;
  };
  for (const auto phase : {attention_phase::prefill, attention_phase::unstated}) {
    const auto r = both(reg, p, in_phase(phase), overrides);
    REQUIRE(r.ok());
    CHECK(r->name() == "TRITON_LINEAR");
    CHECK(r->overridden);
  }
  // Decode reads its own override, which excludes the linear one's backend.
  const auto decode = both(reg, p, in_phase(attention_phase::decode), overrides);
  CHECK((!decode.ok() || (decode->name() != "TRITON_LINEAR" && !decode->overridden)));
  // Without it, decode reads the linear override; a decoder's phase override never reaches a linear layer.
  overrides.linear_decode.reset();
  overrides.decode = api("-TRITON_LINEAR");
  const auto inherited = both(reg, p, in_phase(attention_phase::decode), overrides);
  REQUIRE(inherited.ok());
  CHECK(inherited->name() == "TRITON_LINEAR");
  CHECK(inherited->overridden);
}

TEST_CASE("a catalog without linear backends says so", "[domains][linear]") {
  const auto& reg = builtin_catalog("sglang@main-2026-12").registry;
  REQUIRE_FALSE(reg.serves(attention_domain::linear));
  const auto r = both(reg, platform::cuda(9, 0), linear_layer(attention_mode::gated_delta));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == error_code::no_backend);
  // The release catalog serves linear layers with SGLang's kernels, each kind its own.
  const auto& release = builtin_catalog("sglang@0.5.23").registry;
  REQUIRE(release.serves(attention_domain::linear));
  CHECK(both(release, platform::cuda(8, 0), linear_layer(attention_mode::gated_delta))->name() == "TRITON_LINEAR");
  CHECK(both(release, platform::cuda(8, 0), linear_layer(attention_mode::mamba2))->name() == "TRITON_MAMBA2");
  CHECK(both(release, platform::cpu(), linear_layer(attention_mode::short_conv))->name() == "SHORT_CONV");
}

TEST_CASE("a backend's own check sees a drafter that drafts as the decoder in the decoder domain",
          "[domains][drafter]") {
  registry reg;
  backend_descriptor b;
  b.name = "PICKY";
  b.extra_check = [](const capabilities&, const query& q, const platform&, std::string* why) {
    if (q.domain == attention_domain::decoder) return true;
    if (why != nullptr) *why = "saw the " + std::string(to_string(q.domain)) + " domain";
    return false;
  };
  reg.add(b);
  for (const bool cache : {true, false}) {
    selector_options so;
    so.cache = cache;
    const selector bound(reg, platform::cuda(9, 0), override_set{}, so);
    CHECK(bound.select(in(attention_domain::drafter))->name() == "PICKY");
  }
  CHECK(select(reg, in(attention_domain::drafter), platform::cuda(9, 0))->name() == "PICKY");
}

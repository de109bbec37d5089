// SPDX-License-Identifier: Apache-2.0
// Catalog format 2: the call's shape and phase as query fields, descriptor limits, policy conditions,
// per-phase overrides and the prefill/decode plan.
#include "catch.hpp"

#include <attnsel/all.hpp>
#include <attnsel/core/impl/decision_cache.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace attnsel;

namespace {

platform h200() {
  platform p(device_vendor::cuda);
  p.set_capability({9, 0});
  p.add_component_spec("cudnn=9.19.0");
  p.add_component_spec("cudnn_preferred");
  return p;
}

// One backend whose only variant carries the given limits.
backend_descriptor limited(const std::string& name) {
  backend_descriptor b;
  b.name = name;
  b.caps.attn_types = {attention_type::decoder, attention_type::encoder_only};
  b.caps.features = {"dropout"};
  return b;
}

std::vector<reason_code> codes(const backend_descriptor& b, const query& q, const platform& p) {
  std::vector<reason_code> out;
  for (const auto& r : check_backend(b, q, p)) out.push_back(r.code);
  return out;
}

std::string messages(const backend_descriptor& b, const query& q, const platform& p) {
  std::string out;
  for (const auto& r : check_backend(b, q, p)) out += r.message + "\n";
  return out;
}

policy_entry entry(const char* name) {
  policy_entry e;
  e.backend = name;
  return e;
}

catalog load(const std::string& text) { return parse_catalog(parse_json_document(text, "t.json"), "t.json"); }

std::string load_error(const std::string& text) {
  try {
    (void)load(text);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "loaded";
}

}  // namespace

TEST_CASE("query: the call's fields are validated, compared and printed") {
  query q;
  CHECK(is_valid(q));
  q.seq_len_q = limits::seq_len + 1;
  CHECK_FALSE(is_valid(q));
  CHECK(validation_message(q).find("seq_len_q") != std::string::npos);
  q.seq_len_q = 1;
  q.batch_size = limits::batch_size + 1;
  CHECK_FALSE(is_valid(q));
  q.batch_size = 4;
  q.num_heads = 6;
  q.num_kv_heads = 4;
  CHECK_FALSE(is_valid(q));
  CHECK(validation_message(q) == "num_heads 6 is not a multiple of num_kv_heads 4");
  q.num_kv_heads = 2;
  CHECK(is_valid(q));
  q.phase = attention_phase::decode;
  q.seq_len_kv = 4096;
  const auto text = to_string(q);
  CHECK(text.find("phase=decode") != std::string::npos);
  CHECK(text.find("seq_len_q=1") != std::string::npos);
  CHECK(text.find("seq_len_kv=4096") != std::string::npos);
  CHECK(text.find("batch_size=4") != std::string::npos);
  CHECK(text.find("num_kv_heads=2") != std::string::npos);
  query other = q;
  CHECK(other == q);
  other.seq_len_kv = 4097;
  CHECK_FALSE(other == q);

  auto bad = q;
  bad.seq_len_q = 0;
  const auto r = select(
      reference_registry(),
      [] {
        query x;
        x.seq_len_kv = limits::seq_len + 1;
        return x;
      }(),
      h200());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == error_code::bad_query);
}

TEST_CASE("shape ranges: a stated field out of range fails with its own code; an unstated one never does") {
  auto b = limited("RANGED");
  b.caps.shape[shape_field::seq_len_kv] = count_range{2, 1u << 20};
  b.caps.shape[shape_field::batch_size] = count_range{1, 65535};
  b.caps.shape[shape_field::gqa_group] = count_range{1, 1};
  const platform p(device_vendor::cpu);
  query q;
  CHECK(supports(b, q, p));  // nothing stated

  q.seq_len_kv = 1;
  CHECK(codes(b, q, p) == std::vector<reason_code>{reason_code::seq_len});
  CHECK(messages(b, q, p) == "seq_len_kv 1 is outside [2, 1048576]\n");
  q.seq_len_kv = 2;
  CHECK(supports(b, q, p));

  q.batch_size = 65536;
  CHECK(codes(b, q, p) == std::vector<reason_code>{reason_code::batch_size});
  q.batch_size = 65535;
  CHECK(supports(b, q, p));

  q.num_heads = 32;
  CHECK(supports(b, q, p));  // num_kv_heads unstated: no group
  q.num_kv_heads = 8;
  CHECK(codes(b, q, p) == std::vector<reason_code>{reason_code::gqa_group});
  CHECK(messages(b, q, p) == "gqa_group 4 (num_heads 32 / num_kv_heads 8) is outside [1, 1]\n");
  q.num_kv_heads = 32;
  CHECK(supports(b, q, p));

  // Both lengths out of range: the explain path reports both, the fast path the first.
  b.caps.shape[shape_field::seq_len_q] = count_range{16, 64};
  q.seq_len_q = 1;
  q.seq_len_kv = 1;
  CHECK(codes(b, q, p) == std::vector<reason_code>{reason_code::seq_len, reason_code::seq_len});
  CHECK(first_failure(b, q, p) == reason_code::seq_len);
}

TEST_CASE("call rules: when the condition holds the requirement must; unstated conditions are not applied") {
  auto b = limited("RULED");
  call_rule causal;
  causal.when.attn_types = {attention_type::decoder};
  causal.require.equal_seq_lens = true;
  causal.note = "bottom-right causal mask";
  call_rule single;
  single.when.features = {"dropout"};
  single.when.shape[shape_field::seq_len_q] = count_range{1, 1};
  single.require.never = true;
  b.caps.call_rules = {causal, single};
  const platform p(device_vendor::cpu);

  query q;  // causal by default (attn_type decoder), lengths unstated
  CHECK(supports(b, q, p));
  q.seq_len_q = 1;
  CHECK(supports(b, q, p));  // seq_len_kv still unstated
  q.seq_len_kv = 256;
  CHECK(codes(b, q, p) == std::vector<reason_code>{reason_code::call_rule});
  CHECK(messages(b, q, p) ==
        "when attn_type decoder, requires seq_len_q == seq_len_kv: seq_len_q 1, seq_len_kv 256 "
        "(bottom-right causal mask)\n");
  q.attn_type = attention_type::encoder_only;  // not causal: the rule's condition fails
  CHECK(supports(b, q, p));

  q.required.insert("dropout");
  CHECK(codes(b, q, p) == std::vector<reason_code>{reason_code::call_rule});
  CHECK(messages(b, q, p).find("when +dropout, seq_len_q [1, 1], requires never") == 0);
  q.seq_len_q = 2;
  CHECK(supports(b, q, p));
}

TEST_CASE("call rules read head sizes and component versions") {
  auto b = limited("VERSIONED");
  b.caps.head_sizes = head_size_spec::range(8, 256, 8);
  call_rule old;
  old.when.components = {{"cudnn", std::nullopt, parse_component_version("9.10.0")}};
  old.require.head_sizes = head_size_spec::range(8, 128, 8);
  b.caps.call_rules = {old};
  platform p(device_vendor::cuda);
  p.set_capability({9, 0});
  p.add_component_spec("cudnn=9.8.0");
  query q;
  q.head_size = 256;
  CHECK(codes(b, q, p) == std::vector<reason_code>{reason_code::call_rule});
  q.head_size = 128;
  CHECK(supports(b, q, p));
  q.head_size = 256;
  platform newer(device_vendor::cuda);
  newer.set_capability({9, 0});
  newer.add_component_spec("cudnn=9.10.0");
  CHECK(supports(b, q, newer));
}

TEST_CASE("component requirements take an exclusive upper version") {
  auto b = limited("WINDOW");
  b.caps.requires_components = {{"cudnn", parse_component_version("9.0"), parse_component_version("9.14")}};
  platform p(device_vendor::cuda);
  p.add_component_spec("cudnn=9.14.0");
  query q;
  CHECK(codes(b, q, p) == std::vector<reason_code>{reason_code::component});
  CHECK(messages(b, q, p) == "needs cudnn >= 9.0, < 9.14, found 9.14.0\n");
  platform ok(device_vendor::cuda);
  ok.add_component_spec("cudnn=9.13.5");
  CHECK(supports(b, q, ok));
}

TEST_CASE("one version range: requirements, call conditions and model rules admit the same versions") {
  // component_requirement is component_condition: the gate, call conditions, the diff and model rules
  // all ask admits().
  static_assert(std::is_same_v<component_requirement, component_condition>);
  const auto v = [](const char* text) { return std::optional<component_version>(parse_component_version(text)); };
  const component_condition any{"cudnn", std::nullopt, std::nullopt};
  CHECK(any.admits(std::nullopt));
  CHECK(any.admits(v("1.0")));
  const component_condition window{"cudnn", v("9.0"), v("9.14")};
  CHECK_FALSE(window.admits(std::nullopt));  // a bound needs a version
  CHECK_FALSE(window.admits(v("8.9.7")));
  CHECK(window.admits(v("9.0")));  // the minimum is inclusive
  CHECK(window.admits(v("9.13.5")));
  CHECK_FALSE(window.admits(v("9.14")));  // the upper bound is exclusive
  const component_condition below{"cudnn", std::nullopt, v("9.14")};
  CHECK(below.admits(v("2.0")));
  CHECK_FALSE(below.admits(std::nullopt));
  REQUIRE(v("8.9.7"));
  // The platform side, through a call condition: absent, present without a version, in range.
  const auto holds = [](const component_condition& c, const platform& p) {
    call_condition when;
    when.components = {c};
    return when.evaluate(query{}, p);
  };
  platform p(device_vendor::cuda);
  CHECK(holds(any, p) == truth::no);
  p.add_component_spec("cudnn");
  CHECK(holds(any, p) == truth::yes);
  CHECK(holds(window, p) == truth::no);
  platform versioned(device_vendor::cuda);
  versioned.add_component_spec("cudnn=9.10.0");
  CHECK(holds(window, versioned) == truth::yes);
}

TEST_CASE("a list of platforms takes every platform when empty, else those one constraint accepts") {
  platform hopper(device_vendor::cuda);
  hopper.set_capability({9, 0});
  platform ampere(device_vendor::cuda);
  ampere.set_capability({8, 0});
  const platform cpu(device_vendor::cpu);
  CHECK(platforms_accept({}, hopper));
  CHECK(platforms_accept({}, cpu));
  platform_constraint sm90;
  sm90.vendor = device_vendor::cuda;
  sm90.min_capability = cuda_capability{9, 0};
  platform_constraint host;
  host.vendor = device_vendor::cpu;
  CHECK(platforms_accept({sm90}, hopper));
  CHECK_FALSE(platforms_accept({sm90}, ampere));
  CHECK_FALSE(platforms_accept({sm90}, cpu));
  CHECK(platforms_accept({sm90, host}, cpu));
  CHECK(detail::platforms_name_vendor({}, device_vendor::rocm));
  CHECK(detail::platforms_name_vendor({sm90}, device_vendor::cuda));
  CHECK_FALSE(detail::platforms_name_vendor({sm90, host}, device_vendor::rocm));
}

TEST_CASE("head sizes by dtype replace the head and value head sizes for that dtype") {
  auto b = limited("ALIGNED");
  b.caps.head_sizes = head_size_spec::range(8, UINT32_MAX, 8);
  b.caps.value_head_sizes = head_size_spec::range(8, UINT32_MAX, 8);
  b.caps.head_sizes_by_dtype = {{data_type::float32, head_size_spec::range(4, UINT32_MAX, 4)}};
  const platform p(device_vendor::cpu);
  query q;
  q.head_size = 12;
  q.dtype = data_type::float16;
  CHECK(codes(b, q, p) == std::vector<reason_code>{reason_code::head_size});
  q.dtype = data_type::float32;
  CHECK(supports(b, q, p));
  q.head_size_v = 6;
  CHECK(messages(b, q, p) == "value head size 6 not in [4, inf] multiple of 4 for float32\n");
}

TEST_CASE("policy: phase and shape conditions on rules and entries hold only for stated fields") {
  registry reg;
  for (const char* name : {"ALPHA", "BETA"}) {
    backend_descriptor b;
    b.name = name;
    reg.add(b);
  }
  policy_rule decode;
  decode.vendor = device_vendor::cpu;
  decode.phases = {attention_phase::decode};
  decode.order = {entry("BETA"), entry("ALPHA")};
  policy_rule rest;
  rest.vendor = device_vendor::cpu;
  policy_entry long_prompts = entry("BETA");
  long_prompts.shape[shape_field::seq_len_q] = count_range{129, UINT32_MAX};
  rest.order = {long_prompts, entry("ALPHA")};
  priority_policy policy;
  policy.rules = {decode, rest};
  reg.set_policy(policy);
  const platform p(device_vendor::cpu);

  query q;
  CHECK(select(reg, q, p)->name() == "ALPHA");  // phase unstated: rule 2; seq_len_q unstated: BETA skipped
  q.phase = attention_phase::decode;
  CHECK(select(reg, q, p)->name() == "BETA");
  q.phase = attention_phase::prefill;
  CHECK(select(reg, q, p)->name() == "ALPHA");
  q.seq_len_q = 129;
  CHECK(select(reg, q, p)->name() == "BETA");
  q.seq_len_q = 128;
  const auto ex = explain(reg, q, p);
  CHECK(ex.result->name() == "ALPHA");
  REQUIRE(ex.candidates.size() >= 1);
  CHECK(ex.candidates[0].name == "BETA");
  CHECK(ex.candidates[0].reasons.at(0).code == reason_code::policy_condition);
  CHECK(ex.candidates[0].reasons.at(0).message == "the policy tries it only when seq_len_q is in [129, inf]");

  // Unstated: explain names what the answer hangs on.
  const auto unstated = explain(reg, query{}, p).unstated;
  REQUIRE(unstated.size() == 2);
  CHECK(unstated[0].subject == "policy rule decoder cpu phase decode");
  CHECK(unstated[0].fields == "phase");
  CHECK(unstated[1].subject == "policy entry BETA");
  CHECK(unstated[1].fields == "seq_len_q");
  CHECK(explain(
            reg,
            [] {
              query x;
              x.phase = attention_phase::decode;
              return x;
            }(),
            p)
            .unstated.empty());
}

TEST_CASE("explain lists variant limits that read unstated fields") {
  const auto reg = builtin_registry("torch_sdpa");
  query q;
  q.head_size = 64;
  q.dtype = data_type::float16;
  const auto ex = explain(reg, q, h200());
  CHECK(ex.result->name() == "CUDNN_ATTENTION");
  bool kv = false, causal = false;
  for (const auto& u : ex.unstated) {
    kv = kv || (u.subject == "CUDNN_ATTENTION/SM90" && u.fields == "seq_len_kv");
    causal = causal || (u.subject == "FLASH_ATTENTION/CUDA_FA2" && u.fields == "seq_len_q, seq_len_kv");
  }
  CHECK(kv);
  CHECK(causal);
}

TEST_CASE("torch_sdpa: the shape rules of PyTorch 2.11 on an H200") {
  const auto reg = builtin_registry("torch_sdpa");
  const auto p = h200();
  query q;
  q.head_size = 64;
  q.dtype = data_type::float16;
  q.attn_type = attention_type::encoder_only;  // not causal
  q.seq_len_q = 16;
  q.seq_len_kv = 1;
  CHECK(select(reg, q, p)->name() == "FLASH_ATTENTION");  // cuDNN refuses a key length of 1
  q.attn_type = attention_type::decoder;
  CHECK(select(reg, q, p)->name() == "EFFICIENT_ATTENTION");  // flash refuses non-square causal
  q.seq_len_q = 1;
  q.seq_len_kv = 128;
  CHECK(select(reg, q, p)->name() == "CUDNN_ATTENTION");  // top-left causal, any lengths
  q.required = {"dropout"};
  q.attn_type = attention_type::encoder_only;
  CHECK(select(reg, q, p)->name() == "FLASH_ATTENTION");  // one query token with dropout
  q.required = {};
  q.dtype = data_type::float32;
  q.head_size = 12;
  CHECK(select(reg, q, p)->name() == "EFFICIENT_ATTENTION");  // fp32 aligns to 4
  q.head_size = 2;
  CHECK(select(reg, q, p)->name() == "MATH");
}

TEST_CASE("overrides: a phase override applies to that phase only and inherits the decoder override") {
  const auto reg = reference_registry();
  platform p(device_vendor::cuda);
  p.set_capability({9, 0});
  p.add_component_spec("flashinfer");
  override_set o;
  o.decoder = {"TRITON_ATTN"};
  query q;
  CHECK(&o.for_query(q) == &o.decoder);
  q.phase = attention_phase::decode;
  CHECK(&o.for_query(q) == &o.decoder);  // inherits
  o.decode = override_request{"FLASHINFER"};
  CHECK(o.for_query(q).spec == "FLASHINFER");
  q.phase = attention_phase::prefill;
  CHECK(o.for_query(q).spec == "TRITON_ATTN");
  q.domain = attention_domain::encoder;
  q.phase = attention_phase::decode;
  CHECK(&o.for_query(q) == &o.encoder);

  query layer;
  const auto plan = plan_phases(reg, layer, p, o);
  REQUIRE(plan.ok());
  CHECK(plan.prefill->name() == "TRITON_ATTN");
  CHECK(plan.decode->name() == "FLASHINFER");
  CHECK(plan.block_size != 0);
  CHECK(plan.prefill->block_size_for(plan.block_size) == plan.block_size);
  CHECK(plan.decode->block_size_for(plan.block_size) == plan.block_size);
}

TEST_CASE("plan: two backends share the least common multiple of their block sizes, else a clear error") {
  registry reg;
  backend_descriptor a;
  a.name = "SIXTEEN";
  a.caps.block_size_multiples = {16};
  a.caps.preferred_block_size = 16;
  backend_descriptor b;
  b.name = "SIXTY_FOUR";
  b.caps.block_size_multiples = {64};
  b.caps.preferred_block_size = 64;
  reg.add(a);
  reg.add(b);
  override_set o;
  o.prefill = override_request{"SIXTY_FOUR"};
  o.decode = override_request{"SIXTEEN"};
  const platform p(device_vendor::cpu);
  auto plan = plan_phases(reg, query{}, p, o);
  CHECK(plan.block_size == 64);  // decode's 16 is not a multiple of 64; prefill's 64 is one of 16
  CHECK(plan.ok());
  const auto with_base = [&](std::uint32_t base) {
    auto c = a;
    c.caps.block_size_multiples = {base};
    c.caps.preferred_block_size = base;
    reg.add_or_replace_all({c});
  };
  // 64 and 48: neither accepts the other's, both accept 192 (this was reported as a conflict).
  with_base(48);
  plan = plan_phases(reg, query{}, p, o);
  CHECK(plan.ok());
  CHECK(plan.block_size == 192);
  CHECK(plan.conflict.empty());
  query pinned;
  pinned.block_size = 192;
  plan = plan_phases(reg, pinned, p, o);
  CHECK(plan.ok());
  CHECK(plan.block_size == 192);
  // No common multiple within limits::block_size: a conflict that names both wishes and the bound.
  with_base(limits::block_size - 1);
  plan = plan_phases(reg, query{}, p, o);
  CHECK_FALSE(plan.ok());
  CHECK(plan.block_size == 0);
  CHECK(plan.conflict == "prefill backend SIXTY_FOUR wants KV-cache block size 64 and decode backend SIXTEEN wants " +
                             std::to_string(limits::block_size - 1) + "; no block size up to " +
                             std::to_string(limits::block_size) + " suits both");
}

TEST_CASE("plan: each phase may have its own query (MLA prefills with per-head sizes, decodes latent)") {
  const auto reg = reference_registry();
  auto p = platform::cuda(10, 0);
  p.add_component_spec("flashinfer");
  query decode;
  decode.mode = attention_mode::mla;
  decode.head_size = 576;  // kv_lora_rank 512 + qk_rope 64
  query prefill = decode;
  prefill.head_size = 192;  // qk_nope 128 + qk_rope 64
  prefill.head_size_v = 128;
  auto plan = plan_phases(reg, prefill, decode, p);
  REQUIRE(plan.prefill.ok());
  REQUIRE(plan.decode.ok());
  CHECK(plan.prefill->name() == "MLA_PREFILL_FLASH_ATTN");
  CHECK(plan.decode->name() != plan.prefill->name());
  CHECK(plan.prefill_query.head_size == 192);
  CHECK(plan.prefill_query.phase == attention_phase::prefill);
  CHECK(plan.decode_query.head_size == 576);
  CHECK(plan.decode_query.phase == attention_phase::decode);
  // The layer form plans both phases with the latent size: no prefill backend takes 576.
  CHECK_FALSE(plan_phases(reg, decode, p).prefill.ok());
  // One KV cache has one dtype and one block size.
  auto other_dtype = prefill;
  other_dtype.kv_cache_dtype = cache_dtype::fp8;
  CHECK_THROWS_AS(plan_phases(reg, other_dtype, decode, p), std::invalid_argument);
  auto pinned_prefill = prefill;
  pinned_prefill.block_size = 64;
  auto pinned_decode = decode;
  pinned_decode.block_size = 32;
  CHECK_THROWS_AS(plan_phases(reg, pinned_prefill, pinned_decode, p), std::invalid_argument);
  // A size pinned on one side binds both, or is a conflict naming the side that refuses it.
  plan = plan_phases(reg, pinned_prefill, decode, p);
  REQUIRE(plan.prefill.ok());
  REQUIRE(plan.decode.ok());
  if (plan.conflict.empty())
    CHECK(plan.block_size == 64);
  else
    CHECK(plan.conflict.find("the pinned KV-cache block size 64 is not accepted by") == 0);
}

TEST_CASE("catalog format 2: loads, round-trips, and refuses its keys in a version-1 file") {
  const std::string doc = R"({"format": "attnsel-catalog", "version": 2, "name": "t",
    "backends": [{"name": "A", "domains": ["decoder"], "seq_len_kv": {"min": 2},
                  "requires": [{"component": "cudnn", "min_version": "9.0", "below_version": "9.14"}],
                  "variants": [{"name": "V", "head_sizes_by_dtype": {"float32": {"min": 4, "multiple_of": 4}},
                                "call_rules": [{"when": {"features": ["dropout"], "seq_len_q": {"max": 1}},
                                                "require": {"never": true}, "note": "n"}]},
                               {"name": "W", "seq_len_kv": "any"}]},
                 {"name": "B", "domains": ["decoder"]}],
    "policies": [{"domain": "decoder", "vendor": "cuda", "phases": ["decode"], "seq_len_kv": {"min": 1024},
                  "order": [{"backend": "B", "phases": ["decode"], "batch_size": {"max": 8}}, "A"]}]})";
  const auto c = load(doc);
  const auto& a = *c.registry.find("A");
  CHECK(a.caps.shape[shape_field::seq_len_kv] == count_range{2, UINT32_MAX});
  CHECK(a.variants[0].shape[shape_field::seq_len_kv].has_value());        // inherited
  CHECK_FALSE(a.variants[1].shape[shape_field::seq_len_kv].has_value());  // "any" drops it
  CHECK(a.variants[0].call_rules.size() == 1);
  CHECK(a.caps.requires_components[0].below_version == parse_component_version("9.14"));
  const auto& rule = c.registry.policy().rules.at(0);
  CHECK(rule.phases == phase_set{attention_phase::decode});
  CHECK(rule.order[0].shape[shape_field::batch_size] == count_range{1, 8});

  const auto written = to_json(c);
  CHECK(written["version"] == 2);
  CHECK(parse_catalog(written, "again") == c);

  // A catalog without format-2 keys is still written as version 1.
  CHECK(to_json(builtin_catalog("vllm@00159db"))["version"] == 1);

  CHECK(load_error(R"({"format": "attnsel-catalog", "version": 1, "name": "t",
    "backends": [{"name": "A", "domains": ["decoder"], "seq_len_q": {"min": 2}}]})") ==
        "t.json: /backends/0/seq_len_q: this key needs catalog version 2; the document says version 1");
  CHECK(load_error(R"({"format": "attnsel-catalog", "version": 3, "name": "t", "backends": []})")
            .find("unsupported catalog version 3; this library reads versions 1 to 2") != std::string::npos);
  CHECK(load_error(R"({"format": "attnsel-catalog", "version": 2, "name": "t",
    "backends": [{"name": "A", "domains": ["decoder"], "seq_len_q": {"min": 9, "max": 2}}]})") ==
        "t.json: /backends/0/seq_len_q: range is empty: min 9 > max 2");
  CHECK(load_error(R"({"format": "attnsel-catalog", "version": 2, "name": "t",
    "backends": [{"name": "A", "domains": ["decoder"], "call_rules": [{"when": {"never": true}, "require": {"never": true}}]}]})")
            .find("\"never\" belongs in a rule's \"require\"") != std::string::npos);
  CHECK(load_error(R"({"format": "attnsel-catalog", "version": 2, "name": "t",
    "backends": [{"name": "A", "domains": ["decoder"], "call_rules": [{"require": {}}]}]})")
            .find("expected a non-empty condition") != std::string::npos);
  CHECK(load_error(R"({"format": "attnsel-catalog", "version": 2, "name": "t",
    "backends": [{"name": "A", "domains": ["decoder"]}],
    "policies": [{"domain": "decoder", "vendor": "cuda", "phases": ["unstated"], "order": ["A"]}]})")
            .find("\"unstated\" is not a phase a policy can name") != std::string::npos);
  CHECK(load_error(R"({"format": "attnsel-catalog", "version": 2, "name": "t",
    "backends": [{"name": "A", "domains": ["decoder"], "requires": [{"component": "x", "min_version": "2", "below_version": "1"}]}]})")
            .find("version range is empty") != std::string::npos);
}

TEST_CASE("report JSON carries the call's fields both ways") {
  query q;
  q.phase = attention_phase::prefill;
  q.seq_len_q = 512;
  q.seq_len_kv = 512;
  q.batch_size = 3;
  q.num_heads = 32;
  q.num_kv_heads = 8;
  const auto j = to_json(q);
  CHECK(j["phase"] == "prefill");
  CHECK(j["num_kv_heads"] == 8);
  CHECK(query_from_json(j) == q);
  CHECK(to_json(query{})["phase"].is_null());
  CHECK(query_from_json(to_json(query{})) == query{});
}

TEST_CASE("bound selector: shape classes keep the cache exact, and warm, across ever-new lengths") {
  const auto reg = builtin_registry("torch_sdpa");
  const auto p = h200();
  override_set overrides;
  overrides.decode = override_request{"FLASH_ATTENTION,auto"};
  selector_options roomy;
  roomy.cache_slots = std::size_t{1} << 14;  // room for every class: the warm check measures classes, not capacity
  const selector bound(reg, p, overrides, roomy);
  const selector uncached(reg, p, overrides, [] {
    selector_options o;
    o.cache = false;
    return o;
  }());
  std::uint32_t state = 12345;
  const auto next = [&](std::uint32_t n) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % n;
  };
  const std::vector<std::uint32_t> heads = {12, 64, 100, 128, 256, 264};
  std::size_t compared = 0;
  for (int round = 0; round < 2; ++round) {
    std::uint32_t seed = 777;  // the same queries twice: the second round is all hits
    state = seed;
    for (int i = 0; i < 3000; ++i) {
      query q;
      q.head_size = heads[next(static_cast<std::uint32_t>(heads.size()))];
      q.dtype = static_cast<data_type>(next(3));
      q.attn_type = next(2) ? attention_type::decoder : attention_type::encoder_only;
      q.phase = static_cast<attention_phase>(next(3));
      q.seq_len_q = next(4) == 0 ? 0 : 1 + next(next(2) ? 4 : 5000);
      q.seq_len_kv = next(4) == 0 ? 0 : (next(3) == 0 ? q.seq_len_q : 1 + next(next(2) ? 4 : 5000));
      q.batch_size = next(2) ? 0 : 1 + next(64);
      if (next(4) == 0) {  // heads keyed by value: a group that does not divide is never a hit
        q.num_heads = 8;
        q.num_kv_heads = next(4) == 0 ? 3 : 2;
      }
      if (next(3) == 0) q.required = {"dropout"};
      const auto free = select(reg, q, p, overrides);
      const auto hit = bound.select(q);
      const auto walked = uncached.select(q);
      INFO(to_string(q));
      REQUIRE(free.ok() == hit.ok());
      REQUIRE(free.ok() == walked.ok());
      if (free.ok()) {
        CHECK(free->name() == hit->name());
        CHECK(free->name() == walked->name());
        CHECK(free->rank == hit->rank);
        CHECK(free->overridden == hit->overridden);
      }
      CHECK(bound.decide(q).name() == (free.ok() ? free->name() : ""));
      ++compared;
    }
  }
  CHECK(compared == 6000);
  // Thousands of distinct lengths fall into a handful of classes: most look-ups hit.
  const auto stats = bound.stats();
  CHECK(stats.hits > stats.misses);

  // A stated length over its limit, or heads that do not divide, is never answered from the cache.
  query ok;
  ok.dtype = data_type::float16;
  ok.seq_len_q = limits::seq_len;
  ok.seq_len_kv = 2;
  REQUIRE(bound.select(ok).ok());
  query over = ok;
  over.seq_len_q = limits::seq_len + 1;
  CHECK(bound.select(over).error().code == error_code::bad_query);
  query heads_ok = ok;
  heads_ok.num_heads = 8;
  heads_ok.num_kv_heads = 4;
  REQUIRE(bound.select(heads_ok).ok());
  query heads_bad = heads_ok;
  heads_bad.num_kv_heads = 3;  // 8 / 3 is 2, the same group class as 8 / 4
  CHECK(bound.select(heads_bad).error().code == error_code::bad_query);
}

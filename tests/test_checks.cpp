// SPDX-License-Identifier: Apache-2.0
// Capability checks: one reason code per question, messages with actual and supported values.
#include "catch.hpp"
#include "fixtures.hpp"

using namespace attnsel;
using fixtures::codes;

namespace {
const backend_descriptor& get(const registry& reg, const char* name) { return *reg.find(name); }
}  // namespace

TEST_CASE("a supported query passes both the fast and the explain path", "[checks]") {
  const auto reg = fixtures::small_registry();
  const auto p = fixtures::hopper_with_flashinfer();
  query q;
  CHECK_FALSE(first_failure(get(reg, "FAST"), q, p));
  CHECK(check_backend(get(reg, "FAST"), q, p).empty());
  CHECK(supports(get(reg, "FAST"), q, p));
}

TEST_CASE("each failed check yields its own stable code and a message with the values", "[checks]") {
  const auto reg = fixtures::small_registry();
  const auto p = fixtures::hopper_with_flashinfer();
  struct row {
    const char* what;
    query q;
    const char* code;
    const char* message_part;
  };
  using fixtures::with;
  const std::vector<row> rows = {
      {"head size", with([](query& q) { q.head_size = 72; }), "head_size", "head size 72 not in {64, 128, 256}"},
      {"value head size", with([](query& q) { q.head_size_v = 64; }), "head_size", "value head size 64 differs"},
      {"dtype", with([](query& q) { q.dtype = data_type::float32; }), "dtype",
       "dtype float32 not in {float16, bfloat16}"},
      {"kv cache", with([](query& q) { q.kv_cache_dtype = cache_dtype::fp8_e5m2; }), "kv_cache_dtype",
       "kv-cache dtype fp8_e5m2 not in"},
      {"block size", with([](query& q) { q.block_size = 8; }), "block_size",
       "block size 8 is not a multiple of any of {16}"},
      {"attn type", with([](query& q) { q.attn_type = attention_type::encoder_decoder; }), "attn_type",
       "attention type encoder_decoder not in {decoder}"},
      {"mode", with([](query& q) { q.mode = attention_mode::mla; }), "mode",
       "mode mla not supported (backend is standard)"},
      {"feature", with([](query& q) { q.required.insert("alibi"); }), "feature",
       "feature alibi not supported (supports: sinks)"},
      {"domain", with([](query& q) { q.domain = attention_domain::encoder; }), "domain", "not the encoder domain"},
  };
  for (const auto& r : rows) {
    INFO(r.what);
    const auto reasons = check_backend(get(reg, "FAST"), r.q, p);
    REQUIRE(reasons.size() == 1);
    CHECK(to_string(reasons[0].code) == std::string(r.code));
    CHECK_THAT(reasons[0].message, ATTNSEL_CONTAINS(r.message_part));
    const auto fast = first_failure(get(reg, "FAST"), r.q, p);
    REQUIRE(fast);
    CHECK(*fast == reasons[0].code);
  }
}

TEST_CASE("the explain path reports every failure, the fast path only the first", "[checks]") {
  const auto reg = fixtures::small_registry();
  query q;
  q.head_size = 72;
  q.dtype = data_type::float32;
  q.block_size = 24;
  q.required.insert("alibi");
  q.required.insert("softcap");
  const auto reasons = check_backend(get(reg, "FAST"), q, fixtures::hopper_with_flashinfer());
  CHECK(codes(reasons) == std::set<std::string>{"dtype", "head_size", "block_size", "feature"});
  CHECK(reasons.size() == 5);  // one reason per missing feature
  CHECK(first_failure(get(reg, "FAST"), q, fixtures::hopper_with_flashinfer()) == reasons.front().code);
}

TEST_CASE("a wrong vendor is a platform reason, a wrong arch a capability reason", "[checks]") {
  const auto reg = fixtures::small_registry();
  query q;
  const auto on_rocm = check_backend(get(reg, "FAST"), q, platform::rocm("gfx942"));
  REQUIRE(on_rocm.size() == 1);
  CHECK(on_rocm[0].code == reason_code::platform);
  CHECK(on_rocm[0].message == "runs on cuda, not rocm");
  const auto on_turing = check_backend(get(reg, "FAST"), q, platform::cuda(7, 5));
  REQUIRE(on_turing.size() == 1);
  CHECK(on_turing[0].code == reason_code::capability);
  CHECK(on_turing[0].message == "compute capability 7.5 is outside cuda [8.0, any]");
  const auto on_rdna = check_backend(get(reg, "MEDIUM"), q, platform::rocm("gfx1100"));
  REQUIRE(on_rdna.size() == 1);
  CHECK(on_rdna[0].code == reason_code::capability);
  CHECK(on_rdna[0].message == "gfx1100 is outside rocm gfx9");
  // A capability range needs a known capability: an unknown device is not assumed to be in range.
  CHECK(first_failure(get(reg, "FAST"), q, platform(device_vendor::cuda)) == reason_code::capability);
}

TEST_CASE("components are checked for presence and minimum version", "[checks]") {
  const auto reg = fixtures::small_registry();
  query q;
  auto missing = check_backend(get(reg, "FAST"), q, platform::cuda(9, 0));
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].message == "needs component flashinfer, which is not present");
  auto old = platform::cuda(9, 0);
  old.add_component_spec("flashinfer=0.1.9");
  auto too_old = check_backend(get(reg, "FAST"), q, old);
  REQUIRE(too_old.size() == 1);
  CHECK(too_old[0].message == "needs flashinfer >= 0.2, found 0.1.9");
  auto unversioned = platform::cuda(9, 0);
  unversioned.add_component_spec("flashinfer");
  CHECK(first_failure(get(reg, "FAST"), q, unversioned) == reason_code::component);
}

TEST_CASE("kv-cache auto is accepted by a backend listing the compute dtype", "[checks]") {
  backend_descriptor b;
  b.name = "CACHE";
  b.caps.kv_cache_dtypes = {cache_dtype::bfloat16};
  query q;
  q.dtype = data_type::bfloat16;
  CHECK(supports(b, q, platform::cpu()));
  q.dtype = data_type::float16;
  CHECK(first_failure(b, q, platform::cpu()) == reason_code::kv_cache_dtype);
  q.kv_cache_dtype = cache_dtype::bfloat16;
  CHECK(supports(b, q, platform::cpu()));
}

TEST_CASE("an unpinned block size is not filtered; a pinned one must be a multiple", "[checks]") {
  const auto reg = fixtures::small_registry();
  const auto p = fixtures::hopper_with_flashinfer();
  query q;
  q.block_size = 0;
  CHECK(supports(get(reg, "FAST"), q, p));
  q.block_size = 64;  // vLLM's MultipleOf: 64 is a multiple of 16
  CHECK(supports(get(reg, "FAST"), q, p));
  q.block_size = 40;
  CHECK_FALSE(supports(get(reg, "FAST"), q, p));
}

TEST_CASE("MLA and standard modes must match in both directions", "[checks]") {
  const auto reg = fixtures::small_registry();
  query q;
  q.mode = attention_mode::mla;
  q.head_size = 576;
  q.head_size_v = 512;
  CHECK(supports(get(reg, "LATENT"), q, platform::cuda(9, 0)));
  q.mode = attention_mode::standard;
  CHECK(first_failure(get(reg, "LATENT"), q, platform::cuda(9, 0)) == reason_code::mode);
  q.mode = attention_mode::sparse_mla;
  CHECK(first_failure(get(reg, "LATENT"), q, platform::cuda(9, 0)) == reason_code::mode);
}

TEST_CASE("variants are resolved by domain and platform, first match wins", "[checks]") {
  backend_descriptor fa;
  fa.name = "FA";
  fa.domains = {attention_domain::decoder, attention_domain::encoder};
  capabilities fa3;
  fa3.variant = "FA3";
  fa3.platforms = {fixtures::cuda_from(9, 0)};
  fa3.platforms[0].max_capability = cuda_capability{9, 9};
  fa3.features = {"sinks"};
  capabilities fa2;
  fa2.variant = "FA2";
  fa2.platforms = {fixtures::cuda_from(8, 0)};
  capabilities vit;
  vit.variant = "VIT";
  vit.domains = {attention_domain::encoder};
  vit.attn_types = {attention_type::encoder_only};
  fa.variants = {vit, fa3, fa2};
  query q;
  q.required.insert("sinks");
  REQUIRE(resolve_variant(fa, attention_domain::decoder, platform::cuda(9, 0)));
  CHECK(resolve_variant(fa, attention_domain::decoder, platform::cuda(9, 0))->variant == "FA3");
  CHECK(resolve_variant(fa, attention_domain::decoder, platform::cuda(8, 6))->variant == "FA2");
  CHECK(resolve_variant(fa, attention_domain::encoder, platform::cuda(8, 6))->variant == "VIT");
  CHECK(supports(fa, q, platform::cuda(9, 0)));
  const auto on_ampere = check_backend(fa, q, platform::cuda(8, 6));
  REQUIRE(on_ampere.size() == 1);
  CHECK(on_ampere[0].code == reason_code::feature);
  CHECK(first_failure(fa, q, platform::cuda(7, 5)) == reason_code::capability);
}

TEST_CASE("a custom cross-field check runs last and explains itself", "[checks]") {
  backend_descriptor b;
  b.name = "PICKY";
  b.extra_check = [](const capabilities&, const query& q, const platform&, std::string* why) {
    if (q.head_size == 256 && q.dtype == data_type::float16) {
      if (why) *why = "head size 256 needs bfloat16";
      return false;
    }
    return true;
  };
  query q;
  q.head_size = 256;
  q.dtype = data_type::float16;
  const auto reasons = check_backend(b, q, platform::cpu());
  REQUIRE(reasons.size() == 1);
  CHECK(reasons[0].code == reason_code::custom);
  CHECK(reasons[0].message == "head size 256 needs bfloat16");
  CHECK(first_failure(b, q, platform::cpu()) == reason_code::custom);
  q.dtype = data_type::bfloat16;
  CHECK(supports(b, q, platform::cpu()));
}

TEST_CASE("a throwing custom check rejects its backend instead of escaping", "[checks]") {
  backend_descriptor b;
  b.name = "BROKEN";
  b.extra_check = [](const capabilities&, const query&, const platform&, std::string*) -> bool {
    throw std::runtime_error("bug");
  };
  query q;
  CHECK(first_failure(b, q, platform::cpu()) == reason_code::custom);
  const auto reasons = check_backend(b, q, platform::cpu());
  REQUIRE(reasons.size() == 1);
  CHECK(reasons[0].message == "custom check threw an exception");
}

// The bound selector skips the query gates a variant leaves unconstrained (live_query_gates). Over every
// backend variant of every built-in catalog and a spread of queries that crosses each gate's boundaries,
// skipping them answers as running every gate does.
TEST_CASE("skipping the gates a variant leaves dead never changes the fast path's verdict", "[checks]") {
  const std::vector<platform> platforms{platform::cuda(9, 0), platform::rocm("gfx942"), platform::cpu()};
  std::vector<query> queries;
  for (const auto dtype : enum_values<data_type>())
    for (const auto kv : {cache_dtype::automatic, cache_dtype::fp8, cache_dtype::bfloat16})
      for (const auto type : enum_values<attention_type>())
        for (const auto mode : enum_values<attention_mode>())
          for (const std::uint32_t head : {64U, 80U, 128U, 200U, 576U})
            for (const std::uint32_t block : {0U, 16U, 64U})
              for (const std::uint32_t seq : {0U, 1U, 4096U}) {
                query q;
                q.dtype = dtype;
                q.kv_cache_dtype = kv;
                q.attn_type = type;
                q.mode = mode;
                q.head_size = head;
                q.head_size_v = head == 576 ? 512 : 0;
                q.block_size = block;
                q.seq_len_q = seq;
                q.seq_len_kv = seq * 2;
                q.batch_size = seq == 0 ? 0 : 300;
                q.num_heads = seq == 1 ? 32 : 0;
                q.num_kv_heads = seq == 1 ? 4 : 0;
                q.phase = seq == 1 ? attention_phase::decode : attention_phase::unstated;
                if (head == 80) q.required = feature_set{"sinks"};
                if (head == 200) q.required = feature_set{"dropout", "requires_grad"};
                queries.push_back(q);
              }
  std::uint32_t every_query_gate = 0;
  for (std::size_t i = 0; i < check_gates.size(); ++i)
    if (check_gates[i].reads == gate_input::query) every_query_gate |= std::uint32_t{1} << i;
  std::size_t compared = 0;
  std::size_t skipped_some = 0;
  for (const auto name : builtin_catalog_names) {
    const auto reg = builtin_registry(name);
    for (const auto& b : reg.backends()) {
      std::vector<const capabilities*> variants{&b.caps};
      for (const auto& v : b.variants) variants.push_back(&v);
      for (const auto* v : variants) {
        const auto live = detail::live_query_gates(b, *v);
        if (live != every_query_gate) ++skipped_some;
        for (const auto& p : platforms)
          for (const auto& q : queries) {
            const bool all_gates = detail::query_gates_pass(b, *v, q, p, every_query_gate);
            if (all_gates != detail::query_gates_pass(b, *v, q, p, live)) {
              INFO(name << " " << b.name << " variant '" << v->variant << "' on " << to_string(p) << ": "
                        << to_string(q));
              CHECK(all_gates == detail::query_gates_pass(b, *v, q, p, live));
            }
            ++compared;
          }
      }
    }
  }
  CHECK(compared > 100000);
  CHECK(skipped_some > 0);
  // A gate whose fields the variant constrains is live; the same gate on an unconstrained variant is not.
  capabilities open;
  capabilities typed;
  typed.kv_cache_dtypes = enum_set<cache_dtype>{cache_dtype::fp8};
  const backend_descriptor none;
  const auto kv_bit = std::uint32_t{1} << static_cast<unsigned>(std::distance(
                          check_gates.begin(), std::find_if(check_gates.begin(), check_gates.end(), [](const auto& g) {
                            return g.code == reason_code::kv_cache_dtype;
                          })));
  CHECK((detail::live_query_gates(none, typed) & kv_bit) != 0);
  CHECK((detail::live_query_gates(none, open) & kv_bit) == 0);
}

// SPDX-License-Identifier: Apache-2.0
// Catalog diff and lint: the ROCm refactor diff, identical and planted changes, planted lint defects.
#include "catch.hpp"
#include "wide_catalog.hpp"

#include <attnsel/all.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace attnsel;

namespace {

catalog lint_catalog_file(const std::string& name) {
  return read_catalog_file(std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/lint/" + name);
}

std::string decision(const registry& reg, const diff_configuration& c) {
  const auto r = select(reg, c.query, c.platform, override_request{c.override_spec, override_source::api});
  return r ? std::string(r->name()) : "error:" + std::string(to_string(r.error().code));
}

// Every example a diff reports must reproduce: A decides `from`, B decides `to`.
void check_examples(const catalog_diff& d, const catalog& a, const catalog& b) {
  std::size_t total = 0;
  for (const auto& g : d.groups) {
    std::size_t in_group = 0;
    for (const auto& t : g.transitions) {
      in_group += t.count;
      REQUIRE_FALSE(t.examples.empty());
      for (const auto& e : t.examples) {
        INFO(g.platform << " " << t.from << " -> " << t.to);
        CHECK(to_string(e.platform).rfind(g.platform, 0) == 0);
        CHECK(decision(a.registry, e) == t.from);
        CHECK(decision(b.registry, e) == t.to);
      }
    }
    CHECK(in_group == g.count);
    total += g.count;
  }
  CHECK(total == d.changed);
}

// The ROCm refactor diff is the most expensive one: compute it once for every test that reads it.
const catalog_diff& rocm_refactor_diff() {
  static const catalog_diff d =
      diff_catalogs(builtin_catalog("vllm-rocm-env@e2a00c7b"), builtin_catalog("vllm@main-2026-12"));
  return d;
}

}  // namespace

TEST_CASE("the ROCm refactor diff shows ROCm changes and nothing on CUDA", "[diff]") {
  const auto& d = rocm_refactor_diff();
  CHECK(d.a == "vllm-rocm-env@e2a00c7b");
  CHECK(d.b == "vllm@main-2026-12");
  REQUIRE_FALSE(d.empty());
  std::size_t compared = 0;
  for (const auto& v : d.vendors) {
    INFO(to_string(v.vendor));
    compared += v.configurations;
    CHECK(v.configurations > 0);
    if (v.vendor != device_vendor::rocm) CHECK(v.changed == 0);
  }
  CHECK(compared == d.space.configurations);
  const auto cuda = std::find_if(d.vendors.begin(), d.vendors.end(),
                                 [](const diff_vendor_count& v) { return v.vendor == device_vendor::cuda; });
  REQUIRE(cuda != d.vendors.end());
  for (const auto& g : d.groups) CHECK(g.platform.rfind("rocm ", 0) == 0);
  // The refactor's headline: with no environment variable set, gfx942 went from Triton to ROCM_ATTN.
  const auto headline = std::find_if(d.groups.begin(), d.groups.end(), [](const diff_group& g) {
    return g.platform == "rocm gfx942" && g.domain == attention_domain::decoder &&
           std::any_of(g.transitions.begin(), g.transitions.end(),
                       [](const diff_transition& t) { return t.from == "TRITON_ATTN" && t.to == "ROCM_ATTN"; });
  });
  CHECK(headline != d.groups.end());
  check_examples(d, builtin_catalog("vllm-rocm-env@e2a00c7b"), builtin_catalog("vllm@main-2026-12"));
}

TEST_CASE("the diff states its space and its JSON carries the same counts", "[diff]") {
  const auto& d = rocm_refactor_diff();
  const auto& s = d.space;
  CHECK(std::find(s.platforms.begin(), s.platforms.end(), "cuda 9.0") != s.platforms.end());
  CHECK(std::find(s.platforms.begin(), s.platforms.end(), "rocm gfx90a") != s.platforms.end());
  CHECK(std::find(s.modes.begin(), s.modes.end(), "sparse_mla") != s.modes.end());
  CHECK(std::find(s.features.begin(), s.features.end(), "none") != s.features.end());
  CHECK(std::find(s.block_sizes.begin(), s.block_sizes.end(), 0u) != s.block_sizes.end());
  CHECK(s.configurations > 10000);
  const auto j = to_json(d);
  CHECK(j.at("changed").get<std::size_t>() == d.changed);
  CHECK(j.at("groups").size() == d.groups.size());
  CHECK(j.at("space").at("configurations").get<std::size_t>() == s.configurations);
  const auto text = diff_text(d);
  CHECK(text.find("TRITON_ATTN -> ROCM_ATTN") != std::string::npos);
  CHECK(text.find("cuda 0/") != std::string::npos);
}

TEST_CASE("a catalog diffed against itself has no changes", "[diff]") {
  for (const char* name : {"torch_sdpa", "vllm"}) {
    INFO(name);
    diff_options options;
    options.decoder = std::string(name) == "torch_sdpa";  // vllm: the encoder domain keeps it quick
    options.skip_identical = false;                       // evaluate every configuration
    const auto c = builtin_catalog(name);
    const auto d = diff_catalogs(c, c, options);
    CHECK(d.empty());
    CHECK(d.groups.empty());
    CHECK(d.space.configurations > 0);
    CHECK(d.space.evaluated == d.space.configurations);
    options.skip_identical = true;
    CHECK(diff_catalogs(c, c, options).space.evaluated == 0);
    CHECK(diff_text(d).find("no decision differs") != std::string::npos);
  }
}

TEST_CASE("a planted priority change is found on its platform only, with forced backends compared", "[diff]") {
  const auto before = builtin_catalog("vllm");
  auto after = before;
  auto policy = after.registry.policy();
  bool planted = false;
  for (auto& r : policy.rules) {
    if (r.domain == attention_domain::encoder && r.vendor == device_vendor::cuda) {
      std::swap(r.order[0], r.order[1]);  // FLASH_ATTN, TRITON_ATTN -> TRITON_ATTN, FLASH_ATTN
      planted = true;
    }
  }
  REQUIRE(planted);
  after.registry.set_policy(policy);
  diff_options options;
  options.decoder = false;
  const auto d = diff_catalogs(before, after, options);
  REQUIRE_FALSE(d.empty());
  for (const auto& g : d.groups) {
    CHECK(g.platform.rfind("cuda ", 0) == 0);
    CHECK(g.domain == attention_domain::encoder);
    for (const auto& t : g.transitions) CHECK((t.from == "FLASH_ATTN" && t.to == "TRITON_ATTN"));
  }
  check_examples(d, before, after);
  // No descriptor changed, so no backend is forced: only automatic selection can differ.
  CHECK(d.space.overrides == std::vector<std::string>{"auto"});

  // A capability change makes its backend forced too, and the forced decisions change.
  auto narrowed = before;
  auto fa = *narrowed.registry.find("TORCH_SDPA");
  fa.caps.attn_types = {attention_type::encoder};
  narrowed.registry.replace(fa);
  const auto forced = diff_catalogs(before, narrowed, options);
  CHECK(std::find(forced.space.overrides.begin(), forced.space.overrides.end(), "TORCH_SDPA") !=
        forced.space.overrides.end());
  CHECK(std::any_of(forced.groups.begin(), forced.groups.end(),
                    [](const diff_group& g) { return g.rule_a == "forced TORCH_SDPA"; }));
  check_examples(forced, before, narrowed);
}

TEST_CASE("a diff larger than the limit is refused, not sampled", "[diff]") {
  diff_options options;
  options.max_configurations = 10;
  const auto c = builtin_catalog("torch_sdpa");
  CHECK_THROWS_AS(diff_catalogs(c, c, options), std::length_error);
}

TEST_CASE("the pre-refactor ROCm catalog differs from vllm@main-2026-12 only in ROCm decoder rules",
          "[diff][reference]") {
  const auto legacy = builtin_catalog("vllm-rocm-env@e2a00c7b");
  const auto newest = builtin_catalog("vllm@main-2026-12");
  CHECK(legacy.registry.backends() == newest.registry.backends());
  const auto others = [](const registry& reg) {
    std::vector<policy_rule> out;
    for (const auto& r : reg.policy().rules)
      if (!(r.vendor == device_vendor::rocm && r.domain == attention_domain::decoder)) out.push_back(r);
    return out;
  };
  CHECK(others(legacy.registry) == others(newest.registry));
  CHECK_FALSE(legacy.registry.policy() == newest.registry.policy());
  CHECK_FALSE(legacy.info.commits.empty());
  CHECK(legacy.info.commits.front() == "vllm-project/vllm@e2a00c7b342a");
}

TEST_CASE("every built-in catalog is lint-clean", "[lint]") {
  for (auto name : builtin_catalog_names) {
    INFO(name);
    const auto findings = lint_catalog(builtin_catalog(name));
    for (const auto& f : findings) INFO(f.pointer << ": " << f.message);
    CHECK(findings.empty());
  }
  CHECK(lint_catalog(lint_catalog_file("clean.json")).empty());
}

TEST_CASE("lint finds each planted defect at its pointer", "[lint]") {
  struct row {
    const char* file;
    lint_code code;
    const char* pointer;
  };
  const std::vector<row> rows = {
      {"unreachable_backend.json", lint_code::unreachable_backend, "/backends/1"},
      {"shadowed_rule.json", lint_code::shadowed_rule, "/policies/1"},
      {"unknown_component.json", lint_code::unknown_component, "/policies/0/order/0/when/0"},
      {"shadowed_variant.json", lint_code::shadowed_variant, "/backends/0/variants/1"},
      {"unknown_feature.json", lint_code::unknown_feature, "/policies/0/without_features"},
      {"impossible_call_rule.json", lint_code::impossible_call_rule, "/backends/0/call_rules/0"},
  };
  for (const auto& r : rows) {
    INFO(r.file);
    const auto findings = lint_catalog(lint_catalog_file(r.file));
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].code == r.code);
    CHECK(findings[0].pointer == r.pointer);
    CHECK_FALSE(findings[0].message.empty());
    const auto j = to_json(findings[0]);
    CHECK(j.at("code") == to_string(r.code));
  }
}

TEST_CASE("lint reads family containment from the one family table", "[lint]") {
  // A variant on the cdna family after one on gfx9 is never checked (every CDNA part is a gfx9 target);
  // the reverse order shadows nothing, nor does a gfx11 variant after a cdna one.
  const auto findings_for = [](const char* first, const char* second) {
    const std::string text = std::string(R"({"format": "attnsel-catalog", "version": 1, "name": "families",
      "backends": [{"name": "KERNEL", "domains": ["decoder"], "variants": [
        {"name": "FIRST", "platforms": [{"vendor": "rocm", "families": [")") +
                             first + R"("]}]},
        {"name": "SECOND", "platforms": [{"vendor": "rocm", "families": [")" +
                             second + R"("]}]}]}],
      "policies": [{"domain": "decoder", "vendor": "rocm", "order": ["KERNEL"]}]})";
    return lint_catalog(parse_catalog_text(text, "families.json"));
  };
  const auto shadowed = findings_for("gfx9", "cdna");
  REQUIRE(shadowed.size() == 1);
  CHECK(shadowed[0].code == lint_code::shadowed_variant);
  CHECK(shadowed[0].pointer == "/backends/0/variants/1");
  CHECK(findings_for("rdna", "gfx11").size() == 1);
  CHECK(findings_for("cdna", "gfx9").empty());
  CHECK(findings_for("cdna", "gfx11").empty());
}

TEST_CASE("lint reads phases and shape ranges: a narrower rule is not shadowed by a phase rule", "[lint]") {
  CHECK(lint_catalog(lint_catalog_file("phase_rules_clean.json")).empty());
}

TEST_CASE("a catalog file with a never-matching rule or platform does not load at all", "[lint][catalog]") {
  // The loader refuses these at the same pointers lint reports for a registry built in C++, so a file
  // never reaches lint with them (docs/reliability.md, defect 12).
  const std::vector<std::pair<const char*, const char*>> rows = {
      {"impossible_rule.json", "/policies/1"},
      {"impossible_platform.json", "/backends/0/platforms/1"},
  };
  for (const auto& [file, pointer] : rows) {
    INFO(file);
    try {
      (void)lint_catalog_file(file);
      FAIL("the catalog loaded");
    } catch (const catalog_error& e) {
      CHECK(std::string(e.pointer()).rfind(pointer, 0) == 0);
    }
  }
}

TEST_CASE("lint accepts a component the caller's detection defines", "[lint]") {
  const auto c = lint_catalog_file("unknown_component.json");
  lint_options options;
  options.known_components = {"aiter_mah"};
  CHECK(lint_catalog(c, options).empty());
  options.known_components.clear();
  options.builtin_components = false;
  CHECK(lint_catalog(c, options).size() == 1);
}

TEST_CASE("docs/diff.md shows the tool's real ROCm and issue-20 diffs and documents every lint code",
          "[docs][diff][lint]") {
  std::ifstream in(std::string(ATTNSEL_SOURCE_DIR) + "/docs/diff.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto doc = ss.str();
  CHECK(doc.find(diff_text(rocm_refactor_diff())) != std::string::npos);
  // The issue-20 example: automatic decoder selection, vllm@00159db -> vllm@main-2026-12.
  diff_options newest;
  newest.encoder = false;
  newest.overrides = false;
  CHECK(doc.find(diff_text(diff_catalogs(builtin_catalog("vllm@00159db"), builtin_catalog("vllm@main-2026-12"),
                                         newest))) != std::string::npos);
  for (auto code : enum_values<lint_code>()) {
    INFO(to_string(code));
    CHECK(doc.find("| `" + std::string(to_string(code)) + "` |") != std::string::npos);
  }
}

TEST_CASE("diff enumerates the calls a format-2 threshold tells apart", "[diff]") {
  const auto doc = [](int min_kv) {
    return parse_catalog(parse_json_document(R"({"format": "attnsel-catalog", "version": 2, "name": "t",
      "backends": [{"name": "FAST", "domains": ["decoder"], "seq_len_kv": {"min": )" +
                                             std::to_string(min_kv) + R"(}},
                   {"name": "SLOW", "domains": ["decoder"]}],
      "policies": [{"domain": "decoder", "vendor": "cpu", "order": ["FAST", "SLOW"]}]})"),
                         "t" + std::to_string(min_kv));
  };
  const auto a = doc(2);
  const auto b = doc(4);
  diff_options options;
  options.encoder = false;
  options.overrides = false;
  const auto d = diff_catalogs(a, b, options);
  REQUIRE_FALSE(d.empty());
  // Key lengths 2 and 3 now fall below FAST's range; 1 did before, 4 never does.
  const auto has = [&](const std::string& call) {
    return std::find(d.space.calls.begin(), d.space.calls.end(), call) != d.space.calls.end();
  };
  CHECK(has("unstated"));
  CHECK(has("unstated seq_len_kv=3"));
  CHECK(has("unstated seq_len_kv=4"));
  for (const auto& g : d.groups)
    for (const auto& t : g.transitions) {
      CHECK(t.from == "FAST");
      CHECK(t.to == "SLOW");
      for (const auto& e : t.examples) {
        CHECK(e.query.seq_len_kv >= 2);
        CHECK(e.query.seq_len_kv < 4);
      }
    }
  check_examples(d, a, b);
  CHECK(diff_catalogs(a, a, options).empty());
}

namespace {

catalog catalog_v2(const std::string& name, const std::string& backends, const std::string& policies) {
  return parse_catalog(parse_json_document(R"({"format": "attnsel-catalog", "version": 2, "name": ")" + name +
                                           R"(", "backends": [)" + backends + R"(], "policies": [)" + policies + "]}"),
                       name);
}

}  // namespace

namespace {

// Decoder decisions only, automatic selection only: the version tests' space.
diff_options decoder_only() {
  diff_options options;
  options.encoder = false;
  options.overrides = false;
  return options;
}

// Every change moves FAST to SLOW; `check` looks at each example.
template <class Check>
void check_fast_to_slow(const catalog_diff& d, Check&& check) {
  REQUIRE_FALSE(d.empty());
  for (const auto& g : d.groups)
    for (const auto& t : g.transitions) {
      CHECK(t.from == "FAST");
      CHECK(t.to == "SLOW");
      for (const auto& e : t.examples) check(e);
    }
}

// Every change moves FAST to SLOW, and every example's `lib` version lies in [lo, hi).
void check_lib_between(const catalog_diff& d, const std::string& lo, const std::string& hi) {
  check_fast_to_slow(d, [&](const diff_configuration& e) {
    const auto* lib = e.platform.find_component("lib");
    REQUIRE(lib != nullptr);
    REQUIRE(lib->version);
    CHECK_FALSE(*lib->version < *parse_component_version(lo));
    CHECK(*lib->version < *parse_component_version(hi));
  });
}

}  // namespace

TEST_CASE("diff samples each component version a call rule bounds, on both sides of the bound", "[diff]") {
  // FAST takes heads above 128 only with lib >= `min` (as torch_sdpa@2.14.0's cuDNN takes 256 from 9.22.1):
  // moving the bound changes the answer only for versions between the two bounds, which the diff must
  // sample although no requirement names them.
  const auto doc = [](const std::string& min) {
    return catalog_v2(
        "t" + min,
        R"({"name": "FAST", "domains": ["decoder"], "head_sizes": [64, 256], "requires": [{"component": "lib",
      "min_version": "1.0"}], "call_rules": [{"when": {"head_sizes": {"min": 129}, "components": [{"component": "lib",
      "below_version": ")" +
            min + R"("}]}, "require": {"never": true}, "note": "old lib"}]},
      {"name": "SLOW", "domains": ["decoder"]})",
        R"({"domain": "decoder", "vendor": "cpu", "order": ["FAST", "SLOW"]})");
  };
  const auto a = doc("1.5");
  const auto b = doc("2.2.1");
  const auto d = diff_catalogs(a, b, decoder_only());
  check_lib_between(d, "1.5", "2.2.1");
  for (const auto& g : d.groups)
    for (const auto& t : g.transitions)
      for (const auto& e : t.examples) CHECK(e.query.head_size > 128);
  check_examples(d, a, b);
  CHECK(diff_catalogs(a, a, decoder_only()).empty());
}

TEST_CASE("diff samples a version below the highest requirement, where a raised minimum changes answers", "[diff]") {
  // B raises FAST's minimum from 1.0 to 1.2: versions in [1.0, 1.2) now fall to SLOW. The highest minimum
  // of both (1.2) alone would never show it.
  const auto doc = [](const std::string& min) {
    return catalog_v2("m" + min, R"({"name": "FAST", "domains": ["decoder"], "requires": [{"component": "lib",
      "min_version": ")" + min + R"("}]}, {"name": "SLOW", "domains": ["decoder"]})",
                      R"({"domain": "decoder", "vendor": "cpu", "order": ["FAST", "SLOW"]})");
  };
  const auto a = doc("1.0");
  const auto b = doc("1.2");
  const auto d = diff_catalogs(a, b, decoder_only());
  check_lib_between(d, "1.0", "1.2");
  check_examples(d, a, b);
}

TEST_CASE("diff refuses a space of many distinct call thresholds from the axis sizes, before building any (issue 35)",
          "[diff]") {
  // 100 rules, each with its own length, batch and GQA-group range: about 15 KB of catalog whose calls
  // axis alone has 202^4 = 1.7e9 calls (32 GB as call points). Before, the axis was built in full
  // before the size check (a 15 KB catalog took 17 s and 2.6 GB to be refused; this one cannot be
  // built at all), so reaching the refusal proves nothing of the product was materialised.
  const std::string policies = fixtures::wide_call_policies(100);
  const auto c = catalog_v2("wide", R"({"name": "A", "domains": ["decoder"]})", policies);
  diff_options options;
  options.encoder = false;
  try {
    (void)diff_catalogs(c, c, options);
    FAIL("the space was not refused");
  } catch (const std::length_error& e) {
    const std::string message = e.what();
    INFO(message);
    // The message names the scope and every axis size, the calls axis by its factors.
    CHECK(message.find("more than 50,000,000 configurations") != std::string::npos);
    CHECK(message.find("cuda decoder standard") != std::string::npos);
    CHECK(message.find("x component sets ") != std::string::npos);
    CHECK(message.find("x num_heads ") != std::string::npos);
    CHECK(message.find("(phases 1 x seq_len_q 202 x seq_len_kv 202 x batch_size 202 x gqa_group 202 + 0 measured "
                       "corners)") != std::string::npos);
    CHECK(message.find("narrow it") != std::string::npos);
  }
}

TEST_CASE(
    "diff's text states a large calls axis by its first values and a count, and keeps the space bounded "
    "(issue 35)",
    "[diff]") {
  // 20 rules, each with its own key-length and batch threshold: 22 key lengths (the query lengths
  // take the same values) x 22 batch sizes = 10,648 calls. Before, every one was listed: a 4 KB
  // catalog of 20 such rules printed a 26 MB `calls:` line.
  std::string policies;
  for (int k = 1; k <= 20; ++k)
    policies += (k > 1 ? "," : "") + std::string(R"({"domain": "decoder", "vendor": "cpu", "seq_len_kv": {"min": )") +
                std::to_string(4 * k) + R"(}, "batch_size": {"min": )" + std::to_string(4 * k) +
                R"(}, "order": ["A"]})";
  const auto c = catalog_v2("lengths", R"({"name": "A", "domains": ["decoder"]})", policies);
  diff_options options;
  options.encoder = false;
  options.skip_identical = false;
  const auto d = diff_catalogs(c, c, options);
  CHECK(d.empty());
  CHECK(d.space.call_count == 22u * 22u * 22u);
  REQUIRE(d.space.calls.size() == diff_space::listed_calls);
  CHECK(d.space.calls.front() == "unstated");
  CHECK(d.space.calls[1] == "unstated batch_size=3");  // ascending: one value per class, the class's last
  const auto text = diff_text(d);
  const auto line = text.substr(text.find("  calls:"), text.find('\n', text.find("  calls:")) - text.find("  calls:"));
  INFO(line);
  CHECK(line.size() < 1000);
  CHECK(line.find(", ... (10,624 more)") != std::string::npos);
  const auto j = to_json(d);
  CHECK(j.at("space").at("call_count").get<std::size_t>() == d.space.call_count);
  CHECK(j.at("space").at("calls").size() == diff_space::listed_calls);
}

TEST_CASE(
    "diff states each GQA group with a head count that realises it, past the groups' common multiple "
    "(issue 35)",
    "[diff]") {
  // Rules at GQA groups 3, 5, ..., 23 make the groups' least common multiple pass the head-count limit
  // (2^20); FAST serves groups from 29 in A and from 30 in B. Before, group 29 was left unstated (no
  // head count divided it) and the two catalogs diffed as identical.
  const auto doc = [](int min_group) {
    std::string policies;
    for (int p : {3, 5, 7, 11, 13, 17, 19, 23})
      policies += R"({"domain": "decoder", "vendor": "cpu", "gqa_group": {"min": )" + std::to_string(p) +
                  R"(, "max": )" + std::to_string(p) + R"(}, "order": ["FAST", "SLOW"]},)";
    policies += R"({"domain": "decoder", "vendor": "cpu", "order": ["FAST", "SLOW"]})";
    return catalog_v2("g" + std::to_string(min_group),
                      R"({"name": "FAST", "domains": ["decoder"], "gqa_group": {"min": )" + std::to_string(min_group) +
                          R"(}}, {"name": "SLOW", "domains": ["decoder"]})",
                      policies);
  };
  const auto a = doc(29);
  const auto b = doc(30);
  const auto d = diff_catalogs(a, b, decoder_only());
  check_fast_to_slow(d, [](const diff_configuration& e) {
    REQUIRE(e.query.num_kv_heads != 0);
    CHECK(e.query.num_heads / e.query.num_kv_heads == 29u);
  });
  check_examples(d, a, b);
  CHECK(d.space.gqa_unrealised == 0);
  // The text's example states the group: its fields are the query's list minus the defaults.
  const auto& e = d.groups.front().transitions.front().examples.front();
  CHECK(diff_text(d).find("num_kv_heads=" + std::to_string(e.query.num_kv_heads)) != std::string::npos);
  CHECK(diff_catalogs(a, a, decoder_only()).empty());
}

TEST_CASE("diff tells dtypes apart by what the head-size gate answers for each, not by whether it has its own sizes",
          "[diff]") {
  // FAST lists head sizes for float16 and for bfloat16; B drops 64 for bfloat16 alone. Both dtypes
  // have sizes of their own, so a diff that only asked "own sizes or not" put them in one class,
  // compared float16 alone and found no change (issue 33: the diff asks the gates).
  const auto doc = [](const std::string& name, const std::string& bf16) {
    return catalog_v2(name,
                      R"({"name": "FAST", "domains": ["decoder"], "dtypes": ["float16", "bfloat16"],
                          "head_sizes_by_dtype": {"float16": [64, 128], "bfloat16": )" +
                          bf16 + R"(}}, {"name": "SLOW", "domains": ["decoder"]})",
                      R"({"domain": "decoder", "vendor": "cpu", "order": ["FAST", "SLOW"]})");
  };
  const auto a = doc("a", "[64, 128]");
  const auto b = doc("b", "[128]");
  const auto d = diff_catalogs(a, b, decoder_only());
  check_fast_to_slow(d, [](const diff_configuration& e) {
    CHECK(e.query.dtype == data_type::bfloat16);
    CHECK(e.query.head_size == 64u);
  });
  check_examples(d, a, b);
  CHECK(diff_text(d).find("head_size=64 dtype=bfloat16") != std::string::npos);  // both stated, defaults or not
  CHECK(diff_catalogs(a, a, decoder_only()).empty());
}

TEST_CASE("diff reads a call rule's conditions list by list: attention types and value head sizes", "[diff]") {
  // A call rule that refuses encoder-only calls, or value head size 200, against none: the call-rule
  // gate reads the call too, so the diff reads each condition's lists itself. Both pairs diffed as
  // identical before.
  const auto doc = [](const std::string& name, const std::string& rules) {
    return catalog_v2(name,
                      R"({"name": "FAST", "domains": ["decoder"], "attn_types": ["decoder", "encoder_only"],
                          "call_rules": [)" +
                          rules +
                          R"(]}, {"name": "SLOW", "domains": ["decoder"], "attn_types": ["decoder", "encoder_only"]})",
                      R"({"domain": "decoder", "vendor": "cpu", "order": ["FAST", "SLOW"]})");
  };
  const auto plain = doc("plain", "");
  const auto by_type = doc("by_type", R"({"when": {"attn_types": ["encoder_only"]}, "require": {"never": true}})");
  const auto d = diff_catalogs(plain, by_type, decoder_only());
  check_fast_to_slow(d, [](const diff_configuration& e) { CHECK(e.query.attn_type == attention_type::encoder_only); });
  check_examples(d, plain, by_type);
  const auto by_value = doc("by_value", R"({"when": {"value_head_sizes": [200]}, "require": {"never": true}})");
  const auto v = diff_catalogs(plain, by_value, decoder_only());
  check_fast_to_slow(v, [](const diff_configuration& e) { CHECK(e.query.head_size == 200u); });
  check_examples(v, plain, by_value);
}

TEST_CASE("diff reads a call rule's feature lists: a feature a condition names is a class of its own", "[diff]") {
  // FAST and SLOW both take features a and b; a call rule refuses calls that require b. The variants'
  // lists alone put a and b in one class, so the diff compared a call requiring a alone and found no
  // change; the condition's feature list splits them.
  const auto doc = [](const std::string& name, const std::string& rules) {
    return catalog_v2(name,
                      R"({"name": "FAST", "domains": ["decoder"], "features": ["a", "b"], "call_rules": [)" + rules +
                          R"(]}, {"name": "SLOW", "domains": ["decoder"], "features": ["a", "b"]})",
                      R"({"domain": "decoder", "vendor": "cpu", "order": ["FAST", "SLOW"]})");
  };
  const auto plain = doc("plain", "");
  const auto by_feature = doc("by_feature", R"({"when": {"features": ["b"]}, "require": {"never": true}})");
  const auto d = diff_catalogs(plain, by_feature, decoder_only());
  check_fast_to_slow(d, [](const diff_configuration& e) { CHECK(e.query.required.contains("b")); });
  check_examples(d, plain, by_feature);
  CHECK(diff_catalogs(by_feature, by_feature, decoder_only()).empty());
}

TEST_CASE("a group no head count of its class can state is counted and reported, never skipped silently (issue 35)",
          "[diff]") {
  // Rules see at most 8 heads: a group of 9 or more fits no head count of that class.
  const auto c = catalog_v2("small_heads", R"({"name": "A", "domains": ["decoder"], "gqa_group": {"min": 9}})",
                            R"({"domain": "decoder", "vendor": "cpu", "max_num_heads": 8, "order": ["A"]})");
  diff_options options;
  options.encoder = false;
  const auto d = diff_catalogs(c, c, options);
  CHECK(d.space.gqa_unrealised > 0);
  CHECK(diff_text(d).find("configurations state a GQA group that no head count of their num_heads class realises") !=
        std::string::npos);
  CHECK(to_json(d).at("space").at("gqa_unrealised").get<std::size_t>() == d.space.gqa_unrealised);
}

TEST_CASE("diff enumerates every vendor: registration order on a vendor no rule names is compared (issue 35)",
          "[diff]") {
  // X and Y run everywhere; the only rule is on CUDA. On every other vendor the registration order
  // decides. Before, only CUDA was enumerated and the catalogs diffed as identical.
  const auto doc = [](const std::string& name, const std::string& backends) {
    return catalog_v2(name, backends, R"({"domain": "decoder", "vendor": "cuda", "order": ["X", "Y"]})");
  };
  const auto a = doc("xy", R"({"name": "X", "domains": ["decoder"]}, {"name": "Y", "domains": ["decoder"]})");
  const auto b = doc("yx", R"({"name": "Y", "domains": ["decoder"]}, {"name": "X", "domains": ["decoder"]})");
  diff_options options;
  options.encoder = false;
  const auto d = diff_catalogs(a, b, options);
  REQUIRE_FALSE(d.empty());
  for (const auto& g : d.groups) {
    CHECK(g.platform.rfind("cuda", 0) != 0);  // the CUDA rule orders both alike
    CHECK(g.rule_a == "registration order");
    for (const auto& t : g.transitions) CHECK((t.from == "X" && t.to == "Y"));
  }
  for (auto v : {device_vendor::rocm, device_vendor::xpu, device_vendor::cpu, device_vendor::tpu}) {
    const auto it =
        std::find_if(d.vendors.begin(), d.vendors.end(), [&](const diff_vendor_count& c) { return c.vendor == v; });
    INFO(to_string(v));
    REQUIRE(it != d.vendors.end());
    CHECK(it->changed > 0);
  }
  check_examples(d, a, b);
}

TEST_CASE("a catalog that names no platform diffs over every vendor with a representative arch (issue 35)", "[diff]") {
  const auto a =
      catalog_v2("plain", R"({"name": "X", "domains": ["decoder"]}, {"name": "Y", "domains": ["decoder"]})", "");
  const auto b =
      catalog_v2("swapped", R"({"name": "Y", "domains": ["decoder"]}, {"name": "X", "domains": ["decoder"]})", "");
  const auto same = diff_catalogs(a, a);
  CHECK(same.empty());
  CHECK(same.space.configurations > 0);
  CHECK(same.vendors.size() == enum_values<device_vendor>().size());
  for (const auto& v : same.vendors) {
    INFO(to_string(v.vendor));
    CHECK(v.configurations > 0);
  }
  for (const char* p : {"cuda 9.0", "rocm gfx942", "xpu", "cpu", "tpu"}) {
    INFO(p);
    CHECK(std::find(same.space.platforms.begin(), same.space.platforms.end(), p) != same.space.platforms.end());
  }
  const auto d = diff_catalogs(a, b);
  REQUIRE_FALSE(d.empty());
  for (const auto& v : d.vendors) CHECK(v.changed > 0);
  check_examples(d, a, b);
}

// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: catalog text through the strict loader, the to_json round trip and one selection.
#include <attnsel/attnsel.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace attnsel;

[[noreturn]] void violated(const char* invariant, std::string_view spec, const std::string& detail = {}) {
  std::fprintf(stderr, "fuzz_catalog: invariant violated: %s\n  override: '%s'\n%s%s", invariant,
               printable(spec, 200).c_str(), detail.c_str(), detail.empty() ? "" : "\n");
  std::abort();
}

// The selection invariants below are shared (copied) with fuzz_override and fuzz_query.
// A declared error code: one row of the error_code table (unknown_backend, backend_rejected, no_backend,
// bad_override, bad_query at the time of writing), never a value outside it.
bool is_error_code(error_code c) {
  for (const auto v : enum_values<error_code>())
    if (v == c) return true;
  return false;
}

void check(const registry& reg, const query& q, const platform& p, const override_request& ovr,
           const select_options& options) {
  const auto spec = ovr.spec;
  const auto plan = override_plan::parse(spec, reg);
  std::size_t tokens = 0;
  plan.for_each([&](const override_token& t) {
    ++tokens;
    if (t.position != tokens) violated("override tokens are numbered 1, 2, 3 ...", spec);
    if (plan.ok() && t.type != override_token::kind::automatic && t.backend >= reg.size())
      violated("a valid plan's token names a registry index", spec);
  });
  if (!plan.ok()) (void)plan.problem()->message(reg);

  const auto r = select(reg, q, p, ovr, options);
  if (r.ok()) {
    if (!plan.ok() || !is_valid(q)) violated("an invalid override or query never selects", spec);
    const auto& s = r.value();
    if (s.backend == nullptr || s.backend < reg.backends().data() || s.backend >= reg.backends().data() + reg.size())
      violated("a selection points into the registry", spec);
    if (!supports(*s.backend, q, p)) violated("the selected backend passes supports()", spec, std::string(s.name()));
    if (s.variant != resolve_variant(*s.backend, q.domain, p)) violated("the variant is the resolved one", spec);
    if (s.rank == 0) violated("a selection has a 1-based rank", spec);
    if (plan.has_forced() && !plan.automatic() && !options.prefer && !s.overridden)
      violated("a strict override is never substituted", spec, std::string(s.name()));
    (void)s.block_size_for(q.block_size);
  } else {
    const auto& e = r.error();
    if (!is_error_code(e.code)) violated("an error code is one of the four", spec);
    if (e.message.empty()) violated("an error has a message", spec);
    if (!is_valid(q)) {
      if (e.code != error_code::bad_query) violated("an out-of-range query fails with bad_query", spec, e.message);
    } else if (plan.ok() != (e.code == error_code::backend_rejected || e.code == error_code::no_backend)) {
      violated("override errors come exactly from invalid overrides", spec, e.message);
    }
    if (e.code == error_code::backend_rejected)
      for (const auto& name : e.suggestions) {
        const auto* b = reg.find(name);
        if (b == nullptr || !supports(*b, q, p)) violated("suggested backends are validated", spec, name);
      }
  }

  const auto ex = explain(reg, q, p, ovr, options);
  if (ex.result.ok() != r.ok()) violated("select and explain agree on ok()", spec);
  if (r.ok() && ex.result->name() != r->name())
    violated("select and explain agree on the backend", spec,
             std::string(r->name()) + " vs " + std::string(ex.result->name()));
  if (!r.ok() && ex.result.error().code != r.error().code) violated("select and explain agree on the error", spec);

  // The trace must agree with the fast path: the first tried candidate that is not rejected is the
  // winner, every verdict matches supports(), and a rejection always carries a reason.
  std::size_t selected = 0;
  const candidate_report* first_ok = nullptr;
  std::size_t first_ok_rank = 0;
  for (const auto& c : ex.candidates) {
    const auto* b = reg.find(c.name);
    if (b == nullptr) violated("trace names registered backends", spec, c.name);
    if (c.outcome == verdict::selected) ++selected;
    if (c.rank > 0) {
      const bool ok = supports(*b, q, p);
      if ((c.outcome == verdict::rejected) == ok)
        violated("a tried candidate's verdict matches supports()", spec, c.name);
      if (c.outcome == verdict::rejected && c.reasons.empty()) violated("a rejection has a reason", spec, c.name);
      if (ok && (first_ok == nullptr || c.rank < first_ok_rank)) {
        first_ok = &c;
        first_ok_rank = c.rank;
      }
    } else if (c.outcome != verdict::skipped || c.reasons.empty()) {
      violated("an untried candidate is skipped with a reason", spec, c.name);
    }
  }
  if (r.ok()) {
    if (selected != 1) violated("a successful trace marks exactly one candidate selected", spec);
    if (first_ok == nullptr || first_ok->name != r->name())
      violated("the first supported candidate in trial order is the selection", spec,
               std::string(r->name()) + " vs " + (first_ok ? first_ok->name : std::string("none")));
  } else {
    if (selected != 0) violated("a failed trace selects nothing", spec);
    if (plan.ok() && first_ok != nullptr) violated("a failed selection tried no supported candidate", spec, first_ok->name);
  }

  // The report is what `attnsel select --json` prints. It may carry the override's raw bytes, so it is
  // serialised as the CLI does it (invalid UTF-8 replaced); anything else must not throw.
  (void)to_json(ex, q, p, ovr).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  catalog loaded;
  try {
    loaded = parse_catalog_text(text, "fuzz");
  } catch (const catalog_error& e) {
    // The error must be printable: what() is built from the origin, pointer and problem.
    if (e.origin() != "fuzz") violated("catalog_error names its origin", "", e.what());
    return 0;
  }

  // to_json -> parse_catalog must give the same catalog back, and so must its text.
  const auto doc = to_json(loaded);
  catalog back;
  try {
    back = parse_catalog(doc, "roundtrip");
  } catch (const catalog_error& e) {
    violated("to_json output loads again", "", std::string(e.what()) + "\n" + doc.dump(2));
  }
  if (!(back == loaded)) violated("parse_catalog(to_json(c)) == c", "", doc.dump(2));
  const auto dumped = doc.dump();
  catalog_limits roomy;
  roomy.max_bytes = dumped.size() + 1;
  try {
    back = parse_catalog_text(dumped, "roundtrip-text", roomy);
  } catch (const catalog_error& e) {
    violated("to_json(c).dump() loads again", "", std::string(e.what()) + "\n" + doc.dump(2));
  }
  if (!(back == loaded)) violated("parse_catalog_text(to_json(c).dump()) == c", "", dumped);
  if (to_json(back) != doc) violated("to_json is stable across a round trip", "", dumped);

  // Layering the catalog on the reference registry (what --catalog does) either succeeds or leaves the
  // target exactly as it was (the strong guarantee registry mutations promise).
  static const registry reference = reference_registry();
  registry merged = reference;
  try {
    merged.merge(loaded.registry);
  } catch (const registry_error&) {
    if (merged != reference) violated("a failed merge leaves the registry unchanged", "");
  }

  // The fast and the explain path of every check agree, for every backend.
  static const platform cuda = platform::cuda(9, 0).add_component_spec("flashinfer=0.2.5");
  static const platform rocm = platform::rocm("gfx942").add_component_spec("aiter");
  static const query q;
  if (loaded.registry.size() <= 64) {
    for (const auto& b : loaded.registry.backends())
      for (const platform* p : {&cuda, &rocm})
        if (supports(b, q, *p) != check_backend(b, q, *p).empty())
          violated("first_failure() and check_backend() agree", "", b.name);
  }

  // One automatic selection on a fixed query and platform, with the trace cross-checked.
  check(loaded.registry, q, cuda, override_request{}, select_options{});
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: catalog text through the strict loader, the to_json round trip and one selection.
#include <attnsel/all.hpp>

#include "selection_invariants.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace attnsel;
using fuzz_support::check;
using fuzz_support::violated;

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

  // A stock install adds each of its components the platform lacks, and leaves one it has as it was.
  for (const auto& s : loaded.info.stock) {
    const auto stocked = with_stock(loaded.info, platform(s.vendor).add_component_spec("flashinfer=0.2.5"));
    for (const auto& c : s.components)
      if (!stocked.platform.has_component(c.name)) violated("with_stock adds every stock component", "", c.name);
    if (stocked.platform.find_component("flashinfer")->version != parse_component_version("0.2.5"))
      violated("with_stock keeps a component the platform has", "");
  }

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

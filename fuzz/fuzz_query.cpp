// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: JSON queries and platforms (the CLI's --json inputs) through the readers and the selector.
#include <attnsel/all.hpp>

#include "selection_invariants.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

using namespace attnsel;
using fuzz_support::check;
using fuzz_support::reference;
using fuzz_support::violated;

template <class T, class Read>
bool read(const nlohmann::json& j, Read&& reader, T& out) {
  try {
    out = reader(j);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

}  // namespace

// Input: a JSON object {"query": {...}, "platform": {...}, "override": "...", "prefer": bool}, every key
// optional; the whole document is also offered to both readers as it stands.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;

  query q;
  platform p = platform::cuda(9, 0).add_component_spec("flashinfer=0.2.5");
  (void)read(doc, query_from_json, q);
  (void)read(doc, platform_from_json, p);
  if (!doc.is_object()) return 0;
  if (const auto it = doc.find("query"); it != doc.end() && !read(*it, query_from_json, q)) return 0;
  if (const auto it = doc.find("platform"); it != doc.end() && !read(*it, platform_from_json, p)) return 0;
  std::string spec;
  if (const auto it = doc.find("override"); it != doc.end() && it->is_string()) spec = it->get<std::string>();
  select_options options;
  if (const auto it = doc.find("prefer"); it != doc.end() && it->is_boolean()) options.prefer = it->get<bool>();

  // What the readers accept, the writers reproduce.
  try {
    if (!(query_from_json(to_json(q)) == q)) violated("query_from_json(to_json(q)) == q", spec, to_json(q).dump());
    if (!(platform_from_json(to_json(p)) == p))
      violated("platform_from_json(to_json(p)) == p", spec, to_json(p).dump());
  } catch (const std::invalid_argument& e) {
    violated("to_json output reads back", spec, e.what());
  }
  (void)to_string(q);

  check(reference(), q, p, override_request{spec, override_source::config}, options);
  return 0;
}

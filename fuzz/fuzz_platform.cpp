// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: capability, gfx-arch, version and component-spec parsers, with their round trips.
#include <attnsel/all.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

using namespace attnsel;

[[noreturn]] void violated(const char* invariant, std::string_view input, const std::string& detail = {}) {
  std::fprintf(stderr, "fuzz_platform: invariant violated: %s\n  input: '%s'\n%s%s", invariant,
               printable(input, 200).c_str(), detail.c_str(), detail.empty() ? "" : "\n");
  std::abort();
}

void check_capability(std::string_view text) {
  const auto cc = parse_cuda_capability(text);
  if (!cc) return;
  if (cc->major < 1 || cc->major > 99 || cc->minor > 9) violated("capability major 1..99, minor 0..9", text);
  const auto again = parse_cuda_capability(std::to_string(cc->major) + "." + std::to_string(cc->minor));
  if (!again || *again != *cc) violated("a parsed capability's major.minor re-parses equal", text);
}

void check_gfx(std::string_view text) {
  const auto arch = parse_gfx_arch(text);
  bool threw = false;
  try {
    const auto p = platform::rocm(text);
    if (!arch || p.gfx() != arch) violated("platform::rocm agrees with parse_gfx_arch", text);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  if (threw != !arch) violated("platform::rocm throws exactly when parse_gfx_arch fails", text);
  if (!arch) return;
  if (arch->major < 6 || arch->major > 15 || arch->minor > 15 || arch->stepping > 15)
    violated("gfx major 6..15, minor and stepping one hex digit", text);
  const auto name = arch->name();
  const auto again = parse_gfx_arch(name);
  if (!again || *again != *arch) violated("a parsed gfx arch's name() re-parses to the same arch", text, name);
  if (again->name() != name) violated("gfx name() is canonical", text, name);
}

void check_version(std::string_view text) {
  const auto v = parse_component_version(text);
  if (!v) return;
  if (v->count < 1 || v->count > 4) violated("a version has 1 to 4 parts", text);
  const auto str = to_string(*v);
  const auto again = parse_component_version(str);
  if (!again || *again != *v || again->count != v->count)
    violated("a parsed version's str() re-parses equal", text, str);
  if (to_string(*again) != str) violated("version str() is canonical", text, str);
  if (*v < *again || *again < *v) violated("version order is consistent with ==", text, str);
}

void check_component_spec(platform& p, std::string_view spec) {
  try {
    p.add_component_spec(spec);
  } catch (const std::invalid_argument&) {
    return;
  }
  const auto eq = spec.find('=');
  const auto name = spec.substr(0, eq);
  const auto* c = p.find_component(name);
  if (c == nullptr) violated("an added component is found by name", spec);
  if ((eq != std::string_view::npos) != c->version.has_value()) violated("a component has a version iff given", spec);
  if (c->version && *c->version != *parse_component_version(spec.substr(eq + 1)))
    violated("a component keeps the version it was given", spec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_capability(text);
  check_gfx(text);
  check_version(text);

  // Line 1 is an architecture (gfx target or capability), every further line a component spec.
  const auto newline = text.find('\n');
  const auto arch_text = text.substr(0, newline);
  platform p;
  if (const auto gfx = parse_gfx_arch(arch_text)) {
    p = platform(device_vendor::rocm).set_gfx(*gfx);
  } else if (const auto cc = parse_cuda_capability(arch_text)) {
    p = platform::cuda(cc->major, cc->minor);
  }
  std::string_view rest = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    const auto line = rest.substr(0, end);
    check_capability(line);
    check_gfx(line);
    check_version(line);
    check_component_spec(p, line);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  for (std::size_t i = 1; i < p.components().size(); ++i)
    if (!(p.components()[i - 1].name < p.components()[i].name))
      violated("components are sorted by name without duplicates", text);
  (void)to_string(p);

  // A platform survives the JSON form `attnsel --json` reports and `platform_from_json` reads, which reads
  // component names as --component does: a name that is not lower_snake is refused, naming it.
  const auto j = to_json(p);
  const bool snake_names = std::all_of(p.components().begin(), p.components().end(),
                                       [](const component& c) { return is_valid_feature_name(c.name); });
  try {
    if (!(platform_from_json(j) == p)) violated("platform_from_json(to_json(p)) == p", text);
    if (!snake_names) violated("platform_from_json refuses a component name --component refuses", text);
  } catch (const std::invalid_argument& e) {
    if (snake_names) violated("to_json(platform) reads back", text, e.what());
    if (std::string(e.what()).find("lower_snake") == std::string::npos)
      violated("a refused component name is named as not lower_snake", text, e.what());
  }
  return 0;
}

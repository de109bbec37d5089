// SPDX-License-Identifier: Apache-2.0
// Platform data: compute capability and gfx parsing, families, component versions.
#include <attnsel/catalog/report.hpp>
#include <attnsel/core/devices.hpp>
#include <attnsel/core/engine_names.hpp>
#include <attnsel/core/platform.hpp>

#include "catch.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <vector>

using namespace attnsel;

TEST_CASE("CUDA compute capabilities parse in every spelling operators use", "[platform]") {
  struct row {
    const char* text;
    int major, minor;
  };
  const row rows[] = {{"9.0", 9, 0},      {"12.1", 12, 1},   {"sm_90", 9, 0},      {"sm90", 9, 0},
                      {"sm_100a", 10, 0}, {"SM_121", 12, 1}, {"compute_80", 8, 0}, {"sm_89", 8, 9}};
  for (const auto& r : rows) {
    INFO(r.text);
    const auto cc = parse_cuda_capability(r.text);
    REQUIRE(cc);
    CHECK(cc->major == r.major);
    CHECK(cc->minor == r.minor);
  }
}

TEST_CASE("malformed compute capabilities are refused", "[platform]") {
  for (const char* bad : {"", "sm_", "sm", "9", "9.", ".0", "9.10", "0.5", "sm_9", "sm_1000", "99999999999999999999.9",
                          "9.0x", "-9.0", "gfx942", "sm_90b", "9 .0"}) {
    INFO(bad);
    CHECK_FALSE(parse_cuda_capability(bad));
  }
}

TEST_CASE("gfx targets parse with hex minor and stepping", "[platform]") {
  const auto a = parse_gfx_arch("gfx90a");
  REQUIRE(a);
  CHECK(a->major == 9);
  CHECK(a->minor == 0);
  CHECK(a->stepping == 0xa);
  CHECK(a->name() == "gfx90a");
  CHECK(parse_gfx_arch("GFX1201")->name() == "gfx1201");
  CHECK(parse_gfx_arch("gfx90a:sramecc+:xnack-")->name() == "gfx90a");
  for (const char* bad : {"gfx", "gfx9", "gfx94", "gfx12011", "gfx9g2", "gfx542", "gfx1601", "sm_90", "", "gfx-942"}) {
    INFO(bad);
    CHECK_FALSE(parse_gfx_arch(bad));
  }
}

TEST_CASE("gfx families follow vLLM's arch helpers", "[platform]") {
  const auto arch = [](const char* t) { return *parse_gfx_arch(t); };
  CHECK(arch("gfx942").in_family(gfx_family::mi300));
  CHECK(arch("gfx950").in_family(gfx_family::mi300));
  CHECK_FALSE(arch("gfx90a").in_family(gfx_family::mi300));
  CHECK(arch("gfx90a").in_family(gfx_family::gfx9));
  CHECK(arch("gfx90a").in_family(gfx_family::cdna));
  CHECK_FALSE(arch("gfx906").in_family(gfx_family::cdna));
  CHECK(arch("gfx1100").in_family(gfx_family::rdna));
  CHECK(arch("gfx1201").in_family(gfx_family::gfx12));
  CHECK_FALSE(arch("gfx1201").in_family(gfx_family::gfx9));
}

// One table says which targets each family holds (detail::gfx_families): lint's "family within family"
// must agree with membership over every target a gfx name can spell.
TEST_CASE("a family covers another exactly when it holds every target of it", "[platform]") {
  std::vector<gfx_arch> targets;
  for (std::uint8_t major = 6; major <= 15; ++major)
    for (std::uint8_t minor = 0; minor < 16; ++minor)
      for (std::uint8_t stepping = 0; stepping < 16; ++stepping) targets.push_back(gfx_arch{major, minor, stepping});
  std::size_t covered = 0;
  for (const auto inner : enum_values<gfx_family>())
    for (const auto outer : enum_values<gfx_family>()) {
      INFO(to_string(inner) << " within " << to_string(outer));
      const bool every = std::all_of(targets.begin(), targets.end(),
                                     [&](gfx_arch g) { return !g.in_family(inner) || g.in_family(outer); });
      CHECK(detail::span_of(outer).covers(detail::span_of(inner)) == every);
      covered += every ? 1 : 0;
    }
  // Beyond each family itself: mi300 in gfx9 and cdna, cdna in gfx9, gfx10/11/12 in rdna.
  CHECK(covered == enum_values<gfx_family>().size() + 6);
  for (const auto f : enum_values<gfx_family>()) CHECK(detail::span_of(f).example.in_family(f));
}

TEST_CASE("component versions compare numerically part by part", "[platform]") {
  const auto v = [](const char* t) { return *parse_component_version(t); };
  CHECK(v("0.2.10") > v("0.2.9"));
  CHECK(v("1") < v("1.0.1"));
  CHECK(v("9.19.0") == v("9.19"));
  CHECK(to_string(v("0.2.5")) == "0.2.5");
  for (const char* bad : {"", ".", "1.", ".1", "1..2", "1.2.3.4.5", "v1", "1.2-rc1", "1,2", "9999999999"}) {
    INFO(bad);
    CHECK_FALSE(parse_component_version(bad));
  }
}

TEST_CASE("platform components are found by exact name with their versions", "[platform]") {
  auto p = platform::rocm("gfx942");
  p.add_component_spec("aiter_mha");
  p.add_component_spec("aiter=0.1.5");
  p.add_component("aiter", parse_component_version("0.1.6"));  // replaces, does not duplicate
  CHECK(p.has_component("aiter_mha"));
  CHECK_FALSE(p.has_component("aiter_mla"));
  CHECK_FALSE(p.has_component("AITER"));
  REQUIRE(p.find_component("aiter"));
  CHECK(to_string(*p.find_component("aiter")->version) == "0.1.6");
  CHECK(p.components().size() == 2);
  CHECK_THROWS_AS(p.add_component_spec("flashinfer=abc"), std::invalid_argument);
  CHECK_THROWS_AS(p.add_component_spec("=1.0"), std::invalid_argument);
  CHECK_THROWS_AS(platform::rocm("gfx"), std::invalid_argument);
  CHECK(to_string(p) == "rocm gfx942");
  CHECK(to_string(platform::cuda(9, 0)) == "cuda 9.0");
}

TEST_CASE("one text for a capability, a component and a platform with its components", "[platform][text]") {
  CHECK(to_string(cuda_capability{9, 0}) == "9.0");
  CHECK(to_string(cuda_capability{12, 1}) == "12.1");
  CHECK(parse_cuda_capability(to_string(cuda_capability{10, 3})) == cuda_capability{10, 3});
  auto p = platform::rocm("gfx942");
  CHECK(to_string_with_components(p) == "rocm gfx942");
  p.add_component("flashinfer", parse_component_version("0.2.5"));
  p.add_component("aiter");
  CHECK(to_string(p.components()[0]) == "aiter");
  CHECK(to_string(p.components()[1]) == "flashinfer=0.2.5");
  CHECK(to_string_with_components(p) == "rocm gfx942 [aiter, flashinfer=0.2.5]");
  CHECK(to_string_with_components(platform::cuda(9, 0)) == "cuda 9.0");
}

TEST_CASE("arch and component text as people type it, with the one wording of each problem", "[platform][text]") {
  auto cuda = platform(device_vendor::cuda);
  CHECK(set_arch_text(cuda, "sm_90").empty());
  CHECK(to_string(cuda) == "cuda 9.0");
  CHECK(set_arch_text(cuda, "gfx942") == "is not a CUDA compute capability (e.g. 9.0, sm_90, sm90, 12.1)");
  // An arch-specific target: refused with the capability to give, and the platform left as it was.
  for (const char* arch : {"sm_100a", "SM_121F", "compute_90a"})
    CHECK(set_arch_text(cuda, arch).find("names an arch-specific target") == 0);
  // A platform document says it the same way (the query/platform JSON the CLI and Python read).
  try {
    (void)platform_from_json(nlohmann::json::parse(R"({"vendor": "cuda", "arch": "sm_100a"})"));
    FAIL("sm_100a accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("'sm_100a' names an arch-specific target") != std::string::npos);
  }
  CHECK(set_arch_text(cuda, "sm_100a") ==
        "names an arch-specific target, which a platform does not model; give the compute capability without the "
        "suffix ('10.0')");
  CHECK(to_string(cuda) == "cuda 9.0");
  auto rocm = platform(device_vendor::rocm);
  CHECK(set_arch_text(rocm, "gfx90a").empty());
  CHECK(to_string(rocm) == "rocm gfx90a");
  CHECK(set_arch_text(rocm, "9.0") == "is not a gfx target (e.g. gfx942, gfx90a, gfx1100)");
  auto cpu = platform::cpu();
  CHECK(set_arch_text(cpu, "9.0") == "does not apply to platform cpu; only cuda and rocm take an arch");
  CHECK(add_component_text(rocm, "flashinfer=0.2.5").empty());
  CHECK(add_component_text(rocm, "Bad") ==
        "needs a lower_snake NAME or NAME=VERSION (e.g. aiter_mha, flashinfer=0.2.5)");
  CHECK(add_component_text(rocm, "aiter=x.y") ==
        "needs NAME or NAME=VERSION with a dotted numeric version (e.g. flashinfer=0.2.5)");
  CHECK(to_string_with_components(rocm) == "rocm gfx90a [flashinfer=0.2.5]");
}

TEST_CASE("device names fold to the table's keys and give their arch", "[platform][devices]") {
  CHECK(device_key("NVIDIA H100") == "h100");
  CHECK(device_key("nvidia-h100-sxm") == "h100");
  CHECK(device_key("AMD Instinct MI300X") == "mi300x");
  CHECK(device_key("GeForce RTX 4090") == "rtx4090");
  REQUIRE(find_device("H100") != nullptr);
  CHECK(find_device("H100")->arch == "9.0");
  CHECK(find_device("b200")->arch == "10.0");
  CHECK(find_device("MI300X")->vendor == device_vendor::rocm);
  CHECK(find_device("mi300x")->arch == "gfx942");
  CHECK(find_device("h1000") == nullptr);
  CHECK(find_device("") == nullptr);
  // Every row names a well-formed, known arch of its vendor, and keys are unique and already folded.
  for (const auto& d : known_devices) {
    INFO(d.key);
    CHECK(device_key(d.key) == d.key);
    CHECK(find_device(d.key) == &d);
    if (d.vendor == device_vendor::cuda) {
      REQUIRE(parse_cuda_capability(d.arch));
      CHECK(is_known_arch(*parse_cuda_capability(d.arch)));
    } else {
      REQUIRE(parse_gfx_arch(d.arch));
      CHECK(is_known_arch(*parse_gfx_arch(d.arch)));
    }
  }
}

TEST_CASE("known archs, and what a near miss meant", "[platform][devices]") {
  CHECK(is_known_arch(cuda_capability{9, 0}));
  CHECK(is_known_arch(cuda_capability{12, 1}));
  CHECK_FALSE(is_known_arch(cuda_capability{99, 0}));
  CHECK_FALSE(is_known_arch(cuda_capability{1, 0}));
  CHECK(is_known_arch(*parse_gfx_arch("gfx90a")));
  CHECK_FALSE(is_known_arch(*parse_gfx_arch("gfx999")));
  CHECK(arch_suggestion("90") == "9.0");
  CHECK(arch_suggestion("9") == "9.0");
  CHECK(arch_suggestion("100") == "10.0");
  CHECK(arch_suggestion("121") == "12.1");
  CHECK(arch_suggestion("h200") == "9.0");
  CHECK(arch_suggestion("99").empty());  // 9.9 is no capability
  CHECK(arch_suggestion("09").empty());
  CHECK(arch_suggestion("abc").empty());
  CHECK(known_arch_list(device_vendor::cuda).find("9.0, 10.0") != std::string::npos);
  CHECK(known_arch_list(device_vendor::rocm).find("gfx942") != std::string::npos);
}

TEST_CASE("another engine's backend name finds this catalog's name for the same kernels", "[platform][names]") {
  const auto in = [](std::vector<std::string_view> names) {
    return [names](std::string_view n) {
      for (const auto m : names)
        if (m == n) return true;
      return false;
    };
  };
  const auto vllm = in({"FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "TORCH_SDPA"});
  const auto sdpa = in({"FLASH_ATTENTION", "MATH"});
  auto e = find_equivalent("FLASH_ATTENTION", vllm);
  CHECK(e.found);
  CHECK(e.name == "FLASH_ATTN");
  CHECK(e.from_catalog == "torch_sdpa");
  CHECK(e.family == "FlashAttention");
  CHECK(find_equivalent("fa3", vllm).name == "FLASH_ATTN");  // any case
  CHECK(find_equivalent("FLASH_ATTN", sdpa).name == "FLASH_ATTENTION");
  CHECK(find_equivalent("TORCH_NATIVE", vllm).name == "TORCH_SDPA");
  CHECK_FALSE(find_equivalent("MATH", vllm).found);        // no vLLM backend runs SDPA's math kernel
  CHECK_FALSE(find_equivalent("FLASHINFER", sdpa).found);  // nor a torch one FlashInfer
  CHECK_FALSE(find_equivalent("NO_SUCH", vllm).found);
  // Every family names at least two catalogs' backends, each spelling once.
  for (const auto& f : kernel_families) {
    INFO(f.family);
    int named = 0;
    for (const auto& n : f.names) named += n.name.empty() ? 0 : 1;
    CHECK(named >= 2);
  }
}

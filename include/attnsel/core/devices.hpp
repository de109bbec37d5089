// SPDX-License-Identifier: Apache-2.0
// Known devices and architectures: `h100` is CUDA 9.0, `mi300x` is gfx942; which archs exist at all.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/platform.hpp>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

ATTNSEL_BEGIN_NAMESPACE

/// A device people name instead of its architecture. `key` is matched after `device_key()` folds the
/// typed text (lower case, no spaces, dashes or underscores, no `nvidia`/`amd`/`instinct` prefix).
struct known_device {
  std::string_view key;          ///< folded name: `h100`, `mi300x`, `rtx4090`
  device_vendor vendor;          ///< cuda or rocm
  std::string_view arch;         ///< `9.0`, `gfx942`: what `--arch` would be given
  std::string_view driver_name;  ///< the name as the driver reports it (`NVIDIA H100`)
};

/// The device table (docs/cli.md "Device names" prints it). Order: vendor, then generation.
inline constexpr known_device known_devices[] = {
    {"v100", device_vendor::cuda, "7.0", "Tesla V100"},
    {"t4", device_vendor::cuda, "7.5", "Tesla T4"},
    {"rtx2080ti", device_vendor::cuda, "7.5", "NVIDIA GeForce RTX 2080 Ti"},
    {"a100", device_vendor::cuda, "8.0", "NVIDIA A100"},
    {"a30", device_vendor::cuda, "8.0", "NVIDIA A30"},
    {"a10", device_vendor::cuda, "8.6", "NVIDIA A10"},
    {"a10g", device_vendor::cuda, "8.6", "NVIDIA A10G"},
    {"a40", device_vendor::cuda, "8.6", "NVIDIA A40"},
    {"a6000", device_vendor::cuda, "8.6", "NVIDIA RTX A6000"},
    {"rtx3090", device_vendor::cuda, "8.6", "NVIDIA GeForce RTX 3090"},
    {"orin", device_vendor::cuda, "8.7", "Orin"},
    {"l4", device_vendor::cuda, "8.9", "NVIDIA L4"},
    {"l40", device_vendor::cuda, "8.9", "NVIDIA L40"},
    {"l40s", device_vendor::cuda, "8.9", "NVIDIA L40S"},
    {"rtx4090", device_vendor::cuda, "8.9", "NVIDIA GeForce RTX 4090"},
    {"rtx6000ada", device_vendor::cuda, "8.9", "NVIDIA RTX 6000 Ada Generation"},
    {"h100", device_vendor::cuda, "9.0", "NVIDIA H100"},
    {"h800", device_vendor::cuda, "9.0", "NVIDIA H800"},
    {"h200", device_vendor::cuda, "9.0", "NVIDIA H200"},
    {"h20", device_vendor::cuda, "9.0", "NVIDIA H20"},
    {"gh200", device_vendor::cuda, "9.0", "NVIDIA GH200"},
    {"b200", device_vendor::cuda, "10.0", "NVIDIA B200"},
    {"gb200", device_vendor::cuda, "10.0", "NVIDIA GB200"},
    {"b300", device_vendor::cuda, "10.3", "NVIDIA B300"},
    {"gb300", device_vendor::cuda, "10.3", "NVIDIA GB300"},
    {"thor", device_vendor::cuda, "11.0", "NVIDIA Thor"},
    {"rtx5090", device_vendor::cuda, "12.0", "NVIDIA GeForce RTX 5090"},
    {"rtxpro6000", device_vendor::cuda, "12.0", "NVIDIA RTX PRO 6000 Blackwell"},
    {"gb10", device_vendor::cuda, "12.1", "NVIDIA GB10"},
    {"dgxspark", device_vendor::cuda, "12.1", "NVIDIA GB10"},
    {"mi100", device_vendor::rocm, "gfx908", "AMD Instinct MI100"},
    {"mi210", device_vendor::rocm, "gfx90a", "AMD Instinct MI210"},
    {"mi250", device_vendor::rocm, "gfx90a", "AMD Instinct MI250"},
    {"mi250x", device_vendor::rocm, "gfx90a", "AMD Instinct MI250X"},
    {"mi300a", device_vendor::rocm, "gfx942", "AMD Instinct MI300A"},
    {"mi300x", device_vendor::rocm, "gfx942", "AMD Instinct MI300X"},
    {"mi308x", device_vendor::rocm, "gfx942", "AMD Instinct MI308X"},
    {"mi325x", device_vendor::rocm, "gfx942", "AMD Instinct MI325X"},
    {"mi350x", device_vendor::rocm, "gfx950", "AMD Instinct MI350X"},
    {"mi355x", device_vendor::rocm, "gfx950", "AMD Instinct MI355X"},
    {"rx7900xtx", device_vendor::rocm, "gfx1100", "AMD Radeon RX 7900 XTX"},
    {"w7900", device_vendor::rocm, "gfx1100", "AMD Radeon PRO W7900"},
    {"rx9070xt", device_vendor::rocm, "gfx1201", "AMD Radeon RX 9070 XT"},
    {"r9700", device_vendor::rocm, "gfx1201", "AMD Radeon AI PRO R9700"},
};

/// CUDA compute capabilities that exist (NVIDIA's CUDA GPU list; 10.1 was renamed 11.0 in CUDA 13).
inline constexpr std::string_view known_cuda_capabilities[] = {
    "3.5", "3.7", "5.0", "5.2", "5.3", "6.0",  "6.1",  "6.2",  "7.0",  "7.2",  "7.5", "8.0",
    "8.6", "8.7", "8.8", "8.9", "9.0", "10.0", "10.1", "10.3", "11.0", "12.0", "12.1"};

/// gfx targets ROCm ships kernels for (AMD's LLVM target list, GCN 5 onwards).
inline constexpr std::string_view known_gfx_targets[] = {
    "gfx900",  "gfx906",  "gfx908",  "gfx90a",  "gfx940",  "gfx941",  "gfx942",  "gfx950",  "gfx1010",
    "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1200", "gfx1201"};

namespace detail {
inline bool starts_with_folded(std::string_view text, std::string_view prefix) noexcept {
  return text.substr(0, prefix.size()) == prefix;
}
}  // namespace detail

/// `text` folded for the device table: ASCII lower case, spaces, dashes and underscores removed, a
/// leading `nvidia`, `amd`, `instinct`, `radeon`, `geforce` or `tesla` dropped: `NVIDIA H100` is `h100`.
[[nodiscard]] inline std::string device_key(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out.push_back(detail::ascii_lower(c));
  }
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (const std::string_view prefix : {"nvidia", "amd", "instinct", "radeon", "geforce", "tesla"})
      if (out.size() > prefix.size() && detail::starts_with_folded(out, prefix)) {
        out.erase(0, prefix.size());
        dropped = true;
      }
  }
  // Memory and form-factor suffixes name the same chip: h100sxm, h100pcie, h100nvl, a10080gb.
  for (const std::string_view suffix : {"sxm5", "sxm4", "sxm", "pcie", "nvl", "80gb", "40gb", "141gb", "94gb"})
    if (out.size() > suffix.size() && out.compare(out.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.erase(out.size() - suffix.size());
  return out;
}

/// The table entry for a device name (`h100`, `H100`, `NVIDIA H100 80GB HBM3` is not matched: the
/// folded text must equal a key), or null.
[[nodiscard]] inline const known_device* find_device(std::string_view text) {
  const std::string key = device_key(text);
  for (const auto& d : known_devices)
    if (d.key == key) return &d;
  return nullptr;
}

/// True when the capability is one NVIDIA has shipped (known_cuda_capabilities).
[[nodiscard]] inline bool is_known_arch(cuda_capability cc) {
  return std::any_of(std::begin(known_cuda_capabilities), std::end(known_cuda_capabilities),
                     [cc](std::string_view text) { return parse_cuda_capability(text) == cc; });
}
/// True when the gfx target is one ROCm ships kernels for (known_gfx_targets).
[[nodiscard]] inline bool is_known_arch(gfx_arch gfx) {
  return std::any_of(std::begin(known_gfx_targets), std::end(known_gfx_targets),
                     [gfx](std::string_view text) { return parse_gfx_arch(text) == gfx; });
}

/// What a person probably meant by an `--arch` text that does not parse: `90` and `9` are `9.0`, `100`
/// is `10.0`, `121` is `12.1`; a device name gives its arch. Empty when there is no good guess.
[[nodiscard]] inline std::string arch_suggestion(std::string_view text) {
  if (const auto* d = find_device(text)) return std::string(d->arch);
  const bool digits =
      !text.empty() && text.size() <= 3 && text.find_first_not_of("0123456789") == std::string_view::npos;
  if (!digits) return {};
  std::string guess;
  if (text.size() == 1)
    guess = std::string(text) + ".0";
  else
    guess = std::string(text.substr(0, text.size() - 1)) + "." + std::string(text.substr(text.size() - 1));
  if (guess.size() > 1 && guess[0] == '0') return {};
  const auto cc = parse_cuda_capability(guess);
  return cc && is_known_arch(*cc) ? guess : std::string();
}

/// `3.5, 3.7, ... 12.1` or `gfx900, ... gfx1201`: the known archs of a vendor, for messages.
[[nodiscard]] inline std::string known_arch_list(device_vendor vendor) {
  std::string out;
  const auto add = [&out](std::string_view a) { out += (out.empty() ? "" : ", ") + std::string(a); };
  if (vendor == device_vendor::rocm)
    for (const auto a : known_gfx_targets) add(a);
  else
    for (const auto a : known_cuda_capabilities) add(a);
  return out;
}

ATTNSEL_END_NAMESPACE

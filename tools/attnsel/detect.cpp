// SPDX-License-Identifier: Apache-2.0
// Accelerator detection: the vendor by device files, the architecture by nvidia-smi or the KFD topology.
#include "detect.hpp"

#include <attnsel/platform.hpp>

#include <sys/stat.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

namespace attnsel_cli {

namespace {

bool exists(const char* path) noexcept {
  struct stat st {};
  return ::stat(path, &st) == 0;
}

// First line nvidia-smi prints for the first GPU's compute capability ("9.0"), or "".
std::string nvidia_smi_compute_cap() {
  FILE* pipe = ::popen("nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null", "r");
  if (pipe == nullptr) return {};
  std::array<char, 64> line{};
  std::string out;
  if (std::fgets(line.data(), static_cast<int>(line.size()), pipe) != nullptr) out = line.data();
  ::pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) out.pop_back();
  return out;
}

// The KFD topology lists every agent; GPUs carry "gfx_target_version MMmmss" (90402 is gfx942).
std::string kfd_gfx_target() {
  for (int node = 0; node < 64; ++node) {
    std::ifstream in("/sys/class/kfd/kfd/topology/nodes/" + std::to_string(node) + "/properties");
    if (!in) {
      if (node > 0) break;
      continue;
    }
    std::string key;
    unsigned long value = 0;
    while (in >> key >> value) {
      if (key != "gfx_target_version" || value == 0) continue;
      const auto major = value / 10000;
      const auto minor = (value / 100) % 100;
      const auto stepping = value % 100;
      if (major > 15 || minor > 15 || stepping > 15) continue;
      static constexpr char hex[] = "0123456789abcdef";
      return "gfx" + std::to_string(major) + hex[minor] + hex[stepping];
    }
  }
  return {};
}

}  // namespace

attnsel::device_vendor detect_vendor() noexcept {
  if (exists("/proc/driver/nvidia/gpus") || exists("/dev/nvidia0")) return attnsel::device_vendor::cuda;
  if (exists("/dev/kfd")) return attnsel::device_vendor::rocm;
  return attnsel::device_vendor::cpu;
}

std::string detect_arch(attnsel::device_vendor vendor) {
  try {
    if (vendor == attnsel::device_vendor::cuda) {
      const auto text = nvidia_smi_compute_cap();
      return attnsel::parse_cuda_capability(text) ? text : std::string();
    }
    if (vendor == attnsel::device_vendor::rocm) {
      const auto text = kfd_gfx_target();
      return attnsel::parse_gfx_arch(text) ? text : std::string();
    }
  } catch (...) {
    // Detection is a convenience: any failure leaves the architecture unknown.
  }
  return {};
}

}  // namespace attnsel_cli

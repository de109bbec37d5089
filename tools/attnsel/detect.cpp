// SPDX-License-Identifier: Apache-2.0
// Accelerator detection by device files: no driver is loaded, so the tool stays fast everywhere.
#include "detect.hpp"

#include <sys/stat.h>

namespace attnsel_cli {

namespace {

bool exists(const char* path) noexcept {
  struct stat st {};
  return ::stat(path, &st) == 0;
}

}  // namespace

attnsel::device_vendor detect_vendor() noexcept {
  if (exists("/proc/driver/nvidia/gpus") || exists("/dev/nvidia0")) return attnsel::device_vendor::cuda;
  if (exists("/dev/kfd")) return attnsel::device_vendor::rocm;
  return attnsel::device_vendor::cpu;
}

}  // namespace attnsel_cli

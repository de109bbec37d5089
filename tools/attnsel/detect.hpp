// SPDX-License-Identifier: Apache-2.0
// Cheap detection of this machine's accelerator vendor (device files only, no driver calls).
#pragma once

#include <attnsel/enums.hpp>

namespace attnsel_cli {

/// cuda when /proc/driver/nvidia/gpus or /dev/nvidia0 exists, rocm when /dev/kfd exists, else cpu.
[[nodiscard]] attnsel::device_vendor detect_vendor() noexcept;

}  // namespace attnsel_cli

// SPDX-License-Identifier: Apache-2.0
// Detection of this machine's accelerator: vendor from device files, architecture from the driver tools.
#pragma once

#include <attnsel/enums.hpp>

#include <string>

namespace attnsel_cli {

/// cuda when /proc/driver/nvidia/gpus or /dev/nvidia0 exists, rocm when /dev/kfd exists, else cpu.
[[nodiscard]] attnsel::device_vendor detect_vendor() noexcept;

/// The architecture of this machine's first GPU of `vendor` as `--arch` text ("9.0", "gfx942"), or ""
/// when unknown: CUDA asks `nvidia-smi --query-gpu=compute_cap`, ROCm reads gfx_target_version from
/// /sys/class/kfd/kfd/topology. Never throws.
[[nodiscard]] std::string detect_arch(attnsel::device_vendor vendor);

}  // namespace attnsel_cli

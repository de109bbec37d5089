// SPDX-License-Identifier: Apache-2.0
// This machine's platform for the CLI: the library's detect_platform() and a text view of its report.
#pragma once

#include <attnsel/detect/detect.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attnsel_cli {

/// attnsel::detect_platform() with `library_dirs` searched for cuDNN first (torch's lib directory),
/// GPU `device_index`, and the caller's `extra` components (seen by the engine switches). Never throws.
[[nodiscard]] attnsel::detection detect_machine(const std::vector<std::string>& library_dirs, unsigned device_index = 0,
                                                std::vector<attnsel::component> extra = {});

/// The report as a JSON array of {"fact", "value", "found", "source"}.
[[nodiscard]] nlohmann::json facts_json(const attnsel::detection_report& report);

/// One line per fact, `  name  value  (source)`; with `found_only`, facts that were not found are left
/// out except the one saying whether a GPU was found. Lines are printable and at most 100 columns.
[[nodiscard]] std::string render_facts(const attnsel::detection_report& report, bool found_only);

}  // namespace attnsel_cli

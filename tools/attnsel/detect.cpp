// SPDX-License-Identifier: Apache-2.0
// This machine's platform for the CLI: the library's detect_platform() and a text view of its report.
#include "detect.hpp"

#include "terminal.hpp"

#include <attnsel/core/override.hpp>

#include <algorithm>

namespace attnsel_cli {

attnsel::detection detect_machine(const std::vector<std::string>& library_dirs, unsigned device_index,
                                  std::vector<attnsel::component> extra) {
  attnsel::detect_options options;
  options.library_dirs = library_dirs;
  options.device_index = device_index;
  options.extra_components = std::move(extra);
  return attnsel::detect_platform(options);
}

nlohmann::json facts_json(const attnsel::detection_report& report) {
  auto out = nlohmann::json::array();
  for (const auto& f : report.facts)
    out.push_back({{"fact", f.name},
                   {"value", f.found ? nlohmann::json(f.value) : nlohmann::json(nullptr)},
                   {"found", f.found},
                   {"source", f.source}});
  return out;
}

std::string render_facts(const attnsel::detection_report& report, bool found_only) {
  std::size_t name_width = 0;
  for (const auto& f : report.facts) name_width = std::max(name_width, f.name.size());
  name_width = std::min<std::size_t>(name_width, 24);
  std::string out;
  for (const auto& f : report.facts) {
    if (found_only && !f.found && f.name != "gpu") continue;
    const std::string value = f.found ? attnsel::printable(f.value, 40) : std::string("-");
    const std::string lead = "  " + fit(attnsel::printable(f.name, 40), name_width) + "  " + value + "  ";
    const std::string pad(6, ' ');
    bool first = true;
    for (const auto& line : wrap(attnsel::printable(f.source, 400), terminal_width - pad.size())) {
      if (first && lead.size() + line.size() <= terminal_width) {
        out += lead + line + "\n";
      } else {
        if (first) out += lead.substr(0, lead.find_last_not_of(' ') + 1) + "\n";
        out += pad + line + "\n";
      }
      first = false;
    }
  }
  return out;
}

}  // namespace attnsel_cli

// SPDX-License-Identifier: Apache-2.0
// The doctor subcommand: what detection found and how, and which backends of each built-in catalog can run here.
#include "commands.hpp"
#include "detect.hpp"
#include "errors.hpp"
#include "inputs.hpp"
#include "terminal.hpp"
#include "validators.hpp"

#include <attnsel/catalog/builtin_catalog.hpp>
#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/reference.hpp>
#include <attnsel/catalog/report.hpp>
#include <attnsel/core/checks.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/implication.hpp>
#include <attnsel/core/override.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace attnsel_cli {

namespace {

constexpr const char* doctor_footer = R"doc(Examples:
  attnsel doctor
  attnsel doctor --json
  attnsel doctor --library-dir "$(python -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))')"
  VLLM_ROCM_USE_AITER=1 attnsel doctor --component aiter

Probes the CUDA driver (libcuda.so.1) and cuDNN through dlopen, AMD GPUs through the KFD topology,
the CPU through /proc/cpuinfo, and engine switches (VLLM_ROCM_USE_AITER*, TORCH_CUDNN_SDPA_DEPRIORITIZED)
through the environment. Exit status: 0 (also when no GPU is found), 2 usage error.)doc";

// Highest `--device`: more GPUs than this in one host is a typo, not a machine.
constexpr std::uint32_t max_device_index = 1023;

// One backend's verdict on this machine: the domains it can serve, or why it cannot run at all.
struct backend_fit {
  std::string name;
  std::vector<std::string> domains;      // domains whose variant runs here
  std::vector<attnsel::reason> reasons;  // platform, capability and component reasons (none when it runs)
};

// Only what the machine decides: the vendor / architecture and the installed components. Query
// properties (head size, dtype ...) are left to select/explain.
bool machine_reason(attnsel::reason_code code) {
  return code == attnsel::reason_code::platform || code == attnsel::reason_code::capability ||
         code == attnsel::reason_code::component;
}

backend_fit fit_of(const attnsel::backend_descriptor& b, const attnsel::platform& p) {
  backend_fit out{b.name, {}, {}};
  for (const auto domain : attnsel::enum_values<attnsel::attention_domain>()) {
    if (!b.domains.contains(domain)) continue;
    attnsel::query q;
    q.domain = domain;
    bool runs = true;
    for (auto& r : attnsel::check_backend(b, q, p)) {
      if (!machine_reason(r.code)) continue;
      runs = false;
      const bool seen = std::any_of(out.reasons.begin(), out.reasons.end(),
                                    [&](const attnsel::reason& x) { return x.message == r.message; });
      if (!seen) out.reasons.push_back(std::move(r));
    }
    if (runs) out.domains.emplace_back(attnsel::to_string(domain));
  }
  if (!out.domains.empty()) out.reasons.clear();
  return out;
}

std::string gpu_headline(const attnsel::detection& d) {
  if (d.platform.vendor() == attnsel::device_vendor::cpu) {
    // A driver that lists GPUs but not the one asked for: say so, not "no GPU" (the device facts
    // are recorded as not found only when the index is past the visible devices).
    for (const char* fact : {"cuda.device", "rocm.device"})
      if (const auto* dev = d.report.find(fact); dev && !dev->found)
        return "DEVICE INDEX OUT OF RANGE (" + dev->source + "); select and explain use the cpu platform";
    const auto* gpu = d.report.find("gpu");
    return "NO GPU FOUND (" + (gpu ? gpu->source : std::string("none found")) +
           "); select and explain use the cpu platform";
  }
  std::string text = to_string(d.platform);
  if (const auto* name = d.report.find("cuda.device_name"); name && name->found) text += " (" + name->value + ")";
  return text;
}

void print_wrapped(const std::string& lead, const std::string& text) {
  const std::string pad(lead.size(), ' ');
  bool first = true;
  for (const auto& line : wrap(attnsel::printable(text, 4000), terminal_width - lead.size())) {
    std::printf("%s%s\n", (first ? lead : pad).c_str(), line.c_str());
    first = false;
  }
}

}  // namespace

command setup_doctor(CLI::App& app) {
  return make_command<doctor_flags>(
      app, "doctor", "Show what attnsel detects on this machine and which backends can run", doctor_footer, run_doctor,
      [](CLI::App& cli, doctor_flags& flags) {
        add_library_dirs(cli, flags.library_dirs);
        add_component_list(cli, flags.components,
                           "A component this machine has that C++ cannot see, NAME or NAME=VERSION (Python "
                           "packages: flashinfer=0.2.5, aiter); repeatable");
        cli.add_option("--device", flags.device,
                       "Which visible GPU to describe, " + range_text(0, max_device_index) + " (default: 0)")
            ->type_name("N")
            ->transform(count_in(0, max_device_index));
        cli.add_flag("--json", flags.json, "Print one JSON report on stdout");
      });
}

int run_doctor(const doctor_flags& flags) {
  attnsel::platform given;
  add_components(given, flags.components);
  const auto d = detect_machine(flags.library_dirs, flags.device, given.components());

  if (!flags.json) {
    std::printf("attnsel doctor: this machine as attnsel sees it\n\n");
    print_wrapped("gpu:      ", gpu_headline(d));
    print_wrapped("platform: ", attnsel::to_string_with_components(d.platform));
    std::printf("\nfacts (name, value, source):\n%s", render_facts(d.report, false).c_str());
  }
  nlohmann::json catalogs = nlohmann::json::array();
  for (const auto name : attnsel::builtin_catalog_names) {
    const auto c = attnsel::builtin_catalog(name);
    const auto closed = attnsel::close_platform(c.registry, d.platform);
    nlohmann::json cj{{"name", std::string(name)},
                      {"implied", nlohmann::json::array()},
                      {"runs", nlohmann::json::array()},
                      {"cannot_run", nlohmann::json::array()}};
    for (const auto& i : closed.implied) cj["implied"].push_back({{"component", i.name}, {"because", i.because}});
    std::vector<std::string> runs;
    std::vector<backend_fit> cannot;
    for (const auto& b : c.registry.backends()) {
      auto f = fit_of(b, closed.value);
      if (!f.domains.empty()) {
        runs.push_back(f.name + " (" + attnsel::detail::join(f.domains, ", ") + ")");
        cj["runs"].push_back({{"backend", f.name}, {"domains", f.domains}});
      } else {
        nlohmann::json reasons = nlohmann::json::array();
        for (const auto& r : f.reasons)
          reasons.push_back({{"code", std::string(attnsel::to_string(r.code))}, {"message", r.message}});
        cj["cannot_run"].push_back({{"backend", f.name}, {"reasons", reasons}});
        cannot.push_back(std::move(f));
      }
    }
    catalogs.push_back(std::move(cj));
    if (flags.json) continue;
    std::printf("\ncatalog %s:\n", std::string(name).c_str());
    if (!closed.implied.empty()) {
      std::vector<std::string> implied;
      for (const auto& i : closed.implied) implied.push_back(i.name + " (from " + i.because + ")");
      print_wrapped("  implied:    ", attnsel::detail::join(implied, ", "));
    }
    print_wrapped("  can run:    ", runs.empty() ? std::string("none") : attnsel::detail::join(runs, ", "));
    std::printf("  cannot run:%s\n", cannot.empty() ? " none" : "");
    for (const auto& f : cannot) {
      std::vector<std::string> why;
      for (const auto& r : f.reasons) why.push_back(std::string(attnsel::to_string(r.code)) + ": " + r.message);
      print_wrapped("    " + f.name + ": ", attnsel::detail::join(why, "; "));
    }
  }
  if (flags.json) {
    nlohmann::json out{{"gpu", d.platform.vendor() != attnsel::device_vendor::cpu},
                       {"summary", gpu_headline(d)},
                       {"platform", attnsel::to_json(d.platform)},
                       {"facts", facts_json(d.report)},
                       {"catalogs", std::move(catalogs)}};
    std::printf("%s\n", attnsel::json_text(out).c_str());
  }
  return exit_ok;
}

}  // namespace attnsel_cli

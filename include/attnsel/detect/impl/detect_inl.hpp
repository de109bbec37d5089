// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for detect.hpp: detect_platform and the engine switches. The probes it runs
// and the switch table reader sit beside it (probes.hpp, switch_table.hpp).
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/detect/detect.hpp>
#endif

#include <attnsel/detect/impl/switch_table.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE const detected_fact* detection_report::find(std::string_view name) const noexcept {
  const detected_fact* first = nullptr;
  for (const auto& f : facts) {
    if (f.name != name) continue;
    if (f.found) return &f;
    if (!first) first = &f;
  }
  return first;
}

ATTNSEL_INLINE std::string_view builtin_switch_table() noexcept { return generated::engine_switches_data_json; }

ATTNSEL_INLINE std::vector<engine_switch> parse_switch_table(std::string_view text) {
  if (text.size() > (1u << 20)) throw std::invalid_argument("switch table: larger than 1 MiB");
  // Keys appear once per object, as in catalogs: nlohmann would keep the last of a repeated key.
  if (const auto repeated = detail::find_repeated_key(text))
    detail::detect::switch_table_reader().fail(repeated->pointer, "repeated key \"" + printable(repeated->key, 40) +
                                                                      "\"; every key may appear once per object");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("switch table: malformed JSON: ") + e.what());
  }
  return detail::detect::switch_table(doc);
}

ATTNSEL_INLINE void apply_switches(platform& p, const std::vector<engine_switch>& table,
                                   const std::map<std::string, std::string>& env, detection_report& report) {
  for (const auto& s : table) {
    const auto fact = "switch." + s.component;
    std::string why_not;
    if (s.vendor && *s.vendor != p.vendor())
      why_not = "for " + std::string(to_string(*s.vendor)) + ", this platform is " + std::string(to_string(p.vendor()));
    if (why_not.empty() && !s.capabilities.empty() &&
        (!p.capability() ||
         std::find(s.capabilities.begin(), s.capabilities.end(), *p.capability()) == s.capabilities.end())) {
      why_not =
          "needs capability " + detail::join(s.capabilities, ", ", [](cuda_capability c) { return to_string(c); });
    }
    std::string because;
    for (const auto& req : s.requires_components) {
      if (!why_not.empty()) break;
      const auto* c = p.find_component(req.component);
      if (!c) {
        why_not = "component " + req.component + " absent";
      } else if (req.above && (!c->version || !(*c->version > *req.above))) {
        why_not = "component " + req.component +
                  (c->version ? " " + to_string(*c->version) : std::string(" (no version)")) + " is not above " +
                  to_string(*req.above);
      } else {
        because += (because.empty() ? "" : ", ") + std::string("component ") + req.component +
                   (c->version ? " " + to_string(*c->version) : std::string());
      }
    }
    for (const auto& c : s.env) {
      if (!why_not.empty()) break;
      const auto it = env.find(c.name);
      const auto value = it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
      const bool truth = detail::detect::truthy(value, c);
      const auto shown = value ? c.name + "=" + printable(*value, 40)
                               : c.name + " unset (default " + (c.default_value ? "true" : "false") + ")";
      if (truth != c.want)
        why_not = "environment " + shown;
      else
        because += (because.empty() ? "" : ", ") + std::string("environment ") + shown;
    }
    const auto engine = s.engine.empty() ? std::string() : " [" + s.engine + "]";
    if (!why_not.empty()) {
      detail::detect::add(report, fact, "", detail::concat({"not set: ", why_not, engine}), false);
    } else if (p.has_component(s.component)) {
      detail::detect::add(report, fact, "yes", detail::concat({"already present; ", because, engine}), true);
    } else {
      p.add_component(s.component);
      detail::detect::add(report, fact, "yes", because.empty() ? "unconditional" + engine : because + engine, true);
    }
  }
}

ATTNSEL_INLINE detection detect_platform(const detect_options& options) noexcept {
  detection out;
  try {
    const detail::detect::environment env(options.environment);
    bool gpu = false;
    if (options.probe_cuda) gpu = detail::detect::probe_cuda(options, env, out.platform, out.report);
    if (!gpu && options.probe_rocm) gpu = detail::detect::probe_rocm(options, env, out.platform, out.report);
    if (!gpu) {
      out.platform = platform::cpu();
      std::string checked = options.probe_cuda ? "the CUDA driver" : "";
      if (options.probe_rocm) checked += (checked.empty() ? "" : " and ") + std::string("the KFD topology");
      // A driver that lists GPUs, just not the one asked for, records why in its device fact.
      const detected_fact* past = nullptr;
      for (const char* fact : {"cuda.device", "rocm.device"})
        if (const auto* f = out.report.find(fact); f != nullptr && !f->found && past == nullptr) past = f;
      // Devices hidden by a *_VISIBLE_DEVICES variable are hidden, not missing and not out of range.
      const detected_fact* hidden = nullptr;
      for (const char* fact : {"cuda.visible_devices", "rocm.visible_devices"})
        if (const auto* f = out.report.find(fact); f != nullptr && !f->found && hidden == nullptr) hidden = f;
      detail::detect::add(out.report, "gpu", "",
                          hidden != nullptr ? "none visible: " + hidden->source
                          : past != nullptr ? "none at the requested index: " + past->source
                          : checked.empty() ? std::string("not probed")
                                            : "none found: checked " + checked,
                          false);
    }
    if (options.probe_cudnn) detail::detect::probe_cudnn(options, out.platform, out.report);
    if (options.probe_cpu) detail::detect::probe_cpu(options, out.platform, out.report);
    for (const auto& c : options.extra_components) {
      if (!is_valid_feature_name(c.name)) {
        detail::detect::add(out.report, "component." + printable(c.name, 40), "",
                            "caller: not a lower_snake name; ignored", false);
        continue;
      }
      out.platform.add_component(c.name, c.version);
      detail::detect::add(out.report, "component." + c.name, c.version ? to_string(*c.version) : "yes", "caller", true);
    }
    std::vector<engine_switch> table;
    try {
      table = parse_switch_table(options.switch_table.empty() ? builtin_switch_table()
                                                              : std::string_view(options.switch_table));
    } catch (const std::exception& e) {
      detail::detect::add(out.report, "switches", "", e.what(), false);
    }
    std::map<std::string, std::string> switch_env;
    for (const auto& s : table)
      for (const auto& c : s.env)
        if (const auto v = env.get(c.name)) switch_env[c.name] = *v;
    apply_switches(out.platform, table, switch_env, out.report);
  } catch (...) {
    // Out of memory or a loader throwing: what was learned so far stands.
    try {
      detail::detect::add(out.report, "detection", "", "stopped early: an unexpected error", false);
    } catch (...) {
    }
  }
  return out;
}

ATTNSEL_END_NAMESPACE

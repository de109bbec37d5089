// SPDX-License-Identifier: Apache-2.0
// Measured timings behind a policy rule (`attnsel tune`), and the fingerprint of the machine they hold on.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/platform.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// One backend's time for the shape class a measured rule covers.
struct measured_time {
  std::string backend;    ///< canonical name
  double median_us = 0;   ///< median of the repetitions, microseconds
  double spread_pct = 0;  ///< (p90 - p10) / median of the repetitions, percent

  friend bool operator==(const measured_time& a, const measured_time& b) {
    return a.backend == b.backend && a.median_us == b.median_us && a.spread_pct == b.spread_pct;
  }
};

/// Why a measured rule's order is what it is, and where that holds. The timings were taken on one
/// device with these exact component versions, and with these switches (unversioned components such
/// as `cudnn_preferred`) present or absent; on any other platform the rule does not match (a stale
/// measurement is never used), and `explain` says which fact differs.
struct measurement {
  std::string device;                 ///< the device name the timings were taken on (`NVIDIA H200`)
  std::vector<component> components;  ///< each with the exact version measured (`torch=2.11.0`)
  std::vector<std::string> present;   ///< components that were present, whatever their version
  std::vector<std::string> absent;    ///< components that were absent
  std::vector<measured_time> times;   ///< every backend timed, fastest first

  /// True when `p` is the measured device with the measured component versions and switches.
  [[nodiscard]] bool holds_on(const platform& p) const noexcept;
  /// What differs on `p`, one clause per fact (`device NVIDIA H100 (measured on NVIDIA H200)`); empty when
  /// `holds_on(p)`.
  [[nodiscard]] std::vector<std::string> differences(const platform& p) const;
  /// The time measured for `backend`, or nullptr.
  [[nodiscard]] const measured_time* time_of(std::string_view backend) const noexcept;

  friend bool operator==(const measurement& a, const measurement& b) {
    return a.device == b.device && a.components == b.components && a.present == b.present && a.absent == b.absent &&
           a.times == b.times;
  }
};

/// `NVIDIA H200 [torch=2.11.0, cudnn=9.19.0, cudnn_preferred, no aiter]`: the fingerprint a measurement
/// holds on (versions, then the switches present, then those absent).
[[nodiscard]] std::string to_string(const measurement& m);

// Inline: a measured rule is matched on every walk that reaches it, and the rest is short.
inline bool measurement::holds_on(const platform& p) const noexcept {
  if (!device.empty() && p.device_name() != device) return false;
  const auto has = [&p](const std::string& name) { return p.has_component(name); };
  return std::all_of(components.begin(), components.end(),
                     [&p](const component& c) {
                       const component* mine = p.find_component(c.name);
                       return mine != nullptr && mine->version == c.version;
                     }) &&
         std::all_of(present.begin(), present.end(), has) && std::none_of(absent.begin(), absent.end(), has);
}

inline std::vector<std::string> measurement::differences(const platform& p) const {
  std::vector<std::string> out;
  if (!device.empty() && p.device_name() != device)
    out.push_back((p.device_name().empty() ? std::string("no device name stated") : "device " + p.device_name()) +
                  " (measured on " + device + ")");
  for (const auto& c : components) {
    const component* mine = p.find_component(c.name);
    if (mine == nullptr)
      out.push_back("no " + c.name + " (measured with " + to_string(c) + ")");
    else if (mine->version != c.version)
      out.push_back(to_string(*mine) + " (measured with " + to_string(c) + ")");
  }
  for (const auto& name : present)
    if (!p.has_component(name)) out.push_back("no " + name + " (measured with it)");
  for (const auto& name : absent)
    if (p.has_component(name)) out.push_back(name + " (measured without it)");
  return out;
}

inline const measured_time* measurement::time_of(std::string_view backend) const noexcept {
  const auto it =
      std::find_if(times.begin(), times.end(), [backend](const measured_time& t) { return t.backend == backend; });
  return it == times.end() ? nullptr : &*it;
}

inline std::string to_string(const measurement& m) {
  std::string out = m.device.empty() ? std::string("any device") : m.device;
  std::vector<std::string> facts;
  for (const auto& c : m.components) facts.push_back(to_string(c));
  facts.insert(facts.end(), m.present.begin(), m.present.end());
  for (const auto& name : m.absent) facts.push_back("no " + name);
  if (!facts.empty()) out += " [" + detail::join(facts, ", ") + "]";
  return out;
}

ATTNSEL_END_NAMESPACE

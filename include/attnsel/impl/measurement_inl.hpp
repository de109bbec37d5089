// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for measurement.hpp.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/measurement.hpp>
#endif

#include <attnsel/impl/text.hpp>

#include <algorithm>
#include <string>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE bool measurement::holds_on(const platform& p) const noexcept {
  if (!device.empty() && p.device_name() != device) return false;
  const auto has = [&p](const std::string& name) { return p.has_component(name); };
  return std::all_of(components.begin(), components.end(),
                     [&p](const component& c) {
                       const component* mine = p.find_component(c.name);
                       return mine != nullptr && mine->version == c.version;
                     }) &&
         std::all_of(present.begin(), present.end(), has) && std::none_of(absent.begin(), absent.end(), has);
}

ATTNSEL_INLINE std::vector<std::string> measurement::differences(const platform& p) const {
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

ATTNSEL_INLINE const measured_time* measurement::time_of(std::string_view backend) const noexcept {
  const auto it =
      std::find_if(times.begin(), times.end(), [backend](const measured_time& t) { return t.backend == backend; });
  return it == times.end() ? nullptr : &*it;
}

ATTNSEL_INLINE std::string to_string(const measurement& m) {
  std::string out = m.device.empty() ? std::string("any device") : m.device;
  std::vector<std::string> facts;
  for (const auto& c : m.components) facts.push_back(to_string(c));
  facts.insert(facts.end(), m.present.begin(), m.present.end());
  for (const auto& name : m.absent) facts.push_back("no " + name);
  if (!facts.empty()) out += " [" + detail::join(facts, ", ") + "]";
  return out;
}

ATTNSEL_END_NAMESPACE

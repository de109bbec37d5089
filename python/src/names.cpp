// SPDX-License-Identifier: Apache-2.0
// The vocabularies Python callers type (dtypes, attention types, reason codes ...) read from the enum tables.
#include "bindings.hpp"

#include <attnsel/query.hpp>
#include <attnsel/reference.hpp>

namespace attnsel_py {

namespace {

template <class E>
py::tuple names_of() {
  const auto values = attnsel::enum_values<E>();
  py::tuple out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = py::str(std::string(attnsel::to_string(values[i])));
  return out;
}

}  // namespace

std::string quote_input(std::string_view text) { return "'" + attnsel::printable(text, 40) + "'"; }

std::uint32_t check_count(std::string_view name, long long value, std::uint32_t min, std::uint32_t max) {
  if (value < static_cast<long long>(min) || value > static_cast<long long>(max))
    throw py::value_error(std::string(name) + ": " + std::to_string(value) + " is outside " + std::to_string(min) +
                          ".." + std::to_string(max));
  return static_cast<std::uint32_t>(value);
}

void bind_names(py::module_& m) {
  m.attr("DOMAINS") = names_of<attnsel::attention_domain>();
  m.attr("VENDORS") = names_of<attnsel::device_vendor>();
  m.attr("DTYPES") = names_of<attnsel::data_type>();
  m.attr("KV_CACHE_DTYPES") = names_of<attnsel::cache_dtype>();
  m.attr("ATTN_TYPES") = names_of<attnsel::attention_type>();
  m.attr("MODES") = names_of<attnsel::attention_mode>();
  m.attr("REASON_CODES") = names_of<attnsel::reason_code>();
  m.attr("ERROR_CODES") = names_of<attnsel::error_code>();
  m.attr("VERDICTS") = names_of<attnsel::verdict>();
  m.attr("OVERRIDE_SOURCES") = names_of<attnsel::override_source>();
  py::tuple features(attnsel::features::known.size());
  for (std::size_t i = 0; i < attnsel::features::known.size(); ++i)
    features[i] = py::str(std::string(attnsel::features::known[i].name));
  m.attr("FEATURES") = features;
  py::tuple catalogs(attnsel::builtin_catalog_names.size());
  for (std::size_t i = 0; i < attnsel::builtin_catalog_names.size(); ++i)
    catalogs[i] = py::str(std::string(attnsel::builtin_catalog_names[i]));
  m.attr("BUILTIN_CATALOGS") = catalogs;
}

}  // namespace attnsel_py

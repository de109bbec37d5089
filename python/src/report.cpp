// SPDX-License-Identifier: Apache-2.0
// attnsel.to_json: the JSON documents the CLI prints (select --json, platforms, queries, catalogs).
#include "bindings.hpp"

#include <attnsel/report.hpp>

namespace attnsel_py {

namespace {

std::string dump(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string explanation_json(const explanation_handle& e, int indent) {
  const attnsel::override_request request{e.override_spec, e.source};
  return dump(attnsel::to_json(e.ex, e.q, e.p, request), indent);
}

}  // namespace

void bind_report(py::module_& m) {
  const char* doc =
      "JSON text: for an Explanation the report `attnsel select --json` prints; also Platform, Query, Candidate "
      "and Registry (its catalog document). indent=-1 gives one line.";
  m.def("to_json", &explanation_json, py::arg("obj"), py::kw_only(), py::arg("indent") = 2, doc);
  m.def(
      "to_json", [](const attnsel::platform& p, int indent) { return dump(attnsel::to_json(p), indent); },
      py::arg("obj"), py::kw_only(), py::arg("indent") = 2);
  m.def(
      "to_json", [](const attnsel::query& q, int indent) { return dump(attnsel::to_json(q), indent); }, py::arg("obj"),
      py::kw_only(), py::arg("indent") = 2);
  m.def(
      "to_json", [](const attnsel::candidate_report& c, int indent) { return dump(attnsel::to_json(c), indent); },
      py::arg("obj"), py::kw_only(), py::arg("indent") = 2);
  m.def(
      "to_json",
      [](const registry_handle& r, int indent) {
        return dump(attnsel::to_json(attnsel::catalog{r.info, *r.reg}), indent);
      },
      py::arg("obj"), py::kw_only(), py::arg("indent") = 2);
}

}  // namespace attnsel_py

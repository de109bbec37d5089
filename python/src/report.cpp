// SPDX-License-Identifier: Apache-2.0
// attnsel.to_json: the JSON documents the CLI prints (select --json, platforms, queries, catalogs).
#include "bindings.hpp"

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/report.hpp>

namespace attnsel_py {

namespace {

nlohmann::json document(const py::handle& obj) {
  if (py::isinstance<explanation_handle>(obj)) {
    const auto& e = value_arg<explanation_handle>("obj", obj);
    const attnsel::override_request request{e.override_spec, e.source};
    return attnsel::to_json(e.ex, e.q, e.p, request);
  }
  if (py::isinstance<py_platform>(obj))
    return attnsel::to_json(static_cast<const attnsel::platform&>(value_arg<py_platform>("obj", obj)));
  if (py::isinstance<py_query>(obj))
    return attnsel::to_json(static_cast<const attnsel::query&>(value_arg<py_query>("obj", obj)));
  if (py::isinstance<py_candidate>(obj))
    return attnsel::to_json(static_cast<const attnsel::candidate_report&>(value_arg<py_candidate>("obj", obj)));
  if (py::isinstance<registry_handle>(obj)) {
    const auto& r = value_arg<registry_handle>("obj", obj);
    return attnsel::to_json(attnsel::catalog{r.info, *r.reg});
  }
  throw py::type_error("obj: expected an attnsel.Explanation, Platform, Query, Candidate or Registry, got " +
                       type_name(obj));
}

}  // namespace

void bind_report(py::module_& m) {
  m.def(
      "to_json",
      [](const py::handle& obj, const py::handle& indent) {
        const long long n = int_arg("indent", indent);
        if (n < -1 || n > 64) throw py::value_error("indent: " + std::to_string(n) + " is outside -1..64");
        return attnsel::json_text(document(obj), static_cast<int>(n));
      },
      py::arg("obj"), py::kw_only(), py::arg("indent") = 2,
      "JSON text: for an Explanation the report `attnsel select --json` prints; also Platform, Query, Candidate "
      "and Registry (its catalog document). indent=-1 gives one line.");
}

}  // namespace attnsel_py

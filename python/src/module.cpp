// SPDX-License-Identifier: Apache-2.0
// The `attnsel._attnsel` extension module: calls one binder per topic.
#include "bindings.hpp"

#include <attnsel/config.hpp>

PYBIND11_MODULE(_attnsel, m) {
  m.doc() = "attnsel: attention-backend selection (C++ core bindings; import the `attnsel` package)";
  m.attr("__version__") = ATTNSEL_VERSION_STRING;
  attnsel_py::bind_names(m);
  attnsel_py::bind_errors(m);
  attnsel_py::bind_platform(m);
  attnsel_py::bind_query(m);
  attnsel_py::bind_registry(m);
  attnsel_py::bind_overrides(m);
  attnsel_py::bind_selection(m);
  attnsel_py::bind_report(m);
  attnsel_py::bind_detect(m);
  attnsel_py::bind_model_config(m);
}

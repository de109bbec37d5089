// SPDX-License-Identifier: Apache-2.0
// attnsel.SelectionError and attnsel.CatalogError: ValueError subclasses with the C++ error's fields.
#include "bindings.hpp"

namespace attnsel_py {

namespace {

// Created once by bind_errors and kept for the life of the process (the module object owns them too).
PyObject* selection_error_type = nullptr;
PyObject* catalog_error_type = nullptr;

py::object new_catalog_error(const std::string& message, const std::string& origin, const std::string& pointer,
                             const std::string& problem) {
  py::object error = py::reinterpret_borrow<py::object>(catalog_error_type)(message);
  error.attr("message") = message;
  error.attr("origin") = origin;
  error.attr("pointer") = pointer;
  error.attr("problem") = problem;
  return error;
}

}  // namespace

py::object make_selection_error(const attnsel::selection_error& e) {
  py::object error = py::reinterpret_borrow<py::object>(selection_error_type)(e.message);
  error.attr("code") = std::string(attnsel::to_string(e.code));
  error.attr("message") = e.message;
  py::list candidates;
  for (const auto& c : e.candidates) candidates.append(make_candidate(c));
  error.attr("candidates") = candidates;
  py::list suggestions;
  for (const auto& s : e.suggestions) suggestions.append(s);
  error.attr("suggestions") = suggestions;
  return error;
}

void raise_instance(const py::object& error) {
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw py::error_already_set();
}

void raise_catalog_error(const attnsel::catalog_error& e) {
  raise_instance(new_catalog_error(e.what(), e.origin(), e.pointer(), e.problem()));
}

void raise_catalog_error(const attnsel::registry_error& e) {
  raise_instance(new_catalog_error(e.what(), "", "", e.what()));
}

void bind_errors(py::module_& m) {
  selection_error_type = PyErr_NewExceptionWithDoc(
      "attnsel.SelectionError",
      "No backend could be selected. Attributes: code (backend_rejected, no_backend, unknown_backend, "
      "bad_override, bad_query), message, candidates (list of Candidate), suggestions (list of str).",
      PyExc_ValueError, nullptr);
  catalog_error_type = PyErr_NewExceptionWithDoc(
      "attnsel.CatalogError",
      "A catalog could not be loaded or merged. Attributes: message, origin (file or <string>), pointer "
      "(JSON pointer of the bad value, '' for the root), problem.",
      PyExc_ValueError, nullptr);
  if (!selection_error_type || !catalog_error_type) throw py::error_already_set();
  // The module holds its own references; the globals stay valid as long as the interpreter does.
  m.attr("SelectionError") = py::reinterpret_borrow<py::object>(selection_error_type);
  m.attr("CatalogError") = py::reinterpret_borrow<py::object>(catalog_error_type);
}

}  // namespace attnsel_py

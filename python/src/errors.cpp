// SPDX-License-Identifier: Apache-2.0
// attnsel.SelectionError and attnsel.CatalogError: ValueError subclasses with the C++ error's fields.
#include "bindings.hpp"

namespace attnsel_py {

namespace {

// Created once by bind_errors; the module holds them for the life of the interpreter, and these
// handles are never released (no destructor runs after the interpreter is gone).
py::handle selection_error_type;
py::handle catalog_error_type;

py::object new_catalog_error(const std::string& message, const std::string& origin, const std::string& pointer,
                             const std::string& problem) {
  py::object error = catalog_error_type(message);
  error.attr("message") = message;
  error.attr("origin") = origin;
  error.attr("pointer") = pointer;
  error.attr("problem") = problem;
  return error;
}

void set_error(const py::object& error) { PyErr_SetObject(py::type::handle_of(error).ptr(), error.ptr()); }

}  // namespace

py::object make_selection_error(const attnsel::selection_error& e) {
  // The attributes live in the instance's __dict__, which BaseException.__reduce__ pickles with args.
  py::object error = selection_error_type(e.message);
  error.attr("code") = std::string(attnsel::to_string(e.code));
  error.attr("message") = e.message;
  py::list candidates;
  for (const auto& c : e.candidates) candidates.append(py::cast(py_candidate(c)));
  error.attr("candidates") = candidates;
  py::list suggestions;
  for (const auto& s : e.suggestions) suggestions.append(s);
  error.attr("suggestions") = suggestions;
  return error;
}

void raise_instance(const py::object& error) {
  set_error(error);
  throw py::error_already_set();
}

void bind_errors(py::module_& m) {
  static const auto* selection_error =
      new py::exception<attnsel::selection_exception>(m, "SelectionError", PyExc_ValueError);
  static const auto* catalog_error = new py::exception<attnsel::catalog_error>(m, "CatalogError", PyExc_ValueError);
  selection_error->attr("__doc__") =
      "No backend could be selected. Attributes: code (backend_rejected, no_backend, unknown_backend, "
      "bad_override, bad_query), message, candidates (list of Candidate), suggestions (list of str).";
  catalog_error->attr("__doc__") =
      "A catalog could not be loaded or merged. Attributes: message, origin (file or <string>), pointer "
      "(JSON pointer of the bad value, '' for the root), problem.";
  selection_error_type = *selection_error;
  catalog_error_type = *catalog_error;
  // C++ exceptions from the library become these types with their fields.
  // pybind11's translator type takes the exception_ptr by value.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const attnsel::selection_exception& e) {
      set_error(make_selection_error(e.error()));
    } catch (const attnsel::catalog_error& e) {
      set_error(new_catalog_error(e.what(), e.origin(), e.pointer(), e.problem()));
    } catch (const attnsel::registry_error& e) {
      set_error(new_catalog_error(e.what(), "", "", e.what()));
    }
  });
}

}  // namespace attnsel_py

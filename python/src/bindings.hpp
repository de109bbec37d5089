// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the Python bindings: the wrapped handle types, argument checks, one bind_* per topic.
#pragma once

#include <attnsel/catalog.hpp>
#include <attnsel/enums.hpp>
#include <attnsel/override.hpp>
#include <attnsel/platform.hpp>
#include <attnsel/query.hpp>
#include <attnsel/registry.hpp>
#include <attnsel/selector.hpp>

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace attnsel_py {

namespace py = pybind11;

/// A registry as Python sees it. The registry itself is never changed in place: `merge` builds a new
/// one and swaps the pointer (under the GIL), so a selection running without the GIL, or a Selection
/// pointing into the old registry, keeps a valid one.
struct registry_handle {
  std::shared_ptr<const attnsel::registry> reg;
  attnsel::catalog_info info;
};

/// A successful selection plus the registry its pointers refer into.
struct selection_handle {
  attnsel::selection sel;
  std::shared_ptr<const attnsel::registry> keep;
};

/// The decoder and encoder override strings; immutable once built, so `select` may read them
/// without the GIL.
struct override_set_handle {
  std::string decoder;
  std::string encoder;
  attnsel::override_source source = attnsel::override_source::api;

  [[nodiscard]] attnsel::override_set view() const { return {{decoder, source}, {encoder, source}}; }
};

/// An explanation plus what `to_json` needs to print the CLI's report.
struct explanation_handle {
  attnsel::explanation ex;
  std::shared_ptr<const attnsel::registry> keep;
  attnsel::query q;
  attnsel::platform p;
  std::string override_spec;
  attnsel::override_source source = attnsel::override_source::none;
  py::object result;  ///< Selection or SelectionError, built once
};

// ---- argument checks with the CLI's wording (tools/attnsel/inputs.cpp), `--flag` spelt `name` ---------

/// `'text'` with control and non-ASCII bytes escaped, as the CLI quotes what a person typed.
std::string quote_input(std::string_view text);

/// Parses a catalog string for enum `E`; ValueError `name: 'x' is not one of a, b, c` otherwise.
template <class E>
E parse_arg(std::string_view name, std::string_view text) {
  if (const auto value = attnsel::parse_enum<E>(text)) return *value;
  throw py::value_error(std::string(name) + ": " + quote_input(text) + " is not one of " + attnsel::enum_names<E>());
}

/// Adds `name` or `name=version` to `p`; ValueError worded like the CLI's --component, naming `argument`.
void add_component(attnsel::platform& p, const std::string& spec, std::string_view argument);

/// `value` as a count in [min, max]; ValueError `name: -1 is outside 1..65536` otherwise.
std::uint32_t check_count(std::string_view name, long long value, std::uint32_t min, std::uint32_t max);

/// Runs `f` (which returns a new reference) for a hand-written CPython entry point: a C++ or pybind11
/// exception becomes the pending Python error and nullptr, as CPython expects.
template <class F>
// NOLINTNEXTLINE(bugprone-exception-escape): only error_already_set::restore() may throw, and only when called twice
PyObject* guarded_call(F&& f) noexcept {
  try {
    return f();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {  // nothing may cross into the interpreter, whatever a callback throws
    PyErr_SetString(PyExc_RuntimeError, "attnsel: unknown C++ exception");
  }
  return nullptr;
}

// ---- the exception types -----------------------------------------------------------------------------

/// An (unraised) attnsel.SelectionError carrying code, message, candidates and suggestions.
py::object make_selection_error(const attnsel::selection_error& e);
/// Raises `error` (an exception instance) as a Python exception.
[[noreturn]] void raise_instance(const py::object& error);
/// Raises attnsel.CatalogError with origin, pointer and problem attributes.
[[noreturn]] void raise_catalog_error(const attnsel::catalog_error& e);
/// Raises attnsel.CatalogError for a registry invariant broken by a merge.
[[noreturn]] void raise_catalog_error(const attnsel::registry_error& e);

/// A Python Candidate for one trace entry.
py::object make_candidate(const attnsel::candidate_report& c);
/// A Python Selection keeping `keep` alive.
py::object make_selection(attnsel::selection sel, std::shared_ptr<const attnsel::registry> keep);

// ---- one binder per topic (each in its own .cpp) ----------------------------------------------------

void bind_names(py::module_& m);      // names.cpp: the enum vocabularies as tuples
void bind_errors(py::module_& m);     // errors.cpp: SelectionError, CatalogError
void bind_platform(py::module_& m);   // platform.cpp: Platform
void bind_query(py::module_& m);      // query.cpp: Query
void bind_registry(py::module_& m);   // registry.cpp: Registry and the catalog loaders
void bind_overrides(py::module_& m);  // overrides.cpp: OverrideSet
void bind_selection(py::module_& m);  // selection.cpp: Candidate, Reason, Explanation, select, explain
void bind_selection_type(
    py::module_& m);               // selection_type.cpp: Selection (a hand-written type: select() makes one per call)
void bind_report(py::module_& m);  // report.cpp: to_json
void bind_detect(py::module_& m);  // detect.cpp: _detect, the C++ half of attnsel.detect_platform()
void bind_model_config(py::module_& m);  // model_config.cpp: ModelConfig, read_model_config, Query.from_model_config

}  // namespace attnsel_py

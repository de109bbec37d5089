// SPDX-License-Identifier: Apache-2.0
// Entry points called through CPython's vectorcall protocol instead of pybind11's dispatcher: the argument
// reader and the exception boundary they share.
#include "bindings.hpp"

#include <string>
#include <vector>

namespace attnsel_py {

void fast_arguments(const fast_signature& sig, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                    PyObject** out) {
  if (nargs > static_cast<Py_ssize_t>(sig.positional))
    throw py::type_error(std::string(sig.callable) + "() takes at most " + std::to_string(sig.positional) +
                         " positional argument" + (sig.positional == 1 ? "" : "s") + " (" + std::to_string(nargs) +
                         " given)");
  for (Py_ssize_t i = 0; i < nargs; ++i) out[i] = args[i];
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t j = 0; j < nkw; ++j) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, j);
    std::size_t i = 0;
    while (i < sig.count && PyUnicode_CompareWithASCIIString(key, sig.names[i]) != 0) ++i;
    if (i == sig.count)
      unexpected_keyword(sig.callable, str_arg("keyword", key),
                         std::vector<std::string>(sig.names, sig.names + sig.count));
    if (out[i])
      throw py::type_error(std::string(sig.callable) + "() got multiple values for argument '" + sig.names[i] + "'");
    out[i] = args[nargs + j];
  }
  for (std::size_t i = 0; i < sig.required; ++i)
    if (!out[i])
      throw py::type_error(std::string(sig.callable) + "() missing required argument '" + sig.names[i] + "'");
}

bool truth_arg(PyObject* value, bool absent) {
  if (value == nullptr) return absent;
  const int v = PyObject_IsTrue(value);
  if (v < 0) throw py::error_already_set();
  return v != 0;
}

void set_python_error() noexcept {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {  // nothing may cross into the interpreter
    PyErr_SetString(PyExc_RuntimeError, "attnsel: unknown C++ exception");
  }
}

void add_fast_method(py::handle cls, PyMethodDef* def) {
  PyObject* descr = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), def);
  if (descr == nullptr) throw py::error_already_set();
  cls.attr(def->ml_name) = py::reinterpret_steal<py::object>(descr);
}

}  // namespace attnsel_py

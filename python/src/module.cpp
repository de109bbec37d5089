// SPDX-License-Identifier: Apache-2.0
// The `attnsel._attnsel` extension module: calls one binder per topic.
#include "bindings.hpp"

#include <attnsel/config.hpp>

// pybind11 2.x supports only the main interpreter: its first use in a subinterpreter waits forever in
// PyGILState_Ensure. So the module's init function checks the interpreter before pybind11 runs and
// refuses with an ImportError; PYBIND11_MODULE's own init function is renamed to be called from it.
#define PyInit__attnsel attnsel_pybind11_init
PYBIND11_MODULE(_attnsel, m) {
  m.doc() = "attnsel: attention-backend selection (C++ core bindings; import the `attnsel` package)";
  m.attr("__version__") = ATTNSEL_VERSION_STRING;
  // Classes, functions and exceptions take their __module__ (and so their names in help(), reprs, errors
  // and pickles) from the module's __name__ while they are defined: the public package's, then restored.
  const pybind11::object own_name = m.attr("__name__");
  m.attr("__name__") = "attnsel";
  attnsel_py::bind_names(m);
  attnsel_py::bind_errors(m);
  attnsel_py::bind_platform(m);
  attnsel_py::bind_query(m);
  attnsel_py::bind_registry(m);
  attnsel_py::bind_overrides(m);
  attnsel_py::bind_selection(m);
  attnsel_py::bind_selector(m);
  attnsel_py::bind_report(m);
  attnsel_py::bind_detect(m);
  attnsel_py::bind_model_config(m);
  attnsel_py::bind_tuning(m);
  m.attr("__name__") = own_name;
}
#undef PyInit__attnsel

// CPython's import protocol fixes the init function's name (PyInit_<module>); it is not ours to choose.
extern "C" PYBIND11_EXPORT PyObject* PyInit__attnsel();   // NOLINT(bugprone-reserved-identifier)
extern "C" PYBIND11_EXPORT PyObject* PyInit__attnsel() {  // NOLINT(bugprone-reserved-identifier)
  if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
    PyErr_SetString(PyExc_ImportError,
                    "attnsel cannot be imported in a subinterpreter: its pybind11 core supports only the main "
                    "interpreter");
    return nullptr;
  }
  // CPython imports a single-phase module whose definition has m_size -1 (pybind11's) into a later
  // interpreter by copying the first one's dict, without calling this function: a subinterpreter that
  // reached the core past the package's own check (a stand-in `attnsel` package, an ExtensionFileLoader)
  // got a working core and saw CatalogError instead of this ImportError. With m_size 0 CPython calls this
  // function again in every interpreter: a subinterpreter is refused above, and the main interpreter
  // (re-importing after `del sys.modules[...]`) gets the module it made, never a second pybind11 init.
  static PyObject* made = nullptr;
  if (made != nullptr) {
    Py_INCREF(made);
    return made;
  }
  PyObject* module = attnsel_pybind11_init();
  if (module == nullptr) return nullptr;
  // pybind11 3 initialises in several phases (PEP 489): it returns the module's definition, which CPython
  // runs in each interpreter, refusing a subinterpreter itself; there is nothing to adjust.
  if (!PyModule_Check(module)) return module;
  PyModule_GetDef(module)->m_size = 0;
  made = module;
  Py_INCREF(made);  // kept for the process: the main interpreter's module lives until exit
  return module;
}

// SPDX-License-Identifier: Apache-2.0
// attnsel.Selection as a small hand-written CPython type: one pymalloc allocation per successful select().
#include "bindings.hpp"

#include <new>
#include <string>
#include <utility>

namespace attnsel_py {

namespace {

// pybind11 classes cost a global instance-registry insert per object; a Selection is made on every
// select() call, so it is a plain extension type instead (no GC: it holds no Python references).
struct selection_object {
  PyObject_HEAD selection_handle value;
};

PyTypeObject* selection_type = nullptr;

const attnsel::selection& sel(PyObject* self) { return reinterpret_cast<selection_object*>(self)->value.sel; }

PyObject* text(std::string_view s) { return PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size())); }

template <class F>
// NOLINTNEXTLINE(bugprone-exception-escape): only error_already_set::restore() may throw, and only when called twice
PyObject* guarded(F&& f) noexcept {
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

void dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  reinterpret_cast<selection_object*>(self)->value.~selection_handle();
  type->tp_free(self);
  Py_DECREF(type);  // heap type: each instance holds a reference to it
}

PyObject* refuse_new(PyTypeObject*, PyObject*, PyObject*) {
  PyErr_SetString(PyExc_TypeError, "attnsel.Selection objects come from attnsel.select()");
  return nullptr;
}

PyObject* get_backend(PyObject* self, void*) { return text(sel(self).name()); }
PyObject* get_variant(PyObject* self, void*) { return text(sel(self).variant_name()); }
PyObject* get_rank(PyObject* self, void*) { return PyLong_FromSize_t(sel(self).rank); }
PyObject* get_overridden(PyObject* self, void*) { return PyBool_FromLong(sel(self).overridden); }
PyObject* get_source(PyObject* self, void*) { return text(attnsel::to_string(sel(self).source)); }
PyObject* get_fell_back(PyObject* self, void*) { return PyBool_FromLong(sel(self).fell_back); }
PyObject* get_fallback(PyObject* self, void*) {
  return guarded([&] {
    py::list out;
    for (const auto& c : sel(self).fallback) out.append(make_candidate(c));
    return out.release().ptr();
  });
}

PyObject* block_size_for(PyObject* self, PyObject* arg) {
  const unsigned long current = PyLong_AsUnsignedLong(arg);
  if (PyErr_Occurred()) return nullptr;
  if (current > 0xffffffffUL) {
    PyErr_SetString(PyExc_ValueError, "current: block size above 2**32-1");
    return nullptr;
  }
  return PyLong_FromUnsignedLong(sel(self).block_size_for(static_cast<std::uint32_t>(current)));
}

PyObject* repr(PyObject* self) {
  return guarded([&] {
    const auto& s = sel(self);
    std::string out = "Selection(backend=" + std::string(py::repr(py::str(std::string(s.name())))) +
                      ", variant=" + std::string(py::repr(py::str(std::string(s.variant_name())))) +
                      ", rank=" + std::to_string(s.rank) + ", overridden=" + (s.overridden ? "True" : "False");
    if (s.fell_back) out += ", fell_back=True";
    out += ")";
    return text(out);
  });
}

PyObject* str(PyObject* self) { return get_backend(self, nullptr); }

PyObject* richcompare(PyObject* a, PyObject* b, int op) {
  if ((op != Py_EQ && op != Py_NE) || Py_TYPE(b) != selection_type) Py_RETURN_NOTIMPLEMENTED;
  const auto& x = sel(a);
  const auto& y = sel(b);
  const bool equal = x.name() == y.name() && x.variant_name() == y.variant_name() && x.rank == y.rank &&
                     x.overridden == y.overridden && x.source == y.source && x.fell_back == y.fell_back;
  return PyBool_FromLong(op == Py_EQ ? equal : !equal);
}

PyGetSetDef getset[] = {
    {"backend", get_backend, nullptr, "The chosen backend's canonical name.", nullptr},
    {"variant", get_variant, nullptr, "The variant whose capabilities were checked ('' for none).", nullptr},
    {"rank", get_rank, nullptr, "1-based trial position of the winner.", nullptr},
    {"overridden", get_overridden, nullptr, "Chosen because the override named it.", nullptr},
    {"source", get_source, nullptr, "Where the override came from: none, api, flag, env or config.", nullptr},
    {"fell_back", get_fell_back, nullptr, "prefer=True: every forced backend failed; automatic choice used.", nullptr},
    {"fallback", get_fallback, nullptr, "prefer=True: why each forced backend was rejected (list of Candidate).",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMethodDef methods[] = {
    {"block_size_for", block_size_for, METH_O,
     "block_size_for(current, /)\n--\n\nvLLM's block-size negotiation: current if the kernel accepts it, else "
     "its preferred size, else its smallest supported multiple."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

py::object make_selection(attnsel::selection s, std::shared_ptr<const attnsel::registry> keep) {
  PyObject* self = selection_type->tp_alloc(selection_type, 0);
  if (!self) throw py::error_already_set();
  new (&reinterpret_cast<selection_object*>(self)->value) selection_handle{std::move(s), std::move(keep)};
  return py::reinterpret_steal<py::object>(self);
}

void bind_selection_type(py::module_& m) {
  static PyType_Slot slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(&dealloc)},
      {Py_tp_new, reinterpret_cast<void*>(&refuse_new)},
      {Py_tp_repr, reinterpret_cast<void*>(&repr)},
      {Py_tp_str, reinterpret_cast<void*>(&str)},
      {Py_tp_richcompare, reinterpret_cast<void*>(&richcompare)},
      {Py_tp_getset, getset},
      {Py_tp_methods, methods},
      {Py_tp_doc, const_cast<char*>("A successful selection (from attnsel.select).")},
      {0, nullptr},
  };
  static PyType_Spec spec = {"attnsel.Selection", static_cast<int>(sizeof(selection_object)), 0, Py_TPFLAGS_DEFAULT,
                             slots};
  PyObject* type = PyType_FromSpec(&spec);
  if (!type) throw py::error_already_set();
  selection_type = reinterpret_cast<PyTypeObject*>(type);
  m.attr("Selection") = py::reinterpret_steal<py::object>(type);  // the module keeps it alive
}

}  // namespace attnsel_py

// SPDX-License-Identifier: Apache-2.0
// select() and explain() with their result types: Selection, Candidate, Reason, Explanation.
#include "bindings.hpp"

#include <optional>
#include <utility>

namespace attnsel_py {

namespace {

using attnsel::candidate_report;

// The request `q`'s domain reads from `ovr` (None, str or OverrideSet). The views point into the
// argument object, which the caller keeps alive (and which is immutable) for the whole call.
attnsel::override_request request_for(const py::handle& ovr, const attnsel::query& q) {
  if (ovr.is_none()) return {};
  if (PyUnicode_Check(ovr.ptr())) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(ovr.ptr(), &size);
    if (!data) throw py::error_already_set();
    return {std::string_view(data, static_cast<std::size_t>(size)), attnsel::override_source::api};
  }
  if (py::isinstance<override_set_handle>(ovr)) {
    const auto& set = ovr.cast<const override_set_handle&>();
    return {q.domain == attnsel::attention_domain::encoder ? set.encoder : set.decoder, set.source};
  }
  throw py::type_error("override: expected None, a str or an OverrideSet");
}

// The pybind11 object behind `obj` when it is exactly (or derives from) `type`; TypeError otherwise.
// Exact types take the short path: pybind11 stores a simple instance's value pointer inline.
template <class T>
const T& unwrap(PyObject* obj, PyTypeObject* type, const char* arg, const char* type_name) {
  if (Py_TYPE(obj) == type) {
    auto* inst = reinterpret_cast<py::detail::instance*>(obj);
    if (inst->simple_layout && inst->simple_value_holder[0])
      return *static_cast<const T*>(inst->simple_value_holder[0]);
  }
  if (!PyObject_TypeCheck(obj, type))
    throw py::type_error(std::string("select(): ") + arg + " must be an attnsel." + type_name + ", not " +
                         Py_TYPE(obj)->tp_name);
  return py::handle(obj).cast<const T&>();
}

PyTypeObject* registry_type = nullptr;
PyTypeObject* query_type = nullptr;
PyTypeObject* platform_type = nullptr;

// Reacquires the GIL on every way out of the selector, exceptions included.
struct without_gil {
  PyThreadState* state = PyEval_SaveThread();
  without_gil() = default;
  without_gil(const without_gil&) = delete;
  without_gil& operator=(const without_gil&) = delete;
  ~without_gil() { PyEval_RestoreThread(state); }
};

// select(registry, query, platform, override=None, *, prefer=False, raise_on_error=True): vectorcall
// argument parsing by hand, because pybind11's generic dispatcher costs more than the selection itself.
// NOLINTNEXTLINE(bugprone-exception-escape): guarded_call catches everything; tidy cannot see through it
PyObject* select_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) noexcept {
  return guarded_call([&]() -> PyObject* {
    static const char* const names[] = {"registry", "query", "platform", "override", "prefer", "raise_on_error"};
    PyObject* a[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    if (nargs > 4)
      throw py::type_error("select() takes at most 4 positional arguments (" + std::to_string(nargs) + " given)");
    for (Py_ssize_t i = 0; i < nargs; ++i) a[i] = args[i];
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; ++j) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, j);
      std::size_t i = 0;
      while (i < 6 && PyUnicode_CompareWithASCIIString(key, names[i]) != 0) ++i;
      if (i == 6)
        throw py::type_error("select() got an unexpected keyword argument '" + py::str(key).cast<std::string>() + "'");
      if (a[i]) throw py::type_error(std::string("select() got multiple values for argument '") + names[i] + "'");
      a[i] = args[nargs + j];
    }
    for (std::size_t i = 0; i < 3; ++i)
      if (!a[i]) throw py::type_error(std::string("select() missing required argument '") + names[i] + "'");
    const auto& r = unwrap<registry_handle>(a[0], registry_type, "registry", "Registry");
    const auto& q = unwrap<attnsel::query>(a[1], query_type, "query", "Query");
    const auto& p = unwrap<attnsel::platform>(a[2], platform_type, "platform", "Platform");
    const auto request = request_for(a[3] ? py::handle(a[3]) : py::handle(Py_None), q);
    attnsel::select_options options;
    bool raise_on_error = true;
    if (a[4]) {
      const int v = PyObject_IsTrue(a[4]);
      if (v < 0) throw py::error_already_set();
      options.prefer = v != 0;
    }
    if (a[5]) {
      const int v = PyObject_IsTrue(a[5]);
      if (v < 0) throw py::error_already_set();
      raise_on_error = v != 0;
    }
    auto keep = r.reg;  // taken under the GIL: a concurrent merge() swaps r.reg, never this registry
    std::optional<attnsel::selection_result> result;
    {
      // Query, Platform and OverrideSet are immutable from Python and `keep` holds the registry:
      // nothing in this block touches a Python object.
      without_gil nogil;
      result.emplace(attnsel::select(*keep, q, p, request, options));
    }
    if (result->ok()) return make_selection(result->value(), std::move(keep)).release().ptr();
    auto error = make_selection_error(result->error());
    if (raise_on_error) raise_instance(error);
    return error.release().ptr();
  });
}

explanation_handle explain_py(const registry_handle& r, const attnsel::query& q, const attnsel::platform& p,
                              const py::handle& ovr, bool prefer) {
  const auto request = request_for(ovr, q);
  auto keep = r.reg;
  attnsel::select_options options;
  options.prefer = prefer;
  std::optional<attnsel::explanation> ex;
  {
    py::gil_scoped_release nogil;
    ex.emplace(attnsel::explain(*keep, q, p, request, options));
  }
  py::object result =
      ex->result.ok() ? make_selection(ex->result.value(), keep) : make_selection_error(ex->result.error());
  const auto source = request.spec.empty() ? attnsel::override_source::none : request.source;
  return explanation_handle{std::move(*ex), std::move(keep),  q, p, std::string(request.spec),
                            source,         std::move(result)};
}

py::list candidate_list(const std::vector<candidate_report>& cs) {
  py::list out;
  for (const auto& c : cs) out.append(make_candidate(c));
  return out;
}

}  // namespace

py::object make_candidate(const candidate_report& c) { return py::cast(c); }

void bind_selection(py::module_& m) {
  py::class_<attnsel::reason>(m, "Reason", "One failed check: a stable code (REASON_CODES) and a readable message.")
      .def_property_readonly("code", [](const attnsel::reason& r) { return std::string(attnsel::to_string(r.code)); })
      .def_readonly("message", &attnsel::reason::message)
      .def("__repr__",
           [](const attnsel::reason& r) {
             return "Reason(code='" + std::string(attnsel::to_string(r.code)) +
                    "', message=" + std::string(py::repr(py::str(r.message))) + ")";
           })
      .def(
          "__eq__", [](const attnsel::reason& a, const attnsel::reason& b) { return a == b; }, py::is_operator());

  py::class_<candidate_report>(m, "Candidate", "One backend in a trace: its trial rank, verdict and every reason.")
      .def_readonly("name", &candidate_report::name)
      .def_readonly("variant", &candidate_report::variant, "The variant that was checked; '' if none applied.")
      .def_readonly("rank", &candidate_report::rank, "1-based trial order; 0 when not tried.")
      .def_property_readonly(
          "verdict", [](const candidate_report& c) { return std::string(attnsel::to_string(c.outcome)); },
          "selected, supported, rejected or skipped.")
      .def_readonly("forced", &candidate_report::forced, "Named by the override.")
      .def_property_readonly("reasons",
                             [](const candidate_report& c) {
                               py::list out;
                               for (const auto& r : c.reasons) out.append(py::cast(r));
                               return out;
                             })
      .def("__repr__", [](const candidate_report& c) {
        return "Candidate(name=" + std::string(py::repr(py::str(c.name))) + ", verdict='" +
               std::string(attnsel::to_string(c.outcome)) + "', rank=" + std::to_string(c.rank) +
               ", reasons=" + std::to_string(c.reasons.size()) + ")";
      });

  bind_selection_type(m);

  py::class_<explanation_handle>(m, "Explanation",
                                 "What explain() found: the result and every candidate in trial order.")
      .def_readonly("result", &explanation_handle::result, "A Selection, or the SelectionError (not raised).")
      .def_property_readonly("ok", [](const explanation_handle& e) { return e.ex.result.ok(); })
      .def_property_readonly(
          "candidates", [](const explanation_handle& e) { return candidate_list(e.ex.candidates); },
          "Tried backends in trial order, then the skipped ones.")
      .def_property_readonly(
          "rule", [](const explanation_handle& e) { return e.ex.rule; },
          "The policy rule that gave the order ('' if none matched).")
      .def_property_readonly("note", [](const explanation_handle& e) { return e.ex.note; })
      .def("__repr__", [](const explanation_handle& e) {
        const std::string head = e.ex.result.ok()
                                     ? std::string(e.ex.result->name())
                                     : "error " + std::string(attnsel::to_string(e.ex.result.error().code));
        return "<attnsel.Explanation " + head + ", " + std::to_string(e.ex.candidates.size()) + " candidates>";
      });

  registry_type = reinterpret_cast<PyTypeObject*>(py::type::of<registry_handle>().ptr());
  query_type = reinterpret_cast<PyTypeObject*>(py::type::of<attnsel::query>().ptr());
  platform_type = reinterpret_cast<PyTypeObject*>(py::type::of<attnsel::platform>().ptr());
  static PyMethodDef select_def = {
      "select", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&select_fast)),
      METH_FASTCALL | METH_KEYWORDS,
      "select(registry, query, platform, override=None, *, prefer=False, raise_on_error=True)\n--\n\n"
      "Selects a backend. override: None, an override string or an OverrideSet. Raises SelectionError on "
      "failure, or returns it when raise_on_error=False. Runs without the GIL."};
  PyObject* select_fn = PyCFunction_NewEx(&select_def, nullptr, m.attr("__name__").ptr());
  if (!select_fn) throw py::error_already_set();
  m.attr("select") = py::reinterpret_steal<py::object>(select_fn);
  m.def("explain", &explain_py, py::arg("registry"), py::arg("query"), py::arg("platform"),
        py::arg("override") = py::none(), py::kw_only(), py::arg("prefer") = false,
        "Runs the same selection and records every candidate with its verdict and reasons.");
}

}  // namespace attnsel_py

// SPDX-License-Identifier: Apache-2.0
// Selector: the C++ bound selector (registry, platform and override decided once, a decision cache).
#include "bindings.hpp"

#include <attnsel/core/selector.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace attnsel_py {

namespace {

/// A bound selector plus the registry it reads (a snapshot: Registry.merge() swaps its own pointer, never
/// this one) and the override it was built with (explain's report names the string a query read).
/// Every method holds the GIL: a cached answer costs less than releasing and taking it back, and it makes
/// clear_cache() safe against a select() in another thread.
struct selector_handle : bound_value {
  std::shared_ptr<const attnsel::registry> keep;
  std::unique_ptr<attnsel::selector> sel;
  attnsel::platform platform;                    ///< as given (explain's report states it)
  std::string catalog;                           ///< the registry's catalog name, for repr
  std::optional<override_set_handle> overrides;  ///< an OverrideSet, or a str for both domains
  attnsel::select_options options;               ///< prefer, refuse_advisories
  mutable selection_memo memo;                   ///< the Selections select() returned

  [[nodiscard]] attnsel::override_request request_for(const attnsel::query& q) const {
    if (!overrides) return {};
    return overrides->for_query(q);
  }
};

selector_handle make_selector(const py::handle& registry, const py::handle& platform, const py::handle& override,
                              bool prefer, bool refuse_advisories, bool cache, const py::handle& cache_slots) {
  const auto& r = value_arg<registry_handle>("registry", registry);
  const auto& p = value_arg<py_platform>("platform", platform);
  selector_handle h;
  h.keep = r.reg;
  h.platform = p;
  h.catalog = r.info.name;
  h.options.prefer = prefer;
  h.options.refuse_advisories = refuse_advisories;
  attnsel::selector_options options;
  options.select = h.options;
  options.cache = cache;
  options.cache_slots = count_arg("cache_slots", cache_slots, 1, attnsel::selector_options::max_cache_slots);
  if (PyUnicode_Check(override.ptr())) {
    const auto spec = str_arg("override", override);
    h.overrides = override_set_handle{{},           spec,         spec,         attnsel::override_source::api,
                                      std::nullopt, std::nullopt, std::nullopt, spec,
                                      std::nullopt, std::nullopt};
  } else if (py::isinstance<override_set_handle>(override)) {
    h.overrides = value_arg<override_set_handle>("override", override);
  } else if (!override.is_none()) {
    throw py::type_error("override: expected None, a str or an attnsel.OverrideSet, got " + type_name(override));
  }
  const auto set = h.overrides ? h.overrides->view() : attnsel::override_set{};
  h.sel = std::make_unique<attnsel::selector>(*h.keep, h.platform, set, options);
  return h;
}

py::object selector_select(const selector_handle& h, const py::handle& query, bool raise_on_error) {
  const auto& q = value_arg<py_query>("query", query);
  auto result = h.sel->select(q);
  if (result.ok()) return h.memo.get(result.value(), h.keep);
  auto error = make_selection_error(result.error());
  if (raise_on_error) raise_instance(error);
  return error;
}

// Selector.select(query, *, raise_on_error=True) through CPython's vectorcall: a cached answer costs less
// than pybind11's dispatcher.
PyObject* selector_select_fast(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) noexcept {
  return python_entry([&] {
    static const char* const names[] = {"query", "raise_on_error"};
    static const fast_signature sig{"select", names, 2, 1, 1};
    PyObject* a[2] = {};
    fast_arguments(sig, args, nargs, kwnames, a);
    return selector_select(value_arg<selector_handle>("self", self), a[0], truth_arg(a[1], true));
  });
}

std::string selector_repr(const selector_handle& h) {
  std::string out = "<attnsel.Selector catalog=" + py::repr(py::str(h.catalog)).cast<std::string>() +
                    ", platform=" + py::repr(py::cast(py_platform(h.platform))).cast<std::string>();
  if (h.overrides) {
    out += ", override=" + py::repr(py::str(h.overrides->decoder)).cast<std::string>();
    if (h.overrides->encoder != h.overrides->decoder)
      out += "/" + py::repr(py::str(h.overrides->encoder)).cast<std::string>();
  }
  if (h.options.prefer) out += ", prefer=True";
  if (h.options.refuse_advisories) out += ", refuse_advisories=True";
  return out + (h.sel->cache_enabled() ? ">" : ", cache=False>");
}

}  // namespace

void bind_selector(py::module_& m) {
  auto cls =
      py::class_<selector_handle>(
          m, "Selector",
          "A registry, platform and override bound once, with a decision cache: select(query) answers as "
          "attnsel.select(registry, query, platform, override) does, for less. Thread-safe; holds the GIL.")
          .def(py::init([](const py::handle& registry, const py::handle& platform, const py::handle& override,
                           const py::handle& prefer, const py::handle& refuse_advisories, const py::handle& cache,
                           const py::handle& cache_slots) {
                 return make_selector(registry, platform, override, truth_arg(prefer.ptr(), false),
                                      truth_arg(refuse_advisories.ptr(), false), truth_arg(cache.ptr(), true),
                                      cache_slots);
               }),
               py::arg("registry"), py::arg("platform"), py::arg("override") = py::none(), py::kw_only(),
               py::arg("prefer") = false, py::arg("refuse_advisories") = false, py::arg("cache") = true,
               py::arg("cache_slots") = 1024)
          .def("explain", guard([](const selector_handle& h, const py::handle& query) {
                 const auto& q = value_arg<py_query>("query", query);
                 return make_explanation(h.sel->explain(q), h.keep, q, h.platform, h.request_for(q), h.options);
               }),
               py::arg("query"), "The Explanation attnsel.explain gives for this query.")
          .def_property_readonly("platform", guard([](const selector_handle& h) { return py_platform(h.platform); }),
                                 "The platform as given.")
          .def_property_readonly("cache_enabled",
                                 guard([](const selector_handle& h) { return h.sel->cache_enabled(); }))
          .def_property_readonly("stats", guard([](const selector_handle& h) {
                                   const auto s = h.sel->stats();
                                   py::dict out;
                                   out["hits"] = s.hits;
                                   out["misses"] = s.misses;
                                   return out;
                                 }),
                                 "{'hits', 'misses'} of the decision cache (zeros when it is off).")
          .def("clear_cache", guard([](selector_handle& h) { h.sel->clear_cache(); }),
               "Forgets every cached decision and the hit and miss counts (the next select of each query computes "
               "it again).")
          .def("__repr__", guard(&selector_repr));
  static PyMethodDef select_def = {
      "select", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&selector_select_fast)),
      METH_FASTCALL | METH_KEYWORDS,
      "select($self, query, *, raise_on_error=True)\n--\n\n"
      "The Selection attnsel.select gives for this query. Raises SelectionError on failure, or returns it when "
      "raise_on_error=False."};
  add_fast_method(cls, &select_def);
}

}  // namespace attnsel_py

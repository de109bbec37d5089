// SPDX-License-Identifier: Apache-2.0
// attnsel.Registry and the catalog loaders (files, text, the built-in catalogs).
#include "bindings.hpp"

#include <attnsel/catalog/builtin_catalog.hpp>
#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/reference.hpp>

#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <string>
#include <utility>

namespace attnsel_py {

namespace {

registry_handle from_catalog(attnsel::catalog c) {
  return {{}, std::make_shared<const attnsel::registry>(std::move(c.registry)), std::move(c.info)};
}

// A file path from a str or os.PathLike, named `argument` in errors; NUL would cut it short in C.
std::string fspath(std::string_view argument, const py::handle& path) {
  if (!PyUnicode_Check(path.ptr()) && !py::hasattr(path, "__fspath__"))
    throw py::type_error(std::string(argument) + ": expected a str or os.PathLike, got " + type_name(path));
  const py::object text = py::module_::import("os").attr("fspath")(path);
  auto out = PyUnicode_Check(text.ptr()) ? str_arg(argument, text) : text.cast<std::string>();
  if (out.find('\0') != std::string::npos) throw py::value_error(std::string(argument) + ": contains a NUL character");
  return out;
}

// Catalog errors become CatalogError through the module's exception translator (errors.cpp).
registry_handle load_file(const py::handle& path) {
  return from_catalog(attnsel::read_catalog_file(fspath("path", path)));
}

registry_handle parse_text(const py::handle& text, const py::handle& origin) {
  return from_catalog(attnsel::parse_catalog_text(str_arg("text", text), str_arg("origin", origin)));
}

registry_handle builtin(const py::handle& catalog) {
  const auto name = str_arg("name", catalog);
  if (attnsel::builtin_catalog_json(name).empty()) {
    std::string names;
    for (auto n : attnsel::builtin_catalog_names) names += (names.empty() ? "" : ", ") + std::string(n);
    throw py::value_error("catalog: " + quote_input(name) + " is not one of " + names);
  }
  // Parsed once per name: a Registry never changes its registry in place (merge() swaps its own
  // pointer), so every handle may share it. A call then costs a handle, not a parse (1.5 ms for vllm).
  // The map is only touched with the GIL held.
  // An alias (`vllm`) shares its target's handle.
  static std::map<std::string, registry_handle, std::less<>> parsed;
  const auto target = attnsel::builtin_catalog_target(name);
  auto it = parsed.find(target);
  if (it == parsed.end())
    it = parsed.emplace(std::string(target), from_catalog(attnsel::builtin_catalog(target))).first;
  return it->second;
}

// Copy-on-write merge: the new registry replaces the old pointer only when the merge succeeded.
void merge(registry_handle& self, const py::handle& other) {
  auto merged = std::make_shared<attnsel::registry>(*self.reg);
  if (py::isinstance<registry_handle>(other))
    merged->merge(*value_arg<registry_handle>("other", other).reg);
  else
    attnsel::merge_catalog_file(*merged, fspath("other", other));
  self.reg = std::move(merged);
  self.generation = registry_handle::next_registry_generation();  // what a cache keyed on it held is stale
  self.memo.clear();
}

std::string catalog_text(const registry_handle& r) {
  return attnsel::json_text(attnsel::to_json(attnsel::catalog{r.info, *r.reg}));
}

py::list backend_names(const registry_handle& r) {
  py::list out;
  for (const auto& b : r.reg->backends()) out.append(b.name);
  return out;
}

}  // namespace

void bind_registry(py::module_& m) {
  py::class_<registry_handle>(m, "Registry",
                              "Backends and the priority policy that orders them. An ordinary value: build one "
                              "(reference_registry(), load_catalog()) and pass it to select().")
      .def_property_readonly("name", guard([](const registry_handle& r) { return r.info.name; }), "The catalog's name.")
      .def_property_readonly("description", guard([](const registry_handle& r) { return r.info.description; }))
      .def_property_readonly("source", guard([](const registry_handle& r) { return r.info.source; }))
      .def_property_readonly("stock", guard([](const registry_handle& r) {
                               py::dict out;
                               for (const auto& s : r.info.stock) {
                                 py::list names;
                                 for (const auto& c : s.components) names.append(attnsel::to_string(c));
                                 out[py::str(std::string(attnsel::to_string(s.vendor)))] =
                                     py::make_tuple(py::tuple(names), s.because);
                               }
                               return out;
                             }),
                             "What a stock install of the catalog's engine brings, per vendor: {vendor: "
                             "(components, because)}; {} when the catalog states none.")
      .def("with_stock", guard([](const registry_handle& r, const py::handle& platform) {
             auto stocked = attnsel::with_stock(r.info, value_arg<py_platform>("platform", platform));
             return py_platform(std::move(stocked.platform));
           }),
           py::arg("platform"),
           "`platform` with the components of the catalog engine's stock install on its vendor that it lacks by "
           "name (the CLI's default for --platform/--arch); a component it has keeps its version.")
      .def_property_readonly("generation", guard([](const registry_handle& r) { return r.generation; }),
                             "Changes whenever this Registry's contents do (merge); never the same for two "
                             "different registries of one process. A cache key for answers made with it.")
      .def_property_readonly("backends", guard(&backend_names), "Canonical backend names in registration order.")
      .def_property_readonly("names",
                             guard([](const registry_handle& r) { return py::list(py::cast(r.reg->all_names())); }),
                             "Every canonical name and alias, sorted.")
      .def("__len__", guard([](const registry_handle& r) { return r.reg->size(); }))
      .def("__contains__", guard([](const registry_handle& r, const py::handle& name) {
             if (!PyUnicode_Check(name.ptr())) return false;
             Py_ssize_t size = 0;
             const char* data = PyUnicode_AsUTF8AndSize(name.ptr(), &size);
             if (!data) {  // a lone surrogate names no backend
               PyErr_Clear();
               return false;
             }
             return r.reg->find(std::string_view(data, static_cast<std::size_t>(size))) != nullptr;
           }),
           "Case-insensitive, aliases included: 'flash_attn' in reg.")
      .def("merge", guard(&merge), py::arg("other"),
           "Layers a catalog file (str or os.PathLike) or another Registry onto this one: its backends add or "
           "replace ours by name and its rules go in front. On error (CatalogError) nothing changes.")
      .def("copy", guard([](const registry_handle& r) { return r; }),
           "An independent copy (merges into it leave this one alone).")
      .def("__eq__", guard([](const registry_handle& a, const registry_handle& b) {
             return *a.reg == *b.reg && a.info == b.info;
           }),
           py::is_operator())
      .def("__repr__", guard([](const registry_handle& r) {
             return "<attnsel.Registry '" + attnsel::printable(r.info.name, 60) +
                    "': " + std::to_string(r.reg->size()) + " backends, " +
                    std::to_string(r.reg->policy().rules.size()) + " rules>";
           }))
      // Pickled as its catalog document: to_json/parse_catalog round-trip (C++ custom checks cannot
      // come from Python, so nothing is lost).
      .def(py::pickle(guard([](const registry_handle& r) -> py::object { return py::make_tuple(catalog_text(r)); }),
                      [](const py::object& state) {
                        if (!py::isinstance<py::tuple>(state) || py::len(state) != 1)
                          throw py::type_error("Registry.__setstate__: expected a (catalog text,) tuple");
                        return parse_text(py::reinterpret_borrow<py::tuple>(state)[0], py::str("<pickle>"));
                      }));

  m.def(
      "reference_registry", [] { return builtin(py::str("vllm")); },
      "vLLM's backends and priority policies for CUDA, ROCm, CPU and XPU, both domains.");
  m.def(
      "torch_sdpa_registry", [] { return builtin(py::str("torch_sdpa")); },
      "PyTorch scaled_dot_product_attention's backends (FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION, MATH).");
  m.def("builtin_catalog", &builtin, py::arg("name"), "A built-in catalog by name (see BUILTIN_CATALOGS).");
  m.def("load_catalog", &load_file, py::arg("path"),
        "Reads a catalog file; CatalogError (message 'FILE: POINTER: problem') on any bad input.");
  m.def("parse_catalog", &parse_text, py::arg("text"), py::arg("origin") = py::str("<string>"),
        "Parses catalog JSON text; CatalogError on bad input.");
}

}  // namespace attnsel_py

// SPDX-License-Identifier: Apache-2.0
// attnsel.Platform: an immutable value over attnsel::platform (vendor, architecture, components).
#include "bindings.hpp"

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/report.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/limits.hpp>

#include <pybind11/stl.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <vector>

namespace attnsel_py {

void add_components(attnsel::platform& p, std::vector<std::string> specs, std::string_view argument) {
  // Sorted by name, stably (a later spec for a name still replaces an earlier one), so that every insert
  // lands at the end of the platform's sorted list: O(n log n) rather than O(n^2) moves.
  const auto name_of = [](const std::string& spec) { return std::string_view(spec).substr(0, spec.find('=')); };
  std::stable_sort(specs.begin(), specs.end(),
                   [&](const std::string& a, const std::string& b) { return name_of(a) < name_of(b); });
  for (const auto& spec : specs) add_component(p, spec, argument);
}

void add_component(attnsel::platform& p, const std::string& spec, std::string_view argument) {
  // Read as --component and platform_from_json read it (attnsel::add_component_text).
  if (const auto why = attnsel::add_component_text(p, spec); !why.empty())
    throw py::value_error(std::string(argument) + ": " + quote_input(spec) + " " + why);
}

namespace {

using attnsel::device_vendor;
using attnsel::platform;

// Components as an iterable of specs, or a mapping name -> version (str or None).
void add_components(platform& p, const py::handle& components, std::string_view argument = "components") {
  if (components.is_none()) return;
  if (py::isinstance<py::dict>(components)) {
    const auto d = py::reinterpret_borrow<py::dict>(components);
    if (d.size() > attnsel::limits::elements_per_list)
      throw py::value_error(std::string(argument) + ": more than " +
                            std::to_string(attnsel::limits::elements_per_list) + " entries");
    std::vector<std::string> specs;
    for (const auto& item : d) {
      std::string spec = str_arg(argument, item.first);
      if (!item.second.is_none()) spec += "=" + str_arg(argument, item.second);
      specs.push_back(std::move(spec));
    }
    attnsel_py::add_components(p, std::move(specs), argument);
    return;
  }
  attnsel_py::add_components(p, str_list_arg(argument, components), argument);
}

void set_arch(platform& p, const std::string& arch) {
  // The library's parse and wording, as the CLI's --arch: an arch-specific target (sm_100a) is refused.
  if (const auto why = attnsel::set_arch_text(p, arch); !why.empty())
    throw py::value_error("arch: " + quote_input(arch) + " " + why);
}

platform make_platform(const py::handle& vendor, const py::handle& arch, const py::handle& components) {
  platform p(enum_arg<device_vendor>("vendor", vendor));
  if (!arch.is_none()) set_arch(p, str_arg("arch", arch));
  add_components(p, components);
  return p;
}

platform make_cuda(const py::handle& major, const py::handle& minor, const py::handle& components) {
  platform p(device_vendor::cuda);
  if (py::isinstance<py::str>(major)) {
    if (!minor.is_none()) throw py::type_error("Platform.cuda: give either an arch string or major and minor");
    set_arch(p, str_arg("arch", major));
  } else {
    const auto ma = int_arg("major", major);
    const auto mi = minor.is_none() ? 0LL : int_arg("minor", minor);
    if (ma < 1 || ma > 99 || mi < 0 || mi > 9)
      throw py::value_error("capability: " + std::to_string(ma) + "." + std::to_string(mi) +
                            " is not a CUDA compute capability (major 1..99, minor 0..9)");
    p.set_capability({static_cast<std::uint8_t>(ma), static_cast<std::uint8_t>(mi)});
  }
  add_components(p, components);
  return p;
}

py::object arch_of(const platform& p) {
  if (p.capability()) return py::str(attnsel::to_string(*p.capability()));
  if (p.gfx()) return py::str(p.gfx()->name());
  return py::none();
}

std::string spec_of(const attnsel::component& c) { return c.version ? c.name + "=" + to_string(*c.version) : c.name; }

std::vector<std::string> specs_of(const platform& p) {
  std::vector<std::string> out;
  for (const auto& c : p.components()) out.push_back(spec_of(c));
  return out;
}

// The version as equality sees it (parts, trailing zeros dropped: 9.0 == 9.0.0), for __hash__.
py::object canonical_version(const std::optional<attnsel::component_version>& v) {
  if (!v) return py::none();
  std::size_t n = v->parts.size();
  while (n > 1 && v->parts[n - 1] == 0) --n;
  py::tuple out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = py::int_(v->parts[i]);
  return out;
}

py::int_ hash_of(const platform& p) {
  py::list comps;
  for (const auto& c : p.components()) comps.append(py::make_tuple(c.name, canonical_version(c.version)));
  return {py::hash(
      py::make_tuple(std::string(attnsel::to_string(p.vendor())), arch_of(p), py::tuple(comps), p.device_name()))};
}

// The constructor's repr, then `.with_device_name(...)` when a device name is stated: eval(repr(p)) == p.
std::string constructor_repr(const platform& p);

std::string platform_repr(const platform& p) {
  std::string out = constructor_repr(p);
  if (!p.device_name().empty()) out += ".with_device_name(" + std::string(py::repr(py::str(p.device_name()))) + ")";
  return out;
}

std::string constructor_repr(const platform& p) {
  std::string comps;
  for (const auto& spec : specs_of(p)) comps += (comps.empty() ? "" : ", ") + std::string(py::repr(py::str(spec)));
  const std::string tail = comps.empty() ? "" : "components=[" + comps + "]";
  const auto vendor = p.vendor();
  if (vendor == device_vendor::cuda && p.capability())
    return "attnsel.Platform.cuda(" + std::to_string(p.capability()->major) + ", " +
           std::to_string(p.capability()->minor) + (tail.empty() ? "" : ", " + tail) + ")";
  if (vendor == device_vendor::rocm && p.gfx())
    return "attnsel.Platform.rocm('" + p.gfx()->name() + "'" + (tail.empty() ? "" : ", " + tail) + ")";
  if (vendor == device_vendor::cpu || vendor == device_vendor::xpu)
    return "attnsel.Platform." + std::string(attnsel::to_string(vendor)) + "(" + tail + ")";
  return "attnsel.Platform('" + std::string(attnsel::to_string(vendor)) + "'" + (tail.empty() ? "" : ", " + tail) + ")";
}

py::tuple state_of(const platform& p) {
  return py::make_tuple(std::string(attnsel::to_string(p.vendor())), arch_of(p), specs_of(p), p.device_name());
}

// Where each field of the C++ platform's field list lives in Python: the property (and the item of the
// pickle state, __eq__ and __hash__ tuple) that carries it. The capability and the gfx target share
// `arch`, as in JSON.
struct platform_field {
  std::string_view core;
  std::string_view python;
};
constexpr platform_field platform_fields[] = {{"vendor", "vendor"},
                                              {"capability", "arch"},
                                              {"gfx", "arch"},
                                              {"components", "components"},
                                              {"device_name", "device_name"}};

// The table names exactly the fields of attnsel::for_each_field(platform): checked when the module
// loads, so that a field added there and not carried here fails every Python test.
void check_platform_fields_are_the_core_list() {
  std::vector<std::string> core;
  std::vector<std::string> mine;
  attnsel::for_each_field(platform{}, [&core](std::string_view name, const auto&) { core.emplace_back(name); });
  for (const auto& f : platform_fields) mine.emplace_back(f.core);
  if (core != mine)
    throw std::logic_error(
        "attnsel.Platform's field table (python/src/platform.cpp) names other fields than "
        "attnsel::for_each_field(platform): " +
        attnsel::detail::join(mine, ",") + " vs " + attnsel::detail::join(core, ","));
}

}  // namespace

void bind_platform(py::module_& m) {
  check_platform_fields_are_the_core_list();
  using P = py_platform;
  py::class_<P>(m, "Platform",
                "The machine a selection runs on: vendor, architecture and installed components. "
                "Immutable; with_components() returns a new Platform.")
      .def(
          py::init([](const py::handle& vendor, const py::handle& arch, const py::handle& components) -> P {
            return make_platform(vendor, arch, components);
          }),
          py::arg("vendor"), py::arg("arch") = py::none(), py::arg("components") = py::tuple(),
          "Platform('cuda', '9.0', ['cudnn=9.19.0']): vendor cuda, rocm, xpu, cpu or tpu; arch only for cuda and rocm.")
      .def_static(
          "cuda",
          [](const py::handle& major, const py::handle& minor, const py::handle& components) -> P {
            return make_cuda(major, minor, components);
          },
          py::arg("major"), py::arg("minor") = py::none(), py::kw_only(), py::arg("components") = py::tuple(),
          "A CUDA device: Platform.cuda(9, 0) or Platform.cuda('sm_90').")
      .def_static(
          "rocm",
          [](const py::handle& arch, const py::handle& components) -> P {
            return make_platform(py::str("rocm"), py::str(str_arg("arch", arch)), components);
          },
          py::arg("arch"), py::kw_only(), py::arg("components") = py::tuple(),
          "A ROCm device: Platform.rocm('gfx942').")
      .def_static(
          "cpu",
          [](const py::handle& components) -> P { return make_platform(py::str("cpu"), py::none(), components); },
          py::kw_only(), py::arg("components") = py::tuple(), "The host CPU.")
      .def_static(
          "xpu",
          [](const py::handle& components) -> P { return make_platform(py::str("xpu"), py::none(), components); },
          py::kw_only(), py::arg("components") = py::tuple(), "An Intel GPU.")
      .def_static(
          "from_json",
          [](const py::handle& text) -> P {
            return attnsel_py::from_json_arg(text, "platform",
                                             [](const nlohmann::json& j) { return attnsel::platform_from_json(j); });
          },
          py::arg("text"), "Reads the JSON object to_json(platform) writes; no key may repeat.")
      .def_property_readonly("vendor", guard([](const P& p) { return std::string(attnsel::to_string(p.vendor())); }))
      .def_property_readonly("arch", guard([](const P& p) { return arch_of(p); }),
                             "'9.0' on CUDA, 'gfx942' on ROCm, None otherwise.")
      .def_property_readonly("capability", guard([](const P& p) -> py::object {
                               if (!p.capability()) return py::none();
                               return py::make_tuple(p.capability()->major, p.capability()->minor);
                             }))
      .def_property_readonly("components", guard([](const P& p) {
                               py::dict out;
                               for (const auto& c : p.components())
                                 out[py::str(c.name)] =
                                     c.version ? py::object(py::str(to_string(*c.version))) : py::object(py::none());
                               return out;
                             }),
                             "{name: version or None}, sorted by name.")
      .def_property_readonly("device_name", guard([](const P& p) -> py::object {
                               if (p.device_name().empty()) return py::none();
                               return py::str(p.device_name());
                             }),
                             "The device's name as the driver reports it ('NVIDIA H200'), or None. Measured "
                             "policy rules (attnsel.tune) hold only on the device they were measured on.")
      .def("with_device_name", guard([](const P& p, const py::handle& name) -> P {
             platform out = p;
             if (name.is_none()) {
               out.set_device_name({});
             } else {
               auto text = str_arg("name", name);
               if (text.empty()) throw py::value_error("with_device_name: an empty name names no device; pass None");
               out.set_device_name(std::move(text));
             }
             return out;
           }),
           py::arg("name"), "A copy with the device name set (None: no name).")
      .def("has_component",
           guard([](const P& p, const py::handle& name) { return p.has_component(str_arg("name", name)); }),
           py::arg("name"))
      .def("with_components", guard([](const P& p, const py::args& specs) -> P {
             platform out = p;
             add_components(out, specs);
             return out;
           }),
           "A copy with more components ('name' or 'name=version'); a name already present is replaced.")
      .def("__str__", guard([](const P& p) { return attnsel::to_string(static_cast<const platform&>(p)); }))
      .def("__repr__", guard([](const P& p) { return platform_repr(p); }))
      .def("__eq__", guard([](const P& a, const P& b) {
             return static_cast<const platform&>(a) == static_cast<const platform&>(b);
           }),
           py::is_operator())
      .def("__hash__", guard([](const P& p) { return hash_of(p); }))
      .def(py::pickle(guard([](const P& p) -> py::object { return state_of(p); }), [](const py::object& state) -> P {
        // Untrusted input: read by the constructor's own checks.
        if (!py::isinstance<py::tuple>(state) || py::len(state) < 3 || py::len(state) > 4)
          throw py::type_error("Platform.__setstate__: expected a (vendor, arch, components[, device_name]) tuple");
        const auto t = py::reinterpret_borrow<py::tuple>(state);
        platform p = make_platform(t[0], t[1], t[2]);
        if (py::len(state) == 4) p.set_device_name(str_arg("device_name", t[3]));
        return p;
      }));
}

}  // namespace attnsel_py

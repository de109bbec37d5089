// SPDX-License-Identifier: Apache-2.0
// attnsel.Platform: an immutable value over attnsel::platform (vendor, architecture, components).
#include "bindings.hpp"

#include <attnsel/report.hpp>

#include <pybind11/stl.h>

#include <functional>
#include <stdexcept>
#include <vector>

namespace attnsel_py {

void add_component(attnsel::platform& p, const std::string& spec, std::string_view argument) {
  const auto name = spec.substr(0, spec.find('='));
  if (!attnsel::is_valid_feature_name(name))
    throw py::value_error(std::string(argument) + ": " + quote_input(spec) +
                          " needs a lower_snake NAME or NAME=VERSION (e.g. aiter_mha, flashinfer=0.2.5)");
  try {
    p.add_component_spec(spec);
  } catch (const std::invalid_argument&) {
    throw py::value_error(std::string(argument) + ": " + quote_input(spec) +
                          " needs NAME or NAME=VERSION with a dotted numeric version (e.g. flashinfer=0.2.5)");
  }
}

namespace {

using attnsel::device_vendor;
using attnsel::platform;

// Components as an iterable of specs, or a mapping name -> version (str or None).
void add_components(platform& p, const py::handle& components) {
  if (components.is_none()) return;
  if (py::isinstance<py::str>(components))
    throw py::type_error("components: expected a collection of 'name' or 'name=version' strings, got a str");
  if (py::isinstance<py::dict>(components)) {
    for (const auto& item : components.cast<py::dict>()) {
      std::string spec = py::str(item.first);
      if (!item.second.is_none()) spec += "=" + std::string(py::str(item.second));
      add_component(p, spec, "components");
    }
    return;
  }
  for (const auto& item : components) {
    if (!py::isinstance<py::str>(item)) throw py::type_error("components: every entry must be a str");
    add_component(p, item.cast<std::string>(), "components");
  }
}

void set_arch(platform& p, const std::string& arch) {
  if (p.vendor() == device_vendor::cuda) {
    const auto cc = attnsel::parse_cuda_capability(arch);
    if (!cc)
      throw py::value_error("arch: " + quote_input(arch) +
                            " is not a CUDA compute capability (e.g. 9.0, sm_90, sm90, 12.1)");
    p.set_capability(*cc);
  } else if (p.vendor() == device_vendor::rocm) {
    const auto gfx = attnsel::parse_gfx_arch(arch);
    if (!gfx)
      throw py::value_error("arch: " + quote_input(arch) + " is not a gfx target (e.g. gfx942, gfx90a, gfx1100)");
    p.set_gfx(*gfx);
  } else {
    throw py::value_error("arch: " + quote_input(arch) + " does not apply to platform " +
                          std::string(attnsel::to_string(p.vendor())) + "; only cuda and rocm take an arch");
  }
}

platform make_platform(const std::string& vendor, const std::optional<std::string>& arch,
                       const py::handle& components) {
  platform p(parse_arg<device_vendor>("vendor", vendor));
  if (arch) set_arch(p, *arch);
  add_components(p, components);
  return p;
}

platform make_cuda(const py::handle& major, const py::handle& minor, const py::handle& components) {
  platform p(device_vendor::cuda);
  if (py::isinstance<py::str>(major)) {
    if (!minor.is_none()) throw py::type_error("Platform.cuda: give either an arch string or major and minor");
    set_arch(p, major.cast<std::string>());
  } else {
    const auto ma = major.cast<long long>();
    const auto mi = minor.is_none() ? 0LL : minor.cast<long long>();
    if (ma < 1 || ma > 99 || mi < 0 || mi > 9)
      throw py::value_error("capability: " + std::to_string(ma) + "." + std::to_string(mi) +
                            " is not a CUDA compute capability (major 1..99, minor 0..9)");
    p.set_capability({static_cast<std::uint8_t>(ma), static_cast<std::uint8_t>(mi)});
  }
  add_components(p, components);
  return p;
}

py::object arch_of(const platform& p) {
  if (p.capability())
    return py::str(std::to_string(p.capability()->major) + "." + std::to_string(p.capability()->minor));
  if (p.gfx()) return py::str(p.gfx()->name());
  return py::none();
}

std::string spec_of(const attnsel::component& c) { return c.version ? c.name + "=" + to_string(*c.version) : c.name; }

std::vector<std::string> specs_of(const platform& p) {
  std::vector<std::string> out;
  for (const auto& c : p.components()) out.push_back(spec_of(c));
  return out;
}

std::string repr(const platform& p) {
  std::string comps;
  for (const auto& spec : specs_of(p)) comps += (comps.empty() ? "" : ", ") + std::string(py::repr(py::str(spec)));
  const std::string tail = comps.empty() ? "" : "components=[" + comps + "]";
  const auto vendor = p.vendor();
  if (vendor == device_vendor::cuda && p.capability())
    return "Platform.cuda(" + std::to_string(p.capability()->major) + ", " + std::to_string(p.capability()->minor) +
           (tail.empty() ? "" : ", " + tail) + ")";
  if (vendor == device_vendor::rocm && p.gfx())
    return "Platform.rocm('" + p.gfx()->name() + "'" + (tail.empty() ? "" : ", " + tail) + ")";
  if (vendor == device_vendor::cpu || vendor == device_vendor::xpu)
    return "Platform." + std::string(attnsel::to_string(vendor)) + "(" + tail + ")";
  return "Platform('" + std::string(attnsel::to_string(vendor)) + "'" + (tail.empty() ? "" : ", " + tail) + ")";
}

py::tuple state_of(const platform& p) {
  return py::make_tuple(std::string(attnsel::to_string(p.vendor())), arch_of(p), specs_of(p));
}

}  // namespace

void bind_platform(py::module_& m) {
  py::class_<platform>(m, "Platform",
                       "The machine a selection runs on: vendor, architecture and installed components. "
                       "Immutable; with_components() returns a new Platform.")
      .def(
          py::init([](const std::string& vendor, const std::optional<std::string>& arch, const py::object& components) {
            return make_platform(vendor, arch, components);
          }),
          py::arg("vendor"), py::arg("arch") = py::none(), py::arg("components") = py::tuple(),
          "Platform('cuda', '9.0', ['cudnn=9.19.0']): vendor cuda, rocm, xpu, cpu or tpu; arch only for cuda and rocm.")
      .def_static("cuda", &make_cuda, py::arg("major"), py::arg("minor") = py::none(), py::kw_only(),
                  py::arg("components") = py::tuple(), "A CUDA device: Platform.cuda(9, 0) or Platform.cuda('sm_90').")
      .def_static(
          "rocm",
          [](const std::string& arch, const py::object& components) { return make_platform("rocm", arch, components); },
          py::arg("arch"), py::kw_only(), py::arg("components") = py::tuple(),
          "A ROCm device: Platform.rocm('gfx942').")
      .def_static(
          "cpu", [](const py::object& components) { return make_platform("cpu", std::nullopt, components); },
          py::kw_only(), py::arg("components") = py::tuple(), "The host CPU.")
      .def_static(
          "xpu", [](const py::object& components) { return make_platform("xpu", std::nullopt, components); },
          py::kw_only(), py::arg("components") = py::tuple(), "An Intel GPU.")
      .def_static(
          "from_json",
          [](const std::string& text) {
            try {
              return attnsel::platform_from_json(nlohmann::json::parse(text));
            } catch (const nlohmann::json::exception& e) {
              throw py::value_error(std::string("platform: malformed JSON: ") + e.what());
            } catch (const std::invalid_argument& e) {
              throw py::value_error(e.what());
            }
          },
          py::arg("text"), "Reads the JSON object to_json(platform) writes (the CLI's --platform-json shape).")
      .def_property_readonly("vendor", [](const platform& p) { return std::string(attnsel::to_string(p.vendor())); })
      .def_property_readonly("arch", &arch_of, "'9.0' on CUDA, 'gfx942' on ROCm, None otherwise.")
      .def_property_readonly("capability",
                             [](const platform& p) -> py::object {
                               if (!p.capability()) return py::none();
                               return py::make_tuple(p.capability()->major, p.capability()->minor);
                             })
      .def_property_readonly(
          "components",
          [](const platform& p) {
            py::dict out;
            for (const auto& c : p.components())
              out[py::str(c.name)] = c.version ? py::object(py::str(to_string(*c.version))) : py::object(py::none());
            return out;
          },
          "{name: version or None}, sorted by name.")
      .def("has_component", &platform::has_component, py::arg("name"))
      .def(
          "with_components",
          [](const platform& p, const py::args& specs) {
            platform out = p;
            add_components(out, specs);
            return out;
          },
          "A copy with more components ('name' or 'name=version'); a name already present is replaced.")
      .def("__str__", [](const attnsel::platform& p) { return attnsel::to_string(p); })
      .def("__repr__", &repr)
      .def(
          "__eq__", [](const platform& a, const platform& b) { return a == b; }, py::is_operator())
      .def("__hash__",
           [](const platform& p) {
             const py::tuple state = state_of(p);
             return py::hash(py::make_tuple(state[0], state[1], py::tuple(state[2])));
           })
      .def(py::pickle([](const platform& p) { return state_of(p); },
                      [](const py::tuple& t) {
                        if (t.size() != 3) throw std::runtime_error("Platform: bad pickle state");
                        return make_platform(t[0].cast<std::string>(), t[1].cast<std::optional<std::string>>(), t[2]);
                      }));
}

}  // namespace attnsel_py

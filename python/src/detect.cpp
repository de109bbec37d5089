// SPDX-License-Identifier: Apache-2.0
// attnsel._detect: the C++ platform detection (<attnsel/detect.hpp>) for attnsel.detect_platform().
#include "bindings.hpp"

#include <attnsel/detect.hpp>

#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnsel_py {

namespace {

// Every option of detect_options; a None keeps the library's default.
struct detect_arguments {
  unsigned device_index = 0;
  std::optional<std::vector<std::string>> library_dirs;
  std::optional<std::vector<std::string>> extra_components;
  std::optional<std::map<std::string, std::string>> environment;
  std::optional<std::string> sysfs_root;
  std::optional<std::string> proc_root;
  std::optional<std::vector<std::string>> rocm_roots;
  std::optional<std::vector<std::string>> cuda_driver_libraries;
  std::optional<std::vector<std::string>> cudnn_libraries;
  bool cudnn_loader_search = true;
  std::optional<std::string> switch_table;
};

attnsel::detect_options to_options(detect_arguments a) {
  attnsel::detect_options o;
  o.device_index = a.device_index;
  if (a.library_dirs) o.library_dirs = std::move(*a.library_dirs);
  if (a.extra_components) {
    // Each read by the platform's own spec reader, with Platform(components=...)'s checks and wording;
    // one at a time, so order and repeats reach detection as given.
    for (const auto& spec : *a.extra_components) {
      attnsel::platform scratch(attnsel::device_vendor::cpu);
      add_component(scratch, spec, "extra_components");
      o.extra_components.push_back(scratch.components().front());
    }
  }
  o.environment = std::move(a.environment);
  if (a.sysfs_root) o.sysfs_root = std::move(*a.sysfs_root);
  if (a.proc_root) o.proc_root = std::move(*a.proc_root);
  if (a.rocm_roots) o.rocm_roots = std::move(*a.rocm_roots);
  if (a.cuda_driver_libraries) o.cuda_driver_libraries = std::move(*a.cuda_driver_libraries);
  if (a.cudnn_libraries) o.cudnn_libraries = std::move(*a.cudnn_libraries);
  o.cudnn_loader_search = a.cudnn_loader_search;
  if (a.switch_table) o.switch_table = std::move(*a.switch_table);
  return o;
}

}  // namespace

void bind_detect(py::module_& m) {
  m.def(
      "_detect",
      [](detect_arguments a) {
        const auto options = to_options(std::move(a));
        attnsel::detection d;
        {
          // Loading a driver may take a while; nothing here touches Python objects.
          py::gil_scoped_release unlocked;
          d = attnsel::detect_platform(options);
        }
        py::list facts;
        for (const auto& f : d.report.facts) facts.append(py::make_tuple(f.name, f.value, f.source, f.found));
        return py::make_tuple(py::cast(std::move(d.platform)), facts);
      },
      py::arg("options"),
      "detect_platform() without the Python-side probes: (Platform, [(name, value, source, found), ...]).");

  py::class_<detect_arguments>(m, "_DetectOptions", "The options of attnsel.detect_platform() as C++ sees them.")
      .def(py::init<>())
      .def_readwrite("device_index", &detect_arguments::device_index)
      .def_readwrite("library_dirs", &detect_arguments::library_dirs)
      .def_readwrite("extra_components", &detect_arguments::extra_components)
      .def_readwrite("environment", &detect_arguments::environment)
      .def_readwrite("sysfs_root", &detect_arguments::sysfs_root)
      .def_readwrite("proc_root", &detect_arguments::proc_root)
      .def_readwrite("rocm_roots", &detect_arguments::rocm_roots)
      .def_readwrite("cuda_driver_libraries", &detect_arguments::cuda_driver_libraries)
      .def_readwrite("cudnn_libraries", &detect_arguments::cudnn_libraries)
      .def_readwrite("cudnn_loader_search", &detect_arguments::cudnn_loader_search)
      .def_readwrite("switch_table", &detect_arguments::switch_table);
}

}  // namespace attnsel_py

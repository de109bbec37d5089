// SPDX-License-Identifier: Apache-2.0
// attnsel._detect: the C++ platform detection (<attnsel/detect/detect.hpp>) for attnsel.detect_platform().
#include "bindings.hpp"

#include <attnsel/detect/detect.hpp>

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attnsel_py {

namespace {

using attnsel::detect_options;

// A path or file name: a str without NUL (the C library would cut it there).
std::string path_arg(const char* name, py::handle value) {
  auto text = str_arg(name, value);
  if (text.find('\0') != std::string::npos) throw py::value_error(std::string(name) + ": contains a NUL character");
  return text;
}

std::vector<std::string> path_list_arg(const char* name, py::handle value) {
  auto list = str_list_arg(name, value);
  for (const auto& text : list)
    if (text.find('\0') != std::string::npos)
      throw py::value_error(std::string(name) + ": an entry contains a NUL character");
  return list;
}

// Each spec read by the platform's own spec reader, with Platform(components=...)'s checks and wording;
// one at a time, so order and repeats reach detection as given.
void add_extra(detect_options& o, const std::vector<std::string>& specs, const char* name) {
  for (const auto& spec : specs) {
    attnsel::platform scratch(attnsel::device_vendor::cpu);
    add_component(scratch, spec, name);
    o.extra_components.push_back(scratch.components().front());
  }
}

// The one list of detection options Python may set: detect_platform()'s keywords (a test ties its
// signature to _DETECT_OPTIONS). A None keeps the library's default.
struct option {
  const char* name;
  void (*set)(detect_options&, py::handle, const char* name);
};

const option options_table[] = {
    {"device_index",
     [](detect_options& o, py::handle v, const char* n) { o.device_index = count_arg(n, v, 0, 1u << 20); }},
    {"library_dirs", [](detect_options& o, py::handle v, const char* n) { o.library_dirs = path_list_arg(n, v); }},
    {"extra_components", [](detect_options& o, py::handle v, const char* n) { add_extra(o, str_list_arg(n, v), n); }},
    {"environment",
     [](detect_options& o, py::handle v, const char* n) {
       if (!py::isinstance<py::dict>(v) && !py::hasattr(v, "items"))
         throw py::type_error(std::string(n) + ": expected a mapping of str to str, got " + type_name(v));
       std::map<std::string, std::string> env;
       for (const auto& item : v.attr("items")()) {
         const auto pair = py::reinterpret_borrow<py::tuple>(item);
         env[str_arg(n, pair[0])] = str_arg(n, pair[1]);
       }
       o.environment = std::move(env);
     }},
    {"sysfs_root", [](detect_options& o, py::handle v, const char* n) { o.sysfs_root = path_arg(n, v); }},
    {"proc_root", [](detect_options& o, py::handle v, const char* n) { o.proc_root = path_arg(n, v); }},
    {"rocm_roots", [](detect_options& o, py::handle v, const char* n) { o.rocm_roots = path_list_arg(n, v); }},
    {"cuda_driver_libraries",
     [](detect_options& o, py::handle v, const char* n) { o.cuda_driver_libraries = path_list_arg(n, v); }},
    {"cudnn_libraries",
     [](detect_options& o, py::handle v, const char* n) { o.cudnn_libraries = path_list_arg(n, v); }},
    {"cudnn_loader_search",
     [](detect_options& o, py::handle v, const char* n) {
       if (!PyBool_Check(v.ptr())) throw py::type_error(std::string(n) + ": expected a bool, got " + type_name(v));
       o.cudnn_loader_search = v.ptr() == Py_True;
     }},
    {"switch_table", [](detect_options& o, py::handle v, const char* n) { o.switch_table = str_arg(n, v); }},
};

// Detected text may hold any bytes (a file's contents); never a reason to raise.
py::str text_of(const std::string& s) {
  PyObject* text = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace");
  if (!text) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

detect_options to_options(const py::dict& given, const py::handle& packages) {
  std::vector<std::string> known;
  for (const auto& opt : options_table) known.emplace_back(opt.name);
  for (const auto& item : given) {
    const auto key = str_arg("keyword", item.first);
    if (std::find(known.begin(), known.end(), key) == known.end()) unexpected_keyword("detect_platform", key, known);
  }
  detect_options o;
  // The packages Python found come first, named after the argument that chose them.
  add_extra(o, str_list_arg("packages", packages), "packages");
  for (const auto& opt : options_table)
    if (given.contains(opt.name) && !given[opt.name].is_none()) opt.set(o, given[opt.name], opt.name);
  return o;
}

}  // namespace

void bind_detect(py::module_& m) {
  py::tuple names(std::size(options_table));
  for (std::size_t i = 0; i < std::size(options_table); ++i) names[i] = py::str(options_table[i].name);
  m.attr("_DETECT_OPTIONS") = names;
  m.def(
      "_detect",
      [](const py::dict& options, const py::handle& packages) {
        const auto o = to_options(options, packages);
        attnsel::detection d;
        {
          // Loading a driver may take a while; nothing here touches Python objects.
          py::gil_scoped_release unlocked;
          d = attnsel::detect_platform(o);
        }
        py::list facts;
        for (const auto& f : d.report.facts)
          facts.append(py::make_tuple(text_of(f.name), text_of(f.value), text_of(f.source), f.found));
        return py::make_tuple(py::cast(py_platform(std::move(d.platform))), facts);
      },
      py::arg("options"), py::arg("packages"),
      "detect_platform() without the Python-side probes: options is a dict keyed by _DETECT_OPTIONS, packages "
      "the 'name=version' specs of the Python packages found. Returns (Platform, [(name, value, source, found)]).");
}

}  // namespace attnsel_py

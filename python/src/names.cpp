// SPDX-License-Identifier: Apache-2.0
// The vocabularies Python callers type (dtypes, attention types, reason codes ...) read from the enum tables.
#include "bindings.hpp"

#include <attnsel/catalog/reference.hpp>
#include <attnsel/core/limits.hpp>
#include <attnsel/core/override.hpp>
#include <attnsel/core/query.hpp>

namespace attnsel_py {

namespace {

template <class E>
py::tuple names_of() {
  const auto values = attnsel::enum_values<E>();
  py::tuple out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = py::str(std::string(attnsel::to_string(values[i])));
  return out;
}

}  // namespace

std::string quote_input(std::string_view text) { return "'" + attnsel::printable(text, 40) + "'"; }

void require_constructed(const bound_value& v) {
  if (!v.constructed)
    throw py::type_error(
        "this attnsel object was never initialised (made by __new__ without __init__, or by a crafted pickle); "
        "build it with its constructor");
}

std::string class_name(py::handle type) {
  const auto module = py::str(type.attr("__module__")).cast<std::string>();
  const auto name = py::str(type.attr("__qualname__")).cast<std::string>();
  return module == "builtins" ? name : module + "." + name;
}

std::string type_name(py::handle value) { return class_name(py::type::handle_of(value)); }

std::string str_arg(std::string_view name, py::handle value) {
  if (!PyUnicode_Check(value.ptr()))
    throw py::type_error(std::string(name) + ": expected a str, got " + type_name(value));
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (!data) {
    PyErr_Clear();
    throw py::value_error(std::string(name) + ": not valid Unicode text (a lone surrogate?)");
  }
  return {data, static_cast<std::size_t>(size)};
}

long long int_arg(std::string_view name, py::handle value) {
  if (PyBool_Check(value.ptr()) || !PyLong_Check(value.ptr()))
    throw py::type_error(std::string(name) + ": expected an int, got " + type_name(value));
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0)
    throw py::value_error(std::string(name) + ": " + (overflow > 0 ? "a huge value" : "a huge negative value") +
                          " is out of range");
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

std::uint32_t count_arg(std::string_view name, py::handle value, std::uint32_t min, std::uint32_t max) {
  const long long v = int_arg(name, value);
  if (v < static_cast<long long>(min) || v > static_cast<long long>(max))
    throw py::value_error(std::string(name) + ": " + std::to_string(v) + " is outside " + std::to_string(min) + ".." +
                          std::to_string(max));
  return static_cast<std::uint32_t>(v);
}

std::vector<std::string> str_list_arg(std::string_view name, py::handle value) {
  constexpr std::size_t most = attnsel::limits::elements_per_list;
  const auto too_many = [&] {
    return py::value_error(std::string(name) + ": more than " + std::to_string(most) + " entries");
  };
  PyObject* const v = value.ptr();
  if (PyUnicode_Check(v) || PyBytes_Check(v))
    throw py::type_error(std::string(name) + ": expected a collection of str, got a " + type_name(value));
  // CPython's own iteration protocol (a Query's features are read on every Query()): pybind11's iterator
  // and len() wrappers cost about as much as the rest of the constructor.
  const auto* type = Py_TYPE(v);
  const bool sized = (type->tp_as_sequence && type->tp_as_sequence->sq_length) ||
                     (type->tp_as_mapping && type->tp_as_mapping->mp_length);
  std::vector<std::string> out;
  if (sized) {
    const Py_ssize_t size = PyObject_Size(v);
    if (size < 0) throw py::error_already_set();
    if (static_cast<std::size_t>(size) > most) throw too_many();
    out.reserve(static_cast<std::size_t>(size));
  }
  auto iterator = py::reinterpret_steal<py::object>(PyObject_GetIter(v));
  if (!iterator) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();
    PyErr_Clear();
    throw py::type_error(std::string(name) + ": expected a collection of str, got " + type_name(value));
  }
  while (PyObject* next = PyIter_Next(iterator.ptr())) {
    const auto item = py::reinterpret_steal<py::object>(next);
    if (out.size() == most) throw too_many();
    if (!PyUnicode_Check(next))
      throw py::type_error(std::string(name) + ": every entry must be a str, got " + type_name(item));
    out.push_back(str_arg(name, item));
  }
  if (PyErr_Occurred()) throw py::error_already_set();
  return out;
}

void unexpected_keyword(std::string_view callable, std::string_view keyword, const std::vector<std::string>& known) {
  std::string message = std::string(callable) + "() got an unexpected keyword argument " + quote_input(keyword);
  const auto hint = attnsel::closest_name(keyword, known);
  if (!hint.empty()) message += "; did you mean '" + hint + "'?";
  throw py::type_error(message);
}

void bind_names(py::module_& m) {
  m.attr("DOMAINS") = names_of<attnsel::attention_domain>();
  m.attr("VENDORS") = names_of<attnsel::device_vendor>();
  m.attr("DTYPES") = names_of<attnsel::data_type>();
  m.attr("KV_CACHE_DTYPES") = names_of<attnsel::cache_dtype>();
  m.attr("ATTN_TYPES") = names_of<attnsel::attention_type>();
  m.attr("MODES") = names_of<attnsel::attention_mode>();
  m.attr("REASON_CODES") = names_of<attnsel::reason_code>();
  m.attr("ERROR_CODES") = names_of<attnsel::error_code>();
  m.attr("VERDICTS") = names_of<attnsel::verdict>();
  m.attr("OVERRIDE_SOURCES") = names_of<attnsel::override_source>();
  py::tuple features(attnsel::features::known.size());
  for (std::size_t i = 0; i < attnsel::features::known.size(); ++i)
    features[i] = py::str(std::string(attnsel::features::known[i].name));
  m.attr("FEATURES") = features;
  py::tuple catalogs(attnsel::builtin_catalog_names.size());
  for (std::size_t i = 0; i < attnsel::builtin_catalog_names.size(); ++i)
    catalogs[i] = py::str(std::string(attnsel::builtin_catalog_names[i]));
  m.attr("BUILTIN_CATALOGS") = catalogs;
}

}  // namespace attnsel_py

// SPDX-License-Identifier: Apache-2.0
// attnsel.Query: an immutable value over attnsel::query, driven by one table of its fields.
#include "bindings.hpp"

#include <attnsel/catalog/report.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/query.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace attnsel_py {

namespace {

using attnsel::query;

// One row per Query field, built from the C++ field list (attnsel::field_list<query>): its names,
// bounds, meaning of zero and docs. Every Python-facing behaviour reads this table: the constructor's and
// replace()'s keywords (with did-you-mean for a typo), the properties, repr, ==/hash, pickling. A field
// added to attnsel::query's list appears here with no edit (its stub in __init__.pyi aside).
struct field {
  const char* name;
  std::uint32_t max;                                   ///< a count's largest value
  void (*set)(query&, py::handle, const field& self);  ///< checks like the CLI; errors name the field
  py::object (*get)(const query&);                     ///< canonical: equal queries give equal values
  std::string doc;
};

void set_features(query& q, py::handle names, const char* name) {
  auto list = str_list_arg(name, names);
  for (const auto& entry : list)
    if (!attnsel::is_valid_feature_name(entry))
      throw py::value_error(std::string(name) + ": " + quote_input(entry) +
                            " is not a lower_snake feature name (e.g. sinks, alibi)");
  q.required = attnsel::feature_set(std::move(list));  // sorts and de-duplicates once
}

// A field's docstring line: what it is, an enum's choices, and what None means.
template <class T>
std::string doc_of(const attnsel::query_field& f) {
  auto text = std::string(f.doc);
  if constexpr (std::is_enum_v<T>) text += ": " + attnsel::enum_names<T>();
  if (!f.unstated.empty()) text += "; None: " + std::string(f.unstated);
  return text + ".";
}

// The row of one listed member. A count is an int in 1..max, or None (stored as 0) where zero means
// unstated; an enum its catalog string (aliases accepted, read back canonical), or None where its first
// enumerator means unstated; the features a frozenset. head_size_v reads None when it equals head_size:
// Query(head_size=128, head_size_v=128) == Query(), so the two must look and hash alike.
template <auto member>
field row(const attnsel::query_field& f) {
  using T = std::decay_t<decltype(query{}.*member)>;
  field out{f.name.data(), f.max, nullptr, nullptr, doc_of<T>(f)};
  if constexpr (std::is_same_v<T, attnsel::feature_set>) {
    out.set = [](query& q, py::handle v, const field& self) { set_features(q, v, self.name); };
    out.get = [](const query& q) -> py::object {
      py::list names;
      for (const auto& name : q.*member) names.append(name);
      return py::frozenset(names);
    };
  } else if constexpr (std::is_enum_v<T>) {
    if (f.unstated.empty()) {
      out.set = [](query& q, py::handle v, const field& self) { q.*member = enum_arg<T>(self.name, v); };
      out.get = [](const query& q) -> py::object { return py::str(std::string(attnsel::to_string(q.*member))); };
    } else {
      out.set = [](query& q, py::handle v, const field& self) {
        q.*member = v.is_none() ? T{} : enum_arg<T>(self.name, v);
      };
      out.get = [](const query& q) -> py::object {
        return q.*member == T{} ? py::none() : py::object(py::str(std::string(attnsel::to_string(q.*member))));
      };
    }
  } else if (f.unstated.empty()) {
    out.set = [](query& q, py::handle v, const field& self) { q.*member = count_arg(self.name, v, 1, self.max); };
    out.get = [](const query& q) -> py::object { return py::int_(q.*member); };
  } else {
    out.set = [](query& q, py::handle v, const field& self) {
      q.*member = v.is_none() ? 0 : count_arg(self.name, v, 1, self.max);
    };
    if constexpr (member == &query::head_size_v)
      out.get = [](const query& q) -> py::object {
        return q.value_head_size() == q.head_size ? py::none() : py::object(py::int_(q.head_size_v));
      };
    else
      out.get = [](const query& q) -> py::object { return q.*member ? py::object(py::int_(q.*member)) : py::none(); };
  }
  return out;
}

const std::vector<field>& fields() {
  static const std::vector<field> table = [] {
    std::vector<field> out;
    attnsel::field_list<query>::members(
        [&out](const attnsel::query_field& f, auto member) { out.push_back(row<decltype(member)::value>(f)); });
    return out;
  }();
  return table;
}

const std::vector<std::string>& field_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& f : fields()) out.emplace_back(f.name);
    return out;
  }();
  return names;
}

// The most fields the table may hold (checked when the module loads).
constexpr std::size_t max_fields = 32;

// The field names as interned Python strings, in table order: a keyword is matched by identity first
// (CPython interns the keyword names written in code), then by value. Never destroyed: a C++ static's
// destructor runs after the interpreter has finalized, too late to release a Python reference.
const std::vector<py::object>& interned_names() {
  static const auto* const names = [] {
    auto* out = new std::vector<py::object>();
    for (const auto& f : fields()) {
      PyObject* name = PyUnicode_InternFromString(f.name);
      if (name == nullptr) throw py::error_already_set();
      out->push_back(py::reinterpret_steal<py::object>(name));
    }
    return out;
  }();
  return *names;
}

// The arguments a call gave, one slot per field in table order (nullptr: not given).
using field_values = std::array<PyObject*, max_fields>;

// Puts `value` in the slot of keyword `key`; an unknown keyword is a TypeError with did-you-mean.
void take(field_values& given, PyObject* key, PyObject* value, std::string_view callable) {
  const auto& names = interned_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].ptr() == key) {
      given[i] = value;
      return;
    }
  }
  const auto text = str_arg("keyword", key);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (text == fields()[i].name) {
      given[i] = value;
      return;
    }
  }
  unexpected_keyword(callable, text, field_names());
}

// Sets the given fields of `q` in the table's order, so that errors name the first bad field the same
// way whatever order the caller wrote them in.
void set_fields(query& q, const field_values& given) {
  const auto& table = fields();
  for (std::size_t i = 0; i < table.size(); ++i)
    if (given[i] != nullptr) table[i].set(q, given[i], table[i]);
}

// Applies keyword arguments (a dict: replace()'s, a pickle state) to `q`; unknown names are a TypeError.
void apply(query& q, const py::dict& changes, std::string_view callable) {
  field_values given{};
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  Py_ssize_t pos = 0;
  while (PyDict_Next(changes.ptr(), &pos, &key, &value)) take(given, key, value, callable);
  set_fields(q, given);
}

// Query(**fields) through CPython's vectorcall on the class itself (tp_vectorcall, which a Python subclass
// does not inherit): the call an engine makes per layer skips type.__call__ and pybind11's __init__
// dispatcher, 3-4 times the work of reading the fields.
PyObject* query_vectorcall(PyObject*, PyObject* const* args, std::size_t nargsf, PyObject* kwnames) noexcept {
  return python_entry([&] {
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 0)
      throw py::type_error("Query() takes keyword arguments only (" + std::to_string(nargs) + " positional given)");
    field_values given{};
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; ++j) take(given, PyTuple_GET_ITEM(kwnames, j), args[j], "Query");
    query q;
    set_fields(q, given);
    return py::cast(py_query(std::move(q)));
  });
}

// A metaclass like pybind11's own (a subclass of it) whose classes CPython calls through tp_vectorcall.
py::object vectorcall_metaclass(py::handle pybind11_metaclass) {
  py::object meta = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type))(
      "attnsel_vectorcall_type", py::make_tuple(pybind11_metaclass), py::dict(py::arg("__module__") = "attnsel"));
  auto* type = reinterpret_cast<PyTypeObject*>(meta.ptr());
  type->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
  type->tp_vectorcall_offset = offsetof(PyTypeObject, tp_vectorcall);
  return meta;
}

query make_query(const py::args& args, const py::kwargs& kwargs, std::string_view callable) {
  if (!args.empty())
    throw py::type_error(std::string(callable) + "() takes keyword arguments only (" + std::to_string(args.size()) +
                         " positional given)");
  query q;
  apply(q, kwargs, callable);
  return q;
}

// Every field's canonical value, in table order: the hash key and the pickle state.
py::dict state_of(const query& q) {
  py::dict out;
  for (const auto& f : fields()) out[f.name] = f.get(q);
  return out;
}

// attnsel.Query(...) with the fields that differ from the default, so eval(repr(q)) == q after a plain
// `import attnsel`.
std::string query_repr(const query& q) {
  static const query defaults;
  std::string out;
  for (const auto& f : fields()) {
    const py::object value = f.get(q);
    if (value.equal(f.get(defaults))) continue;
    std::string text = py::repr(value);
    if (py::isinstance<py::frozenset>(value)) {  // {'a', 'b'}, sorted, rather than frozenset({...})
      text.clear();
      for (const auto& name : q.required) text += (text.empty() ? "{" : ", ") + std::string(py::repr(py::str(name)));
      text += "}";
    }
    out += (out.empty() ? "" : ", ") + std::string(f.name) + "=" + text;
  }
  return "attnsel.Query(" + out + ")";
}

}  // namespace

void bind_query(py::module_& m) {
  if (fields().size() > max_fields) throw std::logic_error("attnsel.Query: more fields than max_fields");
  std::string doc =
      "What one attention layer needs. Immutable (select() reads it without the GIL); replace() returns a "
      "changed copy. Keyword arguments only, each defaulting to the C++ query's default:";
  for (const auto& f : fields()) doc += std::string("\n  ") + f.name + ": " + f.doc;
  // Platform is bound first: its class's type is pybind11's metaclass.
  py::class_<py_query> cls(m, "Query", doc.c_str(),
                           py::metaclass(vectorcall_metaclass(py::type::handle_of(py::type::of<py_platform>()))));
  cls.def(py::init([](const py::args& args, const py::kwargs& kwargs) -> py_query {
       return make_query(args, kwargs, "Query");
     }))
      .def("replace", guard([](const py_query& q, const py::kwargs& changes) -> py_query {
             query out = q;
             apply(out, changes, "Query.replace");
             return out;
           }),
           "A copy with the given fields changed: q.replace(head_size=64, features={'sinks'}).")
      .def_static(
          "from_json",
          [](const py::handle& text) -> py_query {
            return attnsel_py::from_json_arg(text, "query",
                                             [](const nlohmann::json& j) { return attnsel::query_from_json(j); });
          },
          py::arg("text"), "Reads the JSON object to_json(query) writes; every key optional, none repeated.")
      .def("__str__", guard([](const py_query& q) { return attnsel::to_string(static_cast<const query&>(q)); }))
      .def("__repr__", guard([](const py_query& q) { return query_repr(q); }))
      .def("__eq__", guard([](const py_query& a, const py_query& b) { return a == b; }), py::is_operator())
      .def("__hash__", guard([](const py_query& q) { return py::hash(py::tuple(state_of(q).attr("values")())); }))
      .def(py::pickle(guard([](const py_query& q) -> py::object { return state_of(q); }),
                      [](const py::object& state) -> py_query {
                        // A pickle state is untrusted input: read by the constructor's own checks.
                        if (!py::isinstance<py::dict>(state))
                          throw py::type_error("Query.__setstate__: expected a dict of fields");
                        query q;
                        apply(q, py::reinterpret_borrow<py::dict>(state), "Query.__setstate__");
                        return q;
                      }));
  for (const auto& f : fields()) {
    const auto get = f.get;
    cls.def_property_readonly(f.name, guard([get](const py_query& q) { return get(q); }), f.doc.c_str());
  }
  reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_vectorcall = &query_vectorcall;
}

}  // namespace attnsel_py

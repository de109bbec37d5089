// SPDX-License-Identifier: Apache-2.0
// attnsel.Query: an immutable value over attnsel::query, driven by one table of its fields.
#include "bindings.hpp"

#include <attnsel/impl/text.hpp>
#include <attnsel/query.hpp>
#include <attnsel/report.hpp>

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

// One row per Query field. Every Python-facing behaviour reads this table: the constructor's and
// replace()'s keywords (with did-you-mean for a typo), the properties, repr, ==/hash, pickling. Adding a
// field to attnsel::query is one row here (plus its stub in __init__.pyi and the docs' table).
struct field {
  const char* name;
  void (*set)(query&, py::handle, const char* name);  ///< checks like the CLI; errors name the field
  py::object (*get)(const query&);                    ///< canonical: equal queries give equal values
  const char* doc;
};

// A required count (never None).
template <auto member, std::uint32_t max>
field count(const char* name, const char* doc) {
  return {name, [](query& q, py::handle v, const char* n) { q.*member = count_arg(n, v, 1, max); },
          [](const query& q) -> py::object { return py::int_(q.*member); }, doc};
}

// An optional count: None (stored as 0) or a value in 1..max.
template <auto member, std::uint32_t max>
field optional_count(const char* name, const char* doc) {
  return {name, [](query& q, py::handle v, const char* n) { q.*member = v.is_none() ? 0 : count_arg(n, v, 1, max); },
          [](const query& q) -> py::object { return q.*member ? py::object(py::int_(q.*member)) : py::none(); }, doc};
}

// An enum given as its catalog string (aliases accepted, read back canonical).
template <auto member>
field enumerated(const char* name, const char* doc) {
  using E = std::decay_t<decltype(query{}.*member)>;
  return {name, [](query& q, py::handle v, const char* n) { q.*member = enum_arg<E>(n, v); },
          [](const query& q) -> py::object { return py::str(std::string(attnsel::to_string(q.*member))); }, doc};
}

void set_features(query& q, py::handle names, const char* name) {
  auto list = str_list_arg(name, names);
  for (const auto& entry : list)
    if (!attnsel::is_valid_feature_name(entry))
      throw py::value_error(std::string(name) + ": " + quote_input(entry) +
                            " is not a lower_snake feature name (e.g. sinks, alibi)");
  q.required = attnsel::feature_set(std::move(list));  // sorts and de-duplicates once
}

py::object get_features(const query& q) {
  py::list out;
  for (const auto& f : q.required) out.append(f);
  return py::frozenset(out);
}

// head_size_v reads None when it equals head_size: Query(head_size=128, head_size_v=128) == Query(),
// so the two must look and hash alike.
void set_head_size_v(query& q, py::handle v, const char* name) {
  q.head_size_v = v.is_none() ? 0 : count_arg(name, v, 1, attnsel::max_head_size);
}
py::object get_head_size_v(const query& q) {
  return q.value_head_size() == q.head_size ? py::none() : py::object(py::int_(q.head_size_v));
}

// phase reads None when unstated, as the query JSON writes it; "unstated" is accepted too.
void set_phase(query& q, py::handle v, const char* name) {
  q.phase = v.is_none() ? attnsel::attention_phase::unstated : enum_arg<attnsel::attention_phase>(name, v);
}
py::object get_phase(const query& q) {
  return q.phase == attnsel::attention_phase::unstated ? py::none()
                                                       : py::object(py::str(std::string(attnsel::to_string(q.phase))));
}

const std::vector<field>& fields() {
  static const std::vector<field> table{
      count<&query::head_size, attnsel::max_head_size>("head_size", "Query (and key) head size."),
      {"head_size_v", set_head_size_v, get_head_size_v, "Value head size; None when it equals head_size."},
      enumerated<&query::dtype>("dtype", "float16, bfloat16 or float32 (aliases fp16, bf16 ...)."),
      enumerated<&query::kv_cache_dtype>("kv_cache_dtype", "The KV cache's dtype; auto follows dtype."),
      optional_count<&query::block_size, attnsel::max_block_size>("block_size", "None when not pinned."),
      enumerated<&query::attn_type>("attn_type", "decoder, encoder, encoder_only or encoder_decoder."),
      enumerated<&query::mode>("mode", "standard, mla or sparse_mla."),
      enumerated<&query::domain>("domain", "Model part: decoder, encoder, drafter or linear."),
      optional_count<&query::num_heads, attnsel::max_num_heads>("num_heads", "None when unknown."),
      {"features", set_features, get_features, "Required features, a frozenset of names."},
      optional_count<&query::num_kv_heads, attnsel::max_num_heads>(
          "num_kv_heads", "Key/value heads per rank; None when unstated (must divide num_heads)."),
      {"phase", set_phase, get_phase, "prefill or decode; None when unstated (the layer as a whole)."},
      optional_count<&query::seq_len_q, attnsel::limits::seq_len>("seq_len_q",
                                                                  "Query tokens per sequence; None when unstated."),
      optional_count<&query::seq_len_kv, attnsel::limits::seq_len>(
          "seq_len_kv", "Key/value tokens per sequence, KV cache included; None when unstated."),
      optional_count<&query::batch_size, attnsel::limits::batch_size>("batch_size",
                                                                      "Sequences in the call; None when unstated."),
  };
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
    if (given[i] != nullptr) table[i].set(q, given[i], table[i].name);
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

// The table names exactly the fields of attnsel::for_each_field (the C++ field list): checked when the
// module loads, so that a field added there and not here (or the reverse) fails every Python test.
void check_fields_are_the_core_list() {
  std::vector<std::string> core;
  attnsel::for_each_field(query{}, [&core](std::string_view name, const auto&) { core.emplace_back(name); });
  auto mine = field_names();
  std::sort(core.begin(), core.end());
  std::sort(mine.begin(), mine.end());
  if (mine.size() > max_fields) throw std::logic_error("attnsel.Query: more fields than max_fields");
  if (core != mine)
    throw std::logic_error(
        "attnsel.Query's field table (python/src/query.cpp) names other fields than "
        "attnsel::for_each_field(query): " +
        attnsel::detail::join(mine, ",") + " vs " + attnsel::detail::join(core, ","));
}

}  // namespace

void bind_query(py::module_& m) {
  check_fields_are_the_core_list();
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
            const auto json = str_arg("text", text);
            try {
              return attnsel::query_from_json(attnsel::parse_json_document(json, "query"));
            } catch (const attnsel::catalog_error& e) {
              throw py::value_error(e.what());
            } catch (const std::invalid_argument& e) {
              throw py::value_error(e.what());
            }
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
    cls.def_property_readonly(f.name, guard([get](const py_query& q) { return get(q); }), f.doc);
  }
  reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_vectorcall = &query_vectorcall;
}

}  // namespace attnsel_py

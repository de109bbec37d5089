// SPDX-License-Identifier: Apache-2.0
// attnsel.Query: an immutable value over attnsel::query; enums given as the catalog's strings.
#include "bindings.hpp"

#include <attnsel/report.hpp>

#include <pybind11/stl.h>

#include <optional>
#include <stdexcept>

namespace attnsel_py {

namespace {

using attnsel::query;

// Every field setter checks its value with the CLI's wording (`--head-size` is `head_size` here).
void set_head_size(query& q, long long v) { q.head_size = check_count("head_size", v, 1, attnsel::max_head_size); }
void set_head_size_v(query& q, const std::optional<long long>& v) {
  q.head_size_v = v ? check_count("head_size_v", *v, 1, attnsel::max_head_size) : 0;
}
void set_block_size(query& q, const std::optional<long long>& v) {
  q.block_size = v ? check_count("block_size", *v, 1, attnsel::max_block_size) : 0;
}
void set_num_heads(query& q, const std::optional<long long>& v) {
  q.num_heads = v ? check_count("num_heads", *v, 1, attnsel::max_num_heads) : 0;
}
void set_features(query& q, const py::handle& names) {
  if (py::isinstance<py::str>(names))
    throw py::type_error("features: expected a collection of feature names, got a str");
  attnsel::feature_set set;
  for (const auto& item : names) {
    if (!py::isinstance<py::str>(item)) throw py::type_error("features: every entry must be a str");
    const auto name = item.cast<std::string>();
    if (!attnsel::is_valid_feature_name(name))
      throw py::value_error("features: " + quote_input(name) +
                            " is not a lower_snake feature name (e.g. sinks, alibi)");
    set.insert(name);
  }
  q.required = std::move(set);
}

// Sets one field by its keyword name (Query.replace); TypeError for an unknown name.
void set_field(query& q, const std::string& name, const py::handle& value) {
  if (name == "head_size")
    set_head_size(q, value.cast<long long>());
  else if (name == "head_size_v")
    set_head_size_v(q, value.cast<std::optional<long long>>());
  else if (name == "dtype")
    q.dtype = parse_arg<attnsel::data_type>("dtype", value.cast<std::string>());
  else if (name == "kv_cache_dtype")
    q.kv_cache_dtype = parse_arg<attnsel::cache_dtype>("kv_cache_dtype", value.cast<std::string>());
  else if (name == "block_size")
    set_block_size(q, value.cast<std::optional<long long>>());
  else if (name == "attn_type")
    q.attn_type = parse_arg<attnsel::attention_type>("attn_type", value.cast<std::string>());
  else if (name == "mode")
    q.mode = parse_arg<attnsel::attention_mode>("mode", value.cast<std::string>());
  else if (name == "domain")
    q.domain = parse_arg<attnsel::attention_domain>("domain", value.cast<std::string>());
  else if (name == "num_heads")
    set_num_heads(q, value.cast<std::optional<long long>>());
  else if (name == "features")
    set_features(q, value);
  else
    throw py::type_error("Query.replace() got an unexpected keyword argument '" + name + "'");
}

template <class E>
std::string name_of(E value) {
  return std::string(attnsel::to_string(value));
}

py::object optional_count(std::uint32_t v) { return v ? py::object(py::int_(v)) : py::object(py::none()); }

py::list feature_list(const query& q) {
  py::list out;
  for (const auto& f : q.required) out.append(f);
  return out;
}

// Keyword form, so eval(repr(q)) == q; fields at their default are left out.
std::string repr(const query& q) {
  const query d;
  std::string out = "Query(head_size=" + std::to_string(q.head_size);
  if (q.head_size_v) out += ", head_size_v=" + std::to_string(q.head_size_v);
  out += ", dtype='" + name_of(q.dtype) + "'";
  if (q.kv_cache_dtype != d.kv_cache_dtype) out += ", kv_cache_dtype='" + name_of(q.kv_cache_dtype) + "'";
  if (q.block_size) out += ", block_size=" + std::to_string(q.block_size);
  if (q.attn_type != d.attn_type) out += ", attn_type='" + name_of(q.attn_type) + "'";
  if (q.mode != d.mode) out += ", mode='" + name_of(q.mode) + "'";
  if (q.domain != d.domain) out += ", domain='" + name_of(q.domain) + "'";
  if (q.num_heads) out += ", num_heads=" + std::to_string(q.num_heads);
  if (!q.required.empty()) {
    std::string names;
    for (const auto& f : q.required) names += (names.empty() ? "'" : ", '") + f + "'";
    out += ", features={" + names + "}";
  }
  return out + ")";
}

py::tuple state_of(const query& q) {
  return py::make_tuple(name_of(q.domain), q.head_size, q.head_size_v, name_of(q.dtype), name_of(q.kv_cache_dtype),
                        q.block_size, name_of(q.attn_type), name_of(q.mode), q.num_heads, feature_list(q));
}

}  // namespace

void bind_query(py::module_& m) {
  py::class_<query>(m, "Query",
                    "What one attention layer needs. Immutable (select() reads it without the GIL); "
                    "replace() returns a changed copy.")
      .def(py::init([](long long head_size, std::optional<long long> head_size_v, const std::string& dtype,
                       const std::string& kv_cache_dtype, std::optional<long long> block_size,
                       const std::string& attn_type, const std::string& mode, const std::string& domain,
                       std::optional<long long> num_heads, const py::object& features) {
             query q;
             set_head_size(q, head_size);
             set_head_size_v(q, head_size_v);
             q.dtype = parse_arg<attnsel::data_type>("dtype", dtype);
             q.kv_cache_dtype = parse_arg<attnsel::cache_dtype>("kv_cache_dtype", kv_cache_dtype);
             set_block_size(q, block_size);
             q.attn_type = parse_arg<attnsel::attention_type>("attn_type", attn_type);
             q.mode = parse_arg<attnsel::attention_mode>("mode", mode);
             q.domain = parse_arg<attnsel::attention_domain>("domain", domain);
             set_num_heads(q, num_heads);
             set_features(q, features);
             return q;
           }),
           py::kw_only(), py::arg("head_size") = 128, py::arg("head_size_v") = py::none(),
           py::arg("dtype") = "bfloat16", py::arg("kv_cache_dtype") = "auto", py::arg("block_size") = py::none(),
           py::arg("attn_type") = "decoder", py::arg("mode") = "standard", py::arg("domain") = "decoder",
           py::arg("num_heads") = py::none(), py::arg("features") = py::tuple())
      .def(
          "replace",
          [](const query& q, const py::kwargs& changes) {
            query out = q;
            for (const auto& item : changes) set_field(out, item.first.cast<std::string>(), item.second);
            return out;
          },
          "A copy with the given fields changed: q.replace(head_size=64, features={'sinks'}).")
      .def_static(
          "from_json",
          [](const std::string& text) {
            try {
              return attnsel::query_from_json(nlohmann::json::parse(text));
            } catch (const nlohmann::json::exception& e) {
              throw py::value_error(std::string("query: malformed JSON: ") + e.what());
            } catch (const std::invalid_argument& e) {
              throw py::value_error(e.what());
            }
          },
          py::arg("text"), "Reads the JSON object to_json(query) writes; every key optional.")
      .def_property_readonly("head_size", [](const query& q) { return q.head_size; })
      .def_property_readonly(
          "head_size_v", [](const query& q) { return optional_count(q.head_size_v); },
          "Value head size; None when it equals head_size.")
      .def_property_readonly("dtype", [](const query& q) { return name_of(q.dtype); })
      .def_property_readonly("kv_cache_dtype", [](const query& q) { return name_of(q.kv_cache_dtype); })
      .def_property_readonly(
          "block_size", [](const query& q) { return optional_count(q.block_size); }, "None when not pinned.")
      .def_property_readonly("attn_type", [](const query& q) { return name_of(q.attn_type); })
      .def_property_readonly("mode", [](const query& q) { return name_of(q.mode); })
      .def_property_readonly("domain", [](const query& q) { return name_of(q.domain); })
      .def_property_readonly("num_heads", [](const query& q) { return optional_count(q.num_heads); })
      .def_property_readonly("features", [](const query& q) { return py::frozenset(feature_list(q)); })
      .def("__str__", [](const attnsel::query& q) { return attnsel::to_string(q); })
      .def("__repr__", &repr)
      .def(
          "__eq__", [](const query& a, const query& b) { return a == b; }, py::is_operator())
      .def("__hash__",
           [](const query& q) {
             py::list fields(state_of(q));
             fields[fields.size() - 1] = py::tuple(fields[fields.size() - 1]);  // the feature list
             return py::hash(py::tuple(fields));
           })
      .def(py::pickle([](const query& q) { return state_of(q); },
                      [](const py::tuple& t) {
                        if (t.size() != 10) throw std::runtime_error("Query: bad pickle state");
                        query q;
                        q.domain = parse_arg<attnsel::attention_domain>("domain", t[0].cast<std::string>());
                        q.head_size = t[1].cast<std::uint32_t>();
                        q.head_size_v = t[2].cast<std::uint32_t>();
                        q.dtype = parse_arg<attnsel::data_type>("dtype", t[3].cast<std::string>());
                        q.kv_cache_dtype = parse_arg<attnsel::cache_dtype>("kv_cache_dtype", t[4].cast<std::string>());
                        q.block_size = t[5].cast<std::uint32_t>();
                        q.attn_type = parse_arg<attnsel::attention_type>("attn_type", t[6].cast<std::string>());
                        q.mode = parse_arg<attnsel::attention_mode>("mode", t[7].cast<std::string>());
                        q.num_heads = t[8].cast<std::uint32_t>();
                        set_features(q, t[9]);
                        return q;
                      }));
}

}  // namespace attnsel_py

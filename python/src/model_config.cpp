// SPDX-License-Identifier: Apache-2.0
// ModelConfig, read_model_config and Query.from_model_config: a Hugging Face config.json as a query.
#include "bindings.hpp"

#include <attnsel/model_config.hpp>

#include <pybind11/stl.h>

#include <optional>
#include <string>

namespace attnsel_py {

namespace {

using attnsel::model_config;
using attnsel::model_part;

model_part part_of(const std::string& text) {
  if (const auto p = attnsel::parse_model_part(text)) return *p;
  throw py::value_error("part: " + quote_input(text) + " is not one of text, vision");
}

// A str or os.PathLike is a file; a dict (or any Mapping) is the parsed document, dumped back to JSON
// text so the C++ reader, with its limits and key pointers, reads it the same way.
model_config read_any(const py::object& source, const std::string& part) {
  const auto p = part_of(part);
  const auto os = py::module_::import("os");
  if (py::isinstance<py::str>(source) || py::isinstance(source, os.attr("PathLike"))) {
    const auto path = os.attr("fspath")(source).cast<std::string>();
    return attnsel::read_model_config_file(path, p);
  }
  const auto mapping = py::module_::import("collections.abc").attr("Mapping");
  if (!py::isinstance(source, mapping))
    throw py::type_error("config: expected a path (str or os.PathLike) or a dict, got " +
                         py::str(py::type::of(source).attr("__name__")).cast<std::string>());
  const auto text = py::module_::import("json").attr("dumps")(py::dict(source)).cast<std::string>();
  return attnsel::parse_model_config(text, p, "<dict>");
}

attnsel::query to_query(const model_config& c, const std::optional<attnsel::query>& base, long long tp) {
  const auto ranks = check_count("tp", tp, 1, attnsel::limits::num_heads);
  return c.to_query(base ? *base : attnsel::query{}, ranks);
}

py::object optional_size(std::uint32_t v) { return v == 0 ? py::none() : py::object(py::int_(v)); }

}  // namespace

void bind_model_config(py::module_& m) {
  py::class_<model_config>(m, "ModelConfig",
                           "The attention facts of one part of a model, read from its Hugging Face config.json "
                           "(read_model_config). Immutable.")
      .def_property_readonly("part", [](const model_config& c) { return std::string(attnsel::to_string(c.part)); })
      .def_property_readonly("model_type", [](const model_config& c) { return c.model_type; })
      .def_property_readonly("architecture", [](const model_config& c) { return c.architecture; })
      .def_property_readonly(
          "section", [](const model_config& c) { return c.section; },
          "JSON pointer of the section read: '' (top level), '/text_config' or '/vision_config'.")
      .def_property_readonly("head_size", [](const model_config& c) { return c.head_size; })
      .def_property_readonly("head_size_v", [](const model_config& c) { return c.head_size_v; })
      .def_property_readonly("num_heads", [](const model_config& c) { return c.num_heads; })
      .def_property_readonly("num_kv_heads", [](const model_config& c) { return c.num_kv_heads; })
      .def_property_readonly("mode", [](const model_config& c) { return std::string(attnsel::to_string(c.mode)); })
      .def_property_readonly("kv_lora_rank", [](const model_config& c) { return optional_size(c.kv_lora_rank); })
      .def_property_readonly("qk_rope_head_dim",
                             [](const model_config& c) { return optional_size(c.qk_rope_head_dim); })
      .def_property_readonly("dtype",
                             [](const model_config& c) {
                               return c.dtype ? py::object(py::str(std::string(attnsel::to_string(*c.dtype))))
                                              : py::none();
                             })
      .def_property_readonly("sliding_window", [](const model_config& c) { return optional_size(c.sliding_window); })
      .def_property_readonly(
          "softcap",
          [](const model_config& c) { return c.softcap > 0 ? py::object(py::float_(c.softcap)) : py::none(); })
      .def_property_readonly("sinks", [](const model_config& c) { return c.sinks; })
      .def_property_readonly("features", [](const model_config& c) { return py::tuple(py::cast(c.features())); })
      .def("to_query", &to_query, py::kw_only(), py::arg("base") = py::none(), py::arg("tp") = 1,
           "A Query with this config's facts written into `base` (default Query()); num_heads = heads / tp, "
           "rounded up.")
      .def("__repr__", [](const model_config& c) {
        return "ModelConfig(part='" + std::string(attnsel::to_string(c.part)) + "', architecture='" + c.architecture +
               "', head_size=" + std::to_string(c.head_size) + ", head_size_v=" + std::to_string(c.head_size_v) +
               ", num_heads=" + std::to_string(c.num_heads) + ", num_kv_heads=" + std::to_string(c.num_kv_heads) +
               ", mode='" + std::string(attnsel::to_string(c.mode)) + "')";
      });

  m.def("read_model_config", &read_any, py::arg("config"), py::kw_only(), py::arg("part") = "text",
        "Reads a Hugging Face config.json (a path, or the parsed dict) into a ModelConfig. part: 'text' "
        "(text_config when present, else the top level) or 'vision' (vision_config). ValueError names the key.");

  py::object query_type = m.attr("Query");
  query_type.attr("from_model_config") = py::staticmethod(py::cpp_function(
      [](const py::object& config, const std::string& part, long long tp, const py::kwargs& fields) {
        const auto c = read_any(config, part);
        py::object q = py::cast(to_query(c, std::nullopt, tp));
        // Fields given here win over the config's (a dtype the engine runs in, a kv-cache dtype).
        if (fields.size() > 0) q = q.attr("replace")(**fields);
        return q;
      },
      py::arg("config"), py::kw_only(), py::arg("part") = "text", py::arg("tp") = 1,
      "Query.from_model_config(path_or_dict, *, part='text', tp=1, **fields): a Query from a Hugging Face "
      "config.json (head sizes, heads per rank, MLA, dtype, sliding window, softcap, sinks); `fields` then "
      "replace what they name."));
}

}  // namespace attnsel_py

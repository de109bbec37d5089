// SPDX-License-Identifier: Apache-2.0
// ModelConfig, read_model_config and Query.from_model_config: a Hugging Face config.json as a query.
#include "bindings.hpp"

#include <attnsel/model/model_config.hpp>
#include <attnsel/model/model_plan.hpp>

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

namespace attnsel_py {

namespace {

using attnsel::model_config;
using attnsel::model_part;

model_part part_of(const std::string& text) {
  if (const auto p = attnsel::parse_model_part(text)) return *p;
  throw py::value_error("part: " + quote_input(text) + " is not one of text, vision, audio");
}

// A ModelConfig as a bound value: built only by read_model_config; one made with __new__ alone is refused
// by every method (guard), never read.
struct py_model_config : model_config, bound_value {
  py_model_config() = default;
  py_model_config(model_config c) : model_config(std::move(c)) {}  // NOLINT(google-explicit-constructor)
};

// A str or os.PathLike is a file; a dict (or any Mapping) is the parsed document, dumped back to JSON
// text so the C++ reader, with its limits and key pointers, reads it the same way.
py_model_config read_any(const py::object& source, const std::string& part,
                         attnsel::model_dtype_keys dtype_keys = attnsel::model_dtype_keys::read) {
  const auto p = part_of(part);
  const auto os = py::module_::import("os");
  if (py::isinstance<py::str>(source) || py::isinstance(source, os.attr("PathLike"))) {
    const auto path = os.attr("fspath")(source).cast<std::string>();
    return attnsel::read_model_config_file(path, p, dtype_keys);
  }
  const auto mapping = py::module_::import("collections.abc").attr("Mapping");
  if (!py::isinstance(source, mapping))
    throw py::type_error("config: expected a path (str or os.PathLike) or a dict, got " +
                         py::str(py::type::of(source).attr("__name__")).cast<std::string>());
  const auto text = py::module_::import("json").attr("dumps")(py::dict(source)).cast<std::string>();
  return attnsel::parse_model_config(text, p, "<dict>", dtype_keys);
}

// `base`: None or an attnsel.Query; `tp`: a positive int (checked as every count argument is).
py_query to_query(const py_model_config& c, const py::handle& base, const py::handle& tp) {
  const auto ranks = count_arg("tp", tp, 1, attnsel::limits::num_heads);
  const attnsel::query start =
      base.is_none() ? attnsel::query{} : static_cast<const attnsel::query&>(value_arg<py_query>("base", base));
  return {c.to_query(start, ranks)};
}

py::object optional_size(std::uint32_t v) { return v == 0 ? py::none() : py::object(py::int_(v)); }

py::tuple layer_names(const model_config& c) {
  py::tuple out(c.layers.size());
  for (std::size_t i = 0; i < c.layers.size(); ++i) out[i] = py::str(std::string(attnsel::to_string(c.layers[i])));
  return out;
}

// A phase's answer: the Selection, or the SelectionError (not raised: the plan reports every group).
py::object phase_answer(const registry_handle& r, const attnsel::selection_result& result) {
  if (result.ok()) return r.memo.get(result.value(), r.reg);
  return make_selection_error(result.error());
}

// plan_model(registry, config, platform, *, query=None, override=None, tp=1, prefer=False,
// refuse_advisories=False, per_kind=None, prefix_caching=None): the groups as plain values;
// attnsel.plan_model wraps them in dataclasses.
py::dict plan_model_py(const py::handle& registry, const py::handle& config, const py::handle& platform,
                       const py::handle& query, const py::handle& override, const py::handle& tp, bool prefer,
                       bool refuse_advisories, const py::handle& per_kind, const py::handle& prefix_caching) {
  const auto& r = value_arg<registry_handle>("registry", registry);
  const auto& p = value_arg<py_platform>("platform", platform);
  const py_model_config c = py::isinstance<py_model_config>(config)
                                ? value_arg<py_model_config>("config", config)
                                : read_any(py::reinterpret_borrow<py::object>(config), "text");
  if (c.part != model_part::text) throw py::value_error("config: the plan is of the text part's layers");
  const auto ranks = count_arg("tp", tp, 1, attnsel::limits::num_heads);
  const attnsel::query base =
      query.is_none() ? c.to_query({}, ranks) : static_cast<const attnsel::query&>(value_arg<py_query>("query", query));
  attnsel::override_set overrides;
  std::string spec;  // outlives `overrides`, which views it
  if (py::isinstance<override_set_handle>(override)) {
    overrides = value_arg<override_set_handle>("override", override).view();
  } else if (py::isinstance<py::str>(override)) {
    spec = override.cast<std::string>();
    const attnsel::override_request request{spec, attnsel::override_source::api};
    overrides = attnsel::override_set{request, request, std::nullopt, std::nullopt, std::nullopt, request};
  } else if (!override.is_none()) {
    throw py::type_error("override: expected None, a str or an attnsel.OverrideSet, got " + type_name(override));
  }
  // per_kind: {kind: spec}, each kind a layer kind's name (vLLM's backend_per_kind, in attnsel's kinds).
  std::vector<std::string> kind_specs;  // outlive `kinds`, which view them (reserved: never moved)
  attnsel::model_plan_options plan_options;
  plan_options.tensor_parallel = ranks;
  plan_options.engine = &r.info;  // its model rules and hybrid paging
  if (!prefix_caching.is_none()) {
    if (!py::isinstance<py::bool_>(prefix_caching))
      throw py::type_error("prefix_caching: expected None, True or False, got " + type_name(prefix_caching));
    plan_options.prefix_caching = prefix_caching.cast<bool>();
  }
  auto& kinds = plan_options.per_kind;
  if (!per_kind.is_none()) {
    const auto mapping = py::module_::import("collections.abc").attr("Mapping");
    if (!py::isinstance(per_kind, mapping))
      throw py::type_error("per_kind: expected None or a dict of layer kind -> backend spec, got " +
                           type_name(per_kind));
    const py::dict entries(py::reinterpret_borrow<py::object>(per_kind));
    kind_specs.reserve(entries.size());
    for (const auto& item : entries) {
      if (!py::isinstance<py::str>(item.first) || !py::isinstance<py::str>(item.second))
        throw py::type_error("per_kind: expected str keys and str values, got " + type_name(item.first) + " -> " +
                             type_name(item.second));
      const auto name = item.first.cast<std::string>();
      const auto kind = attnsel::parse_group_kind(name);
      if (!kind)
        throw py::value_error("per_kind: " + quote_input(name) + " is not a kind of layer group (" +
                              attnsel::group_kind_names() + ")");
      kind_specs.push_back(item.second.cast<std::string>());
      kinds.push_back({*kind, {kind_specs.back(), attnsel::override_source::api}});
    }
  }
  attnsel::select_options options;
  options.prefer = prefer;
  options.refuse_advisories = refuse_advisories;
  const auto plan = attnsel::plan_model(*r.reg, c, base, p, overrides, options, plan_options);
  py::list groups;
  for (const auto& g : plan.groups) {
    const bool tower = g.kind == attnsel::layer_kind::encoder;
    py::dict d;
    d["kind"] = std::string(attnsel::to_string(g.kind));
    d["part"] = std::string(attnsel::to_string(g.part));
    d["window"] = optional_size(g.window);
    d["layers"] = g.layers.empty() || (!tower && c.layers.empty()) ? py::object(py::none())
                                                                   : py::object(py::tuple(py::cast(g.layers)));
    d["prefill"] = phase_answer(r, g.plan.prefill);
    d["decode"] = tower ? py::object(py::none()) : phase_answer(r, g.plan.decode);  // a tower has no decode step
    d["prefill_query"] = py::cast(py_query(g.plan.prefill_query));
    d["decode_query"] = tower ? py::object(py::none()) : py::cast(py_query(g.plan.decode_query));
    d["block_size"] = optional_size(g.plan.block_size);
    d["conflict"] = g.plan.conflict.empty() ? py::object(py::none()) : py::object(py::str(g.plan.conflict));
    groups.append(d);
  }
  py::dict out;
  out["groups"] = groups;
  out["block_size"] = optional_size(plan.block_size);
  out["linear_state_bytes"] =
      plan.linear_state_bytes ? py::object(py::int_(plan.linear_state_bytes)) : py::object(py::none());
  out["model_rule"] = plan.model_rule.empty() ? py::object(py::none()) : py::object(py::str(plan.model_rule));
  out["conflicts"] = py::tuple(py::cast(plan.conflicts));
  out["assumptions"] = py::tuple(py::cast(plan.assumptions));
  out["notes"] = py::tuple(py::cast(plan.notes));
  out["ok"] = plan.ok();
  return out;
}

}  // namespace

void bind_model_config(py::module_& m) {
  py::class_<py_model_config>(m, "ModelConfig",
                              "The attention facts of one part of a model, read from its Hugging Face config.json "
                              "(read_model_config). Immutable.")
      .def_property_readonly("part",
                             guard([](const py_model_config& c) { return std::string(attnsel::to_string(c.part)); }))
      .def_property_readonly("model_type", guard([](const py_model_config& c) { return c.model_type; }))
      .def_property_readonly("architecture", guard([](const py_model_config& c) { return c.architecture; }))
      .def_property_readonly(
          "section", guard([](const py_model_config& c) { return c.section; }),
          "JSON pointer of the section read: '' (top level), '/text_config', '/vision_config' or '/audio_config'.")
      .def_property_readonly("head_size", guard([](const py_model_config& c) { return c.head_size; }))
      .def_property_readonly("head_size_v", guard([](const py_model_config& c) { return c.head_size_v; }))
      .def_property_readonly("num_heads", guard([](const py_model_config& c) { return c.num_heads; }))
      .def_property_readonly("num_kv_heads", guard([](const py_model_config& c) { return c.num_kv_heads; }))
      .def_property_readonly("mode",
                             guard([](const py_model_config& c) { return std::string(attnsel::to_string(c.mode)); }))
      .def_property_readonly("kv_lora_rank",
                             guard([](const py_model_config& c) { return optional_size(c.kv_lora_rank); }))
      .def_property_readonly("qk_rope_head_dim",
                             guard([](const py_model_config& c) { return optional_size(c.qk_rope_head_dim); }))
      .def_property_readonly("dtype", guard([](const py_model_config& c) {
                               return c.dtype ? py::object(py::str(std::string(attnsel::to_string(*c.dtype))))
                                              : py::none();
                             }))
      .def_property_readonly("sliding_window",
                             guard([](const py_model_config& c) { return optional_size(c.sliding_window); }))
      .def_property_readonly("softcap", guard([](const py_model_config& c) {
                               return c.softcap > 0 ? py::object(py::float_(c.softcap)) : py::none();
                             }))
      .def_property_readonly("sinks", guard([](const py_model_config& c) { return c.sinks; }))
      .def_property_readonly("layers", guard([](const py_model_config& c) { return layer_names(c); }),
                             "Each layer's kind ('full', 'sliding', 'chunked', 'linear', 'hybrid' (attention and a "
                             "state-space mixer), 'mlp' (neither); a tower's 'encoder'); () when the config does not "
                             "count them")
      .def_property_readonly(
          "linear_mode", guard([](const py_model_config& c) { return std::string(attnsel::to_string(c.linear_mode)); }),
          "The mixer of the linear and hybrid layers: 'gated_delta', 'mamba2', 'mamba1', 'short_conv', 'lightning'")
      .def_property_readonly("cross_attention", guard([](const py_model_config& c) { return c.cross_attention; }),
                             "An encoder-decoder model's text part: each decoder layer also attends to the encoder")
      .def_property_readonly("towers", guard([](const py_model_config& c) {
                               py::tuple out(c.towers.size());
                               for (std::size_t i = 0; i < c.towers.size(); ++i)
                                 out[i] = py::cast(py_model_config(c.towers[i]));
                               return out;
                             }),
                             "The text part's towers (vision, audio) as ModelConfigs; one the reader refused is "
                             "named in assumptions instead")
      .def_property_readonly("chunk_size", guard([](const py_model_config& c) { return optional_size(c.chunk_size); }),
                             "attention_chunk_size of chunked layers (Llama 4), or None")
      .def_property_readonly("global_head_size",
                             guard([](const py_model_config& c) { return optional_size(c.global_head_size); }),
                             "full layers' own head size (Gemma 4 global_head_dim), or None")
      .def_property_readonly("assumptions",
                             guard([](const py_model_config& c) { return py::tuple(py::cast(c.assumptions)); }),
                             "What the reader assumed where config.json is silent (a family's layer rule)")
      .def_property_readonly("features",
                             guard([](const py_model_config& c) { return py::tuple(py::cast(c.features())); }))
      .def("to_query", guard(&to_query), py::kw_only(), py::arg("base") = py::none(), py::arg("tp") = 1,
           "A Query with this config's facts written into `base` (default Query()); num_heads = heads / tp, "
           "rounded up.")
      .def("__repr__", guard([](const py_model_config& c) {
             return "ModelConfig(part='" + std::string(attnsel::to_string(c.part)) + "', architecture='" +
                    c.architecture + "', head_size=" + std::to_string(c.head_size) +
                    ", head_size_v=" + std::to_string(c.head_size_v) + ", num_heads=" + std::to_string(c.num_heads) +
                    ", num_kv_heads=" + std::to_string(c.num_kv_heads) + ", mode='" +
                    std::string(attnsel::to_string(c.mode)) + "')";
           }));

  m.def(
      "read_model_config", [](const py::object& config, const std::string& part) { return read_any(config, part); },
      py::arg("config"), py::kw_only(), py::arg("part") = "text",
      "Reads a Hugging Face config.json (a path, or the parsed dict) into a ModelConfig. part: 'text' "
      "(text_config when present, else the top level), 'vision' (vision_config) or 'audio' (audio_config, "
      "else an encoder-decoder model's encoder). ValueError names the key.");

  py::object query_type = m.attr("Query");
  query_type.attr("from_model_config") = py::staticmethod(py::cpp_function(
      [](const py::object& config, const std::string& part, const py::object& tp, const py::kwargs& fields) {
        // A dtype given here is the one the engine runs in: the config's is then not read at all, so a
        // dtype attnsel does not know there ("float8_e4m3fn") is no error.
        const auto c =
            read_any(config, part,
                     fields.contains("dtype") ? attnsel::model_dtype_keys::ignore : attnsel::model_dtype_keys::read);
        py::object q = py::cast(to_query(c, py::none(), tp));
        // Fields given here win over the config's (a dtype the engine runs in, a kv-cache dtype); the
        // features given add to the config's (sliding_window, softcap, sinks), as --feature does.
        py::dict given;
        for (const auto& item : fields) given[item.first] = item.second;
        if (given.contains("features")) {
          py::list merged(q.attr("features"));
          py::object extra = given["features"];
          if (py::isinstance<py::str>(extra)) extra = py::make_tuple(extra);
          for (const auto& f : extra) merged.append(f);
          given["features"] = merged;
        }
        if (!given.empty()) q = q.attr("replace")(**given);
        return q;
      },
      py::arg("config"), py::kw_only(), py::arg("part") = "text", py::arg("tp") = 1,
      "Query.from_model_config(path_or_dict, *, part='text', tp=1, **fields): a Query from a Hugging Face "
      "config.json (head sizes, heads per rank, MLA, dtype, sliding window, softcap, sinks); `fields` then "
      "replace what they name, but `features`, which add to the config's."));

  m.def("_plan_model", &plan_model_py, py::arg("registry"), py::arg("config"), py::arg("platform"), py::kw_only(),
        py::arg("query") = py::none(), py::arg("override") = py::none(), py::arg("tp") = 1, py::arg("prefer") = false,
        py::arg("refuse_advisories") = false, py::arg("per_kind") = py::none(), py::arg("prefix_caching") = py::none(),
        "The model plan as plain values (attnsel.plan_model wraps them): each group of the text layers with "
        "its prefill and decode answers, then cross-attention and the towers.");
}

}  // namespace attnsel_py

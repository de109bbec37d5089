// SPDX-License-Identifier: Apache-2.0
// attnsel.OverrideSet: one override per domain (and per decoder phase); select() applies the query's entry.
#include "bindings.hpp"

namespace attnsel_py {

namespace {

std::string override_set_repr(const override_set_handle& o) {
  std::string out = "attnsel.OverrideSet(decoder=" + std::string(py::repr(py::str(o.decoder))) +
                    ", encoder=" + std::string(py::repr(py::str(o.encoder)));
  if (o.prefill) out += ", prefill=" + std::string(py::repr(py::str(*o.prefill)));
  if (o.decode) out += ", decode=" + std::string(py::repr(py::str(*o.decode)));
  if (o.drafter) out += ", drafter=" + std::string(py::repr(py::str(*o.drafter)));
  if (!o.linear.empty()) out += ", linear=" + std::string(py::repr(py::str(o.linear)));
  if (o.linear_prefill) out += ", linear_prefill=" + std::string(py::repr(py::str(*o.linear_prefill)));
  if (o.linear_decode) out += ", linear_decode=" + std::string(py::repr(py::str(*o.linear_decode)));
  if (o.source != attnsel::override_source::api) out += ", source='" + std::string(attnsel::to_string(o.source)) + "'";
  return out + ")";
}

std::optional<std::string> optional_str(const char* name, const py::handle& v) {
  if (v.is_none()) return std::nullopt;
  return str_arg(name, v);
}

py::object optional_value(const std::optional<std::string>& v) { return v ? py::object(py::str(*v)) : py::none(); }

override_set_handle make_override_set(const py::handle& decoder, const py::handle& encoder, const py::handle& source,
                                      const py::handle& prefill, const py::handle& decode, const py::handle& drafter,
                                      const py::handle& linear, const py::handle& linear_prefill,
                                      const py::handle& linear_decode) {
  override_set_handle out{{},
                          str_arg("decoder", decoder),
                          str_arg("encoder", encoder),
                          enum_arg<attnsel::override_source>("source", source),
                          optional_str("prefill", prefill),
                          optional_str("decode", decode),
                          optional_str("drafter", drafter),
                          str_arg("linear", linear),
                          optional_str("linear_prefill", linear_prefill),
                          optional_str("linear_decode", linear_decode)};
  return out;
}

// The constructor's arguments as a tuple (pickling, hashing). Without per-phase linear entries it is
// the seven the previous release wrote and reads.
py::tuple state_of(const override_set_handle& o) {
  auto source = std::string(attnsel::to_string(o.source));
  if (!o.linear_prefill && !o.linear_decode)
    return py::make_tuple(o.decoder, o.encoder, source, optional_value(o.prefill), optional_value(o.decode),
                          optional_value(o.drafter), o.linear);
  return py::make_tuple(o.decoder, o.encoder, source, optional_value(o.prefill), optional_value(o.decode),
                        optional_value(o.drafter), o.linear, optional_value(o.linear_prefill),
                        optional_value(o.linear_decode));
}

}  // namespace

void bind_overrides(py::module_& m) {
  py::class_<override_set_handle>(
      m, "OverrideSet",
      "Override strings per domain (grammar: '', 'auto', 'NAME', 'A,B', 'A,auto', '-NAME'). A decoder "
      "override never changes an encoder or linear selection. prefill / decode (None: inherit decoder) "
      "override decoder queries in that phase; drafter (None: the decoder's, by phase) the speculative "
      "drafter; linear the linear-attention and state-space layers, and linear_prefill / linear_decode "
      "(None: inherit linear) those layers in one phase. Immutable.")
      .def(py::init(&make_override_set), py::kw_only(), py::arg("decoder") = "", py::arg("encoder") = "",
           py::arg("source") = "api", py::arg("prefill") = py::none(), py::arg("decode") = py::none(),
           py::arg("drafter") = py::none(), py::arg("linear") = "", py::arg("linear_prefill") = py::none(),
           py::arg("linear_decode") = py::none())
      .def_property_readonly("prefill", guard([](const override_set_handle& o) { return optional_value(o.prefill); }))
      .def_property_readonly("decode", guard([](const override_set_handle& o) { return optional_value(o.decode); }))
      .def_property_readonly("drafter", guard([](const override_set_handle& o) { return optional_value(o.drafter); }))
      .def_property_readonly("linear", guard([](const override_set_handle& o) { return o.linear; }))
      .def_property_readonly("linear_prefill",
                             guard([](const override_set_handle& o) { return optional_value(o.linear_prefill); }))
      .def_property_readonly("linear_decode",
                             guard([](const override_set_handle& o) { return optional_value(o.linear_decode); }))
      .def_property_readonly("decoder", guard([](const override_set_handle& o) { return o.decoder; }))
      .def_property_readonly("encoder", guard([](const override_set_handle& o) { return o.encoder; }))
      .def_property_readonly(
          "source", guard([](const override_set_handle& o) { return std::string(attnsel::to_string(o.source)); }))
      .def("for_domain", guard([](const override_set_handle& o, const py::handle& domain) {
             const auto set = o.view();
             return std::string(set.for_domain(enum_arg<attnsel::attention_domain>("domain", domain)).spec);
           }),
           py::arg("domain"), "The override string the given domain reads.")
      .def("__repr__", guard(&override_set_repr))
      .def("__eq__", guard([](const override_set_handle& a, const override_set_handle& b) {
             return a.decoder == b.decoder && a.encoder == b.encoder && a.source == b.source &&
                    a.prefill == b.prefill && a.decode == b.decode && a.drafter == b.drafter && a.linear == b.linear &&
                    a.linear_prefill == b.linear_prefill && a.linear_decode == b.linear_decode;
           }),
           py::is_operator())
      .def("__hash__", guard([](const override_set_handle& o) { return py::hash(state_of(o)); }))
      .def(py::pickle(
          guard([](const override_set_handle& o) -> py::object { return state_of(o); }), [](const py::object& state) {
            // Untrusted input: read by the constructor's own checks.
            // 0.3 wrote the first five, later releases the first seven.
            const auto n = py::isinstance<py::tuple>(state) ? py::len(state) : 0;
            if (n != 5 && n != 7 && n != 9)
              throw py::type_error(
                  "OverrideSet.__setstate__: expected a (decoder, encoder, source, prefill, decode, "
                  "drafter, linear, linear_prefill, linear_decode) tuple");
            const auto t = py::reinterpret_borrow<py::tuple>(state);
            const auto at = [&](std::size_t i, const py::object& absent) { return i < n ? py::object(t[i]) : absent; };
            return make_override_set(t[0], t[1], t[2], t[3], t[4], at(5, py::none()), at(6, py::str("")),
                                     at(7, py::none()), at(8, py::none()));
          }));
}

}  // namespace attnsel_py

// SPDX-License-Identifier: Apache-2.0
// attnsel.OverrideSet: the decoder and the encoder override; select() applies the query's domain's entry.
#include "bindings.hpp"

#include <stdexcept>

namespace attnsel_py {

namespace {

std::string repr(const override_set_handle& o) {
  std::string out = "OverrideSet(decoder=" + std::string(py::repr(py::str(o.decoder))) +
                    ", encoder=" + std::string(py::repr(py::str(o.encoder)));
  if (o.source != attnsel::override_source::api) out += ", source='" + std::string(attnsel::to_string(o.source)) + "'";
  return out + ")";
}

}  // namespace

void bind_overrides(py::module_& m) {
  py::class_<override_set_handle>(
      m, "OverrideSet",
      "Decoder and encoder override strings (grammar: '', 'auto', 'NAME', 'A,B', 'A,auto', '-NAME'). "
      "A decoder override never changes an encoder selection. Immutable.")
      .def(py::init([](std::string decoder, std::string encoder, const std::string& source) {
             return override_set_handle{std::move(decoder), std::move(encoder),
                                        parse_arg<attnsel::override_source>("source", source)};
           }),
           py::kw_only(), py::arg("decoder") = "", py::arg("encoder") = "", py::arg("source") = "api")
      .def_property_readonly("decoder", [](const override_set_handle& o) { return o.decoder; })
      .def_property_readonly("encoder", [](const override_set_handle& o) { return o.encoder; })
      .def_property_readonly("source",
                             [](const override_set_handle& o) { return std::string(attnsel::to_string(o.source)); })
      .def(
          "for_domain",
          [](const override_set_handle& o, const std::string& domain) {
            return parse_arg<attnsel::attention_domain>("domain", domain) == attnsel::attention_domain::encoder
                       ? o.encoder
                       : o.decoder;
          },
          py::arg("domain"), "The override string the given domain reads.")
      .def("__repr__", &repr)
      .def(
          "__eq__",
          [](const override_set_handle& a, const override_set_handle& b) {
            return a.decoder == b.decoder && a.encoder == b.encoder && a.source == b.source;
          },
          py::is_operator())
      .def("__hash__",
           [](const override_set_handle& o) {
             return py::hash(py::make_tuple(o.decoder, o.encoder, std::string(attnsel::to_string(o.source))));
           })
      .def(py::pickle(
          [](const override_set_handle& o) {
            return py::make_tuple(o.decoder, o.encoder, std::string(attnsel::to_string(o.source)));
          },
          [](const py::tuple& t) {
            if (t.size() != 3) throw std::runtime_error("OverrideSet: bad pickle state");
            return override_set_handle{t[0].cast<std::string>(), t[1].cast<std::string>(),
                                       parse_arg<attnsel::override_source>("source", t[2].cast<std::string>())};
          }));
}

}  // namespace attnsel_py

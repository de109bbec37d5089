// SPDX-License-Identifier: Apache-2.0
// select() and explain() with their result types: Selection, Candidate, Reason, Explanation.
#include "bindings.hpp"

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/report.hpp>

#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnsel_py {

namespace {

using attnsel::candidate_report;

// The request `q`'s domain reads from `ovr` (None, str or OverrideSet). The views point into the
// argument object, which the caller keeps alive (and which is immutable) for the whole call.
attnsel::override_request request_for(const py::handle& ovr, const attnsel::query& q) {
  if (ovr.is_none()) return {};
  if (PyUnicode_Check(ovr.ptr())) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(ovr.ptr(), &size);
    if (!data) {
      PyErr_Clear();
      throw py::value_error("override: not valid Unicode text (a lone surrogate?)");
    }
    return {std::string_view(data, static_cast<std::size_t>(size)), attnsel::override_source::api};
  }
  if (py::isinstance<override_set_handle>(ovr)) {
    return value_arg<override_set_handle>("override", ovr).for_query(q);
  }
  throw py::type_error("override: expected None, a str or an attnsel.OverrideSet, got " + type_name(ovr));
}

// Reacquires the GIL on every way out of the selector, exceptions included (CPython's own API:
// cheaper than py::gil_scoped_release, which also keeps pybind11's thread-state bookkeeping).
struct without_gil {
  PyThreadState* state = PyEval_SaveThread();
  without_gil() = default;
  without_gil(const without_gil&) = delete;
  without_gil& operator=(const without_gil&) = delete;
  ~without_gil() { PyEval_RestoreThread(state); }
};

py::object select_checked(const registry_handle& r, const attnsel::query& q, const attnsel::platform& p,
                          py::handle override, const attnsel::select_options& options, bool raise_on_error) {
  const auto request = request_for(override, q);
  auto keep = r.reg;  // taken under the GIL: a concurrent merge() swaps r.reg, never this registry
  std::optional<attnsel::selection_result> result;
  {
    // Query, Platform and OverrideSet are immutable from Python and `keep` holds the registry:
    // nothing in this block touches a Python object.
    without_gil nogil;
    result.emplace(attnsel::select(*keep, q, p, request, options));
  }
  if (result->ok()) return r.memo.get(result->value(), keep);
  auto error = make_selection_error(result->error());
  if (raise_on_error) raise_instance(error);
  return error;
}

// select(registry, query, platform, override=None, *, prefer=False, raise_on_error=True,
// refuse_advisories=False) through CPython's vectorcall: select is the call an engine makes per layer.
PyObject* select_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) noexcept {
  return python_entry([&] {
    static const char* const names[] = {"registry", "query",          "platform",         "override",
                                        "prefer",   "raise_on_error", "refuse_advisories"};
    static const fast_signature sig{"select", names, 7, 4, 3};
    PyObject* a[7] = {};
    fast_arguments(sig, args, nargs, kwnames, a);
    attnsel::select_options options;
    options.prefer = truth_arg(a[4], false);
    options.refuse_advisories = truth_arg(a[6], false);
    return select_checked(value_arg<registry_handle>("registry", a[0]), value_arg<py_query>("query", a[1]),
                          value_arg<py_platform>("platform", a[2]), a[3] ? a[3] : Py_None, options,
                          truth_arg(a[5], true));
  });
}

explanation_handle make_explanation_handle(attnsel::explanation ex, std::shared_ptr<const attnsel::registry> keep,
                                           const attnsel::query& q, const attnsel::platform& p,
                                           attnsel::override_request request, const attnsel::select_options& options) {
  py::object result =
      ex.result.ok() ? make_selection(ex.result.value(), keep) : make_selection_error(ex.result.error());
  const auto source = request.spec.empty() ? attnsel::override_source::none : request.source;
  return explanation_handle{{},     std::move(ex), std::move(keep),  q, p, std::string(request.spec),
                            source, options,       std::move(result)};
}

explanation_handle explain_py(py::handle registry, py::handle query, py::handle platform, py::handle override,
                              bool prefer, bool refuse_advisories) {
  const auto& r = value_arg<registry_handle>("registry", registry);
  const auto& q = value_arg<py_query>("query", query);
  const auto& p = value_arg<py_platform>("platform", platform);
  const auto request = request_for(override, q);
  auto keep = r.reg;
  attnsel::select_options options;
  options.prefer = prefer;
  options.refuse_advisories = refuse_advisories;
  std::optional<attnsel::explanation> ex;
  {
    without_gil nogil;
    ex.emplace(attnsel::explain(*keep, q, p, request, options));
  }
  return make_explanation_handle(std::move(*ex), std::move(keep), q, p, request, options);
}

py::list candidate_list(const std::vector<candidate_report>& cs) {
  py::list out;
  for (const auto& c : cs) out.append(py::cast(py_candidate(c)));
  return out;
}

bool same(const candidate_report& a, const candidate_report& b) {
  return a.name == b.name && a.variant == b.variant && a.rank == b.rank && a.outcome == b.outcome &&
         a.forced == b.forced && a.reasons == b.reasons && a.measured == b.measured && a.warnings == b.warnings;
}

bool same(const std::vector<candidate_report>& a, const std::vector<candidate_report>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i])) return false;
  return true;
}

std::string text_repr(std::string_view s) { return py::repr(py::str(std::string(s))); }

// ---- Reason and Candidate: plain values with keyword constructors that check like the rest ----------

attnsel::reason make_reason(py::handle code, py::handle message) {
  return {enum_arg<attnsel::reason_code>("code", code), str_arg("message", message)};
}

std::string reason_repr(const attnsel::reason& r) {
  return "attnsel.Reason(code='" + std::string(attnsel::to_string(r.code)) + "', message=" + text_repr(r.message) + ")";
}

// A list argument of Reason values (`reasons`, `warnings`), bounded like every list.
std::vector<attnsel::reason> reason_list_arg(const char* what, py::handle items) {
  if (PyUnicode_Check(items.ptr()) || !py::isinstance<py::iterable>(items))
    throw py::type_error(std::string(what) + ": expected a list of attnsel.Reason, got " + type_name(items));
  std::vector<attnsel::reason> out;
  for (const auto& r : items) {
    if (out.size() == attnsel::limits::elements_per_list)
      throw py::value_error(std::string(what) + ": more than " + std::to_string(attnsel::limits::elements_per_list) +
                            " entries");
    out.push_back(value_arg<py_reason>(what, r));
  }
  return out;
}

candidate_report make_candidate(py::handle name, py::handle variant, py::handle rank, py::handle verdict,
                                py::handle forced, py::handle reasons, py::handle warnings) {
  candidate_report c;
  c.name = str_arg("name", name);
  c.variant = str_arg("variant", variant);
  c.rank = count_arg("rank", rank, 0, 0xffffffffU);
  c.outcome = enum_arg<attnsel::verdict>("verdict", verdict);
  if (!PyBool_Check(forced.ptr())) throw py::type_error("forced: expected a bool, got " + type_name(forced));
  c.forced = forced.ptr() == Py_True;
  c.reasons = reason_list_arg("reasons", reasons);
  c.warnings = reason_list_arg("warnings", warnings);
  return c;
}

std::string candidate_repr(const candidate_report& c) {
  const auto listed = [](const std::vector<attnsel::reason>& rs) {
    std::string out;
    for (const auto& r : rs) out += (out.empty() ? "" : ", ") + reason_repr(r);
    return "[" + out + "]";
  };
  return "attnsel.Candidate(name=" + text_repr(c.name) + ", variant=" + text_repr(c.variant) +
         ", rank=" + std::to_string(c.rank) + ", verdict='" + std::string(attnsel::to_string(c.outcome)) +
         "', forced=" + (c.forced ? "True" : "False") + ", reasons=" + listed(c.reasons) +
         (c.warnings.empty() ? "" : ", warnings=" + listed(c.warnings)) + ")";
}

py::dict candidate_state(const candidate_report& c) {
  py::list reasons;
  for (const auto& r : c.reasons) reasons.append(py::cast(py_reason(r)));
  py::list warnings;
  for (const auto& r : c.warnings) warnings.append(py::cast(py_reason(r)));
  py::dict out;
  out["name"] = c.name;
  out["variant"] = c.variant;
  out["rank"] = c.rank;
  out["verdict"] = std::string(attnsel::to_string(c.outcome));
  out["forced"] = c.forced;
  out["reasons"] = reasons;
  out["warnings"] = warnings;
  if (c.measured) out["measured"] = py::make_tuple(c.measured->median_us, c.measured->spread_pct);
  return out;
}

// A list of dicts, one per item, each filled by `fill(item, dict)`.
template <class T, class Fill>
py::list dicts(const std::vector<T>& items, Fill&& fill) {
  py::list out;
  for (const auto& item : items) {
    py::dict d;
    fill(item, d);
    out.append(d);
  }
  return out;
}

// ---- Selection ---------------------------------------------------------------------------------------

bool same(const selection_handle& a, const selection_handle& b) {
  const auto& x = a.sel;
  const auto& y = b.sel;
  return x.name() == y.name() && x.variant_name() == y.variant_name() && x.rank == y.rank &&
         x.overridden == y.overridden && x.source == y.source && x.fell_back == y.fell_back &&
         same(x.fallback, y.fallback) && (x.warning ? x.warning->id : "") == (y.warning ? y.warning->id : "");
}

std::string selection_repr(const selection_handle& h) {
  const auto& s = h.sel;
  std::string out = "<attnsel.Selection backend=" + text_repr(s.name()) + ", variant=" + text_repr(s.variant_name()) +
                    ", rank=" + std::to_string(s.rank) + ", overridden=" + (s.overridden ? "True" : "False");
  if (s.fell_back) out += ", fell_back=True";
  return out + ">";
}

// Pickled with the chosen backend as a one-backend catalog (so block_size_for still reads its
// capabilities), the variant by index (-1: the backend's own capabilities), and the plain fields.
py::tuple selection_state(const selection_handle& h) {
  const auto& s = h.sel;
  attnsel::registry one;
  one.add(*s.backend);
  long long variant = -1;
  for (std::size_t i = 0; i < s.backend->variants.size(); ++i)
    if (&s.backend->variants[i] == s.variant) variant = static_cast<long long>(i);
  attnsel::catalog_info info;
  info.name = "pickled_selection";
  const auto text = attnsel::json_text(attnsel::to_json(attnsel::catalog{info, one}), -1);
  return py::make_tuple(text, variant, s.rank, s.overridden, std::string(attnsel::to_string(s.source)), s.fell_back,
                        candidate_list(s.fallback), s.warning ? s.warning->id : std::string());
}

selection_handle selection_from_state(const py::handle& state) {
  // 0.3 wrote 7 items (no advisory).
  if (!py::isinstance<py::tuple>(state) || (py::len(state) != 7 && py::len(state) != 8))
    throw py::type_error("Selection.__setstate__: expected the 8-tuple __getstate__ writes");
  const auto t = py::reinterpret_borrow<py::tuple>(state);
  auto reg = std::make_shared<attnsel::registry>(
      attnsel::parse_catalog_text(str_arg("Selection state", t[0]), "<pickle>").registry);
  if (reg->backends().size() != 1)
    throw py::value_error("Selection.__setstate__: the catalog must hold exactly the chosen backend");
  const auto& backend = reg->backends().front();
  const long long variant = int_arg("variant", t[1]);
  if (variant < -1 || variant >= static_cast<long long>(backend.variants.size()))
    throw py::value_error("variant: " + std::to_string(variant) + " is not a variant of " + backend.name);
  // select checks a backend with variants through one of them (resolve_variant), never its own caps.
  if (variant == -1 && !backend.variants.empty())
    throw py::value_error("variant: -1 (the backend's own capabilities) names no variant, and " + backend.name +
                          " has " + std::to_string(backend.variants.size()) + "; select always picks one of them");
  attnsel::selection s;
  s.backend = &backend;
  s.variant = variant < 0 ? &backend.caps : &backend.variants[static_cast<std::size_t>(variant)];
  s.rank = count_arg("rank", t[2], 1, 0xffffffffU);
  if (!PyBool_Check(t[3].ptr()) || !PyBool_Check(t[5].ptr()))
    throw py::type_error("Selection.__setstate__: overridden and fell_back must be bools");
  s.overridden = t[3].ptr() == Py_True;
  s.source = enum_arg<attnsel::override_source>("source", t[4]);
  s.fell_back = t[5].ptr() == Py_True;
  if (!py::isinstance<py::list>(t[6])) throw py::type_error("fallback: expected a list of attnsel.Candidate");
  for (const auto& c : t[6]) s.fallback.push_back(value_arg<py_candidate>("fallback", c));
  // Only states select returns: a forced backend was forced by someone; prefer mode falls back only
  // from an override, to an automatic choice, and always records why each forced backend failed.
  if (s.overridden && s.source == attnsel::override_source::none)
    throw py::value_error("Selection.__setstate__: overridden, but the override's source is none");
  if (s.fell_back && (s.overridden || s.source == attnsel::override_source::none || s.fallback.empty()))
    throw py::value_error(
        "Selection.__setstate__: fell_back needs an automatic choice (not overridden), an "
        "override source other than none, and the rejected forced backends in fallback");
  if (!s.fell_back && !s.fallback.empty())
    throw py::value_error("Selection.__setstate__: fallback candidates without fell_back");
  if (py::len(t) == 8) {
    const auto id = str_arg("advisory", t[7]);
    if (!id.empty()) {
      const auto it = std::find_if(backend.advisories.begin(), backend.advisories.end(),
                                   [&](const attnsel::advisory& a) { return a.id == id; });
      if (it == backend.advisories.end())
        throw py::value_error("advisory: " + backend.name + " has no advisory '" + id + "'");
      s.warning = &*it;
    }
  }
  return {{}, std::move(s), std::move(reg)};
}

// ---- Explanation -------------------------------------------------------------------------------------

std::string report(const explanation_handle& e) {
  const attnsel::override_request request{e.override_spec, e.source};
  return attnsel::json_text(attnsel::to_json(e.ex, e.q, e.p, request), -1);
}

// Pickled as what produced it: explain() is a pure function of registry, query, platform, override
// and prefer, so unpickling runs it again (the registry as its catalog document, as Registry pickles).
py::tuple explanation_state(const explanation_handle& e) {
  attnsel::catalog_info info;
  info.name = "pickled_explanation";
  const auto text = attnsel::json_text(attnsel::to_json(attnsel::catalog{info, *e.keep}), -1);
  return py::make_tuple(text, py::cast(py_query(e.q)), py::cast(py_platform(e.p)), e.override_spec,
                        std::string(attnsel::to_string(e.source)), e.options.prefer, e.options.refuse_advisories);
}

explanation_handle explanation_from_state(const py::handle& state) {
  // 0.3 wrote 6 items (no refuse_advisories).
  if (!py::isinstance<py::tuple>(state) || (py::len(state) != 6 && py::len(state) != 7))
    throw py::type_error("Explanation.__setstate__: expected the 7-tuple __getstate__ writes");
  const auto t = py::reinterpret_borrow<py::tuple>(state);
  auto c = attnsel::parse_catalog_text(str_arg("Explanation state", t[0]), "<pickle>");
  const py::object reg = py::cast(
      registry_handle{{}, std::make_shared<const attnsel::registry>(std::move(c.registry)), std::move(c.info)});
  const auto source = enum_arg<attnsel::override_source>("source", t[4]);
  py::object ovr = py::none();
  const auto spec = str_arg("override", t[3]);
  if (source != attnsel::override_source::none)
    ovr = py::cast(override_set_handle{
        {}, spec, spec, source, std::nullopt, std::nullopt, std::nullopt, spec, std::nullopt, std::nullopt});
  if (!PyBool_Check(t[5].ptr())) throw py::type_error("prefer: expected a bool, got " + type_name(t[5]));
  const bool refuse = py::len(t) == 7 && t[6].ptr() == Py_True;
  if (py::len(t) == 7 && !PyBool_Check(t[6].ptr()))
    throw py::type_error("refuse_advisories: expected a bool, got " + type_name(t[6]));
  return explain_py(reg, py::object(t[1]), py::object(t[2]), ovr, t[5].ptr() == Py_True, refuse);
}

}  // namespace

py::object make_selection(attnsel::selection sel, std::shared_ptr<const attnsel::registry> keep) {
  return py::cast(selection_handle{{}, std::move(sel), std::move(keep)});
}

py::object selection_memo::get(const attnsel::selection& sel, const std::shared_ptr<const attnsel::registry>& keep) {
  if (!sel.fallback.empty()) return make_selection(sel, keep);
  const auto flags = static_cast<std::uint32_t>(sel.overridden) | (static_cast<std::uint32_t>(sel.source) << 1) |
                     (static_cast<std::uint32_t>(sel.fell_back) << 9);
  const auto word = [](const void* p) { return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(p)); };
  const std::size_t hash = (word(sel.backend) >> 4) ^ (word(sel.variant) >> 3) ^ (sel.rank * 0x9E3779B1U) ^ flags;
  auto& e = entries_[hash % slots];
  if (e.object && e.reg == keep.get() && e.backend == sel.backend && e.variant == sel.variant &&
      e.warning == sel.warning && e.rank == sel.rank && e.flags == flags)
    return e.object;
  py::object made = make_selection(sel, keep);
  e = entry{keep.get(), sel.backend, sel.variant, sel.warning, sel.rank, flags, made};
  return made;
}

void selection_memo::clear() noexcept {
  for (auto& e : entries_) e = entry{};
}

py::object make_explanation(attnsel::explanation ex, std::shared_ptr<const attnsel::registry> keep,
                            const attnsel::query& q, const attnsel::platform& p, attnsel::override_request request,
                            const attnsel::select_options& options) {
  return py::cast(make_explanation_handle(std::move(ex), std::move(keep), q, p, request, options));
}

void bind_selection(py::module_& m) {
  py::class_<py_reason>(m, "Reason", "One failed check: a stable code (REASON_CODES) and a readable message.")
      .def(py::init([](const py::handle& code, const py::handle& message) -> py_reason {
             return make_reason(code, message);
           }),
           py::kw_only(), py::arg("code"), py::arg("message"))
      .def_property_readonly("code", guard([](const py_reason& r) { return std::string(attnsel::to_string(r.code)); }))
      .def_property_readonly("message", guard([](const py_reason& r) { return r.message; }))
      .def("__repr__", guard([](const py_reason& r) { return reason_repr(r); }))
      .def("__eq__", guard([](const py_reason& a, const py_reason& b) { return a == b; }), py::is_operator())
      .def("__hash__", guard([](const py_reason& r) {
             return py::hash(py::make_tuple(std::string(attnsel::to_string(r.code)), r.message));
           }))
      .def(py::pickle(guard([](const py_reason& r) -> py::object {
                        return py::make_tuple(std::string(attnsel::to_string(r.code)), r.message);
                      }),
                      [](const py::object& state) -> py_reason {
                        if (!py::isinstance<py::tuple>(state) || py::len(state) != 2)
                          throw py::type_error("Reason.__setstate__: expected a (code, message) tuple");
                        return make_reason(state[py::int_(0)], state[py::int_(1)]);
                      }));

  py::class_<py_candidate>(m, "Candidate", "One backend in a trace: its trial rank, verdict and every reason.")
      .def(py::init([](const py::handle& name, const py::handle& variant, const py::handle& rank,
                       const py::handle& verdict, const py::handle& forced, const py::handle& reasons,
                       const py::handle& warnings) -> py_candidate {
             return make_candidate(name, variant, rank, verdict, forced, reasons, warnings);
           }),
           py::kw_only(), py::arg("name"), py::arg("variant") = "", py::arg("rank") = 0, py::arg("verdict") = "skipped",
           py::arg("forced") = false, py::arg("reasons") = py::list(), py::arg("warnings") = py::list())
      .def_property_readonly("name", guard([](const py_candidate& c) { return c.name; }))
      .def_property_readonly("variant", guard([](const py_candidate& c) { return c.variant; }),
                             "The variant that was checked; '' if none applied.")
      .def_property_readonly("rank", guard([](const py_candidate& c) { return c.rank; }),
                             "1-based trial order; 0 when not tried.")
      .def_property_readonly("verdict",
                             guard([](const py_candidate& c) { return std::string(attnsel::to_string(c.outcome)); }),
                             "selected, supported, rejected or skipped.")
      .def_property_readonly("forced", guard([](const py_candidate& c) { return c.forced; }), "Named by the override.")
      .def_property_readonly("reasons", guard([](const py_candidate& c) {
                               py::list out;
                               for (const auto& r : c.reasons) out.append(py::cast(py_reason(r)));
                               return out;
                             }))
      .def_property_readonly("warnings", guard([](const py_candidate& c) {
                               py::list out;
                               for (const auto& r : c.warnings) out.append(py::cast(py_reason(r)));
                               return out;
                             }),
                             "The warn advisories that hold for this call (code 'advisory'): the backend still "
                             "runs. Filled by explain for a backend that passed its checks.")
      .def_property_readonly("measured", guard([](const py_candidate& c) -> py::object {
                               if (!c.measured) return py::none();
                               py::dict out;
                               out["median_us"] = c.measured->median_us;
                               out["spread_pct"] = c.measured->spread_pct;
                               return out;
                             }),
                             "{'median_us', 'spread_pct'} when a measured policy rule (attnsel.tune) gave the "
                             "order, else None.")
      .def("__repr__", guard([](const py_candidate& c) { return candidate_repr(c); }))
      .def("__eq__", guard([](const py_candidate& a, const py_candidate& b) { return same(a, b); }), py::is_operator())
      .def("__hash__", guard([](const py_candidate& c) {
             return py::hash(py::make_tuple(c.name, c.variant, c.rank, std::string(attnsel::to_string(c.outcome)),
                                            c.forced, c.reasons.size(), c.warnings.size()));
           }))
      .def(py::pickle(
          guard([](const py_candidate& c) -> py::object { return candidate_state(c); }),
          [](const py::object& state) -> py_candidate {
            if (!py::isinstance<py::dict>(state))
              throw py::type_error("Candidate.__setstate__: expected a dict of fields");
            const auto d = py::reinterpret_borrow<py::dict>(state);
            for (const char* key : {"name", "variant", "rank", "verdict", "forced", "reasons"})
              if (!d.contains(key)) throw py::value_error(std::string("Candidate.__setstate__: missing ") + key);
            // A state pickled before warnings existed has none.
            auto c = make_candidate(d["name"], d["variant"], d["rank"], d["verdict"], d["forced"], d["reasons"],
                                    d.contains("warnings") ? py::object(d["warnings"]) : py::object(py::list()));
            if (d.contains("measured")) {
              const auto t = py::reinterpret_borrow<py::object>(d["measured"]);
              if (!py::isinstance<py::tuple>(t) || py::len(t) != 2)
                throw py::type_error("Candidate.__setstate__: measured is a (median_us, spread_pct) tuple");
              c.measured = attnsel::measured_time{c.name, t[py::int_(0)].cast<double>(), t[py::int_(1)].cast<double>()};
            }
            return c;
          }));

  py::class_<selection_handle>(m, "Selection", "A successful selection (from attnsel.select).")
      .def_property_readonly("backend", guard([](const selection_handle& s) { return std::string(s.sel.name()); }),
                             "The chosen backend's canonical name.")
      .def_property_readonly("variant",
                             guard([](const selection_handle& s) { return std::string(s.sel.variant_name()); }),
                             "The variant whose capabilities were checked ('' for none).")
      .def_property_readonly(
          "domains", guard([](const selection_handle& s) {
            // The checked variant's domains, else (a variant of every domain) the backend's.
            const auto& own = s.sel.variant != nullptr && !s.sel.variant->domains.empty() ? s.sel.variant->domains
                                                                                          : s.sel.backend->domains;
            py::list out;
            own.for_each([&](attnsel::attention_domain d) { out.append(py::str(std::string(attnsel::to_string(d)))); });
            return py::tuple(out);
          }),
          "The domains the chosen variant serves ('decoder', 'encoder', 'drafter', 'linear'): "
          "an engine adapter routes a selection made for the multimodal encoder to its own flag.")
      .def_property_readonly("rank", guard([](const selection_handle& s) { return s.sel.rank; }),
                             "1-based trial position of the winner.")
      .def_property_readonly("overridden", guard([](const selection_handle& s) { return s.sel.overridden; }),
                             "Chosen because the override named it.")
      .def_property_readonly(
          "source", guard([](const selection_handle& s) { return std::string(attnsel::to_string(s.sel.source)); }),
          "Where the override came from: none, api, flag, env or config.")
      .def_property_readonly("fell_back", guard([](const selection_handle& s) { return s.sel.fell_back; }),
                             "prefer=True: every forced backend failed; automatic choice used.")
      .def_property_readonly("fallback",
                             guard([](const selection_handle& s) { return candidate_list(s.sel.fallback); }),
                             "prefer=True: why each forced backend was rejected (list of Candidate).")
      .def_property_readonly("advisory", guard([](const selection_handle& s) -> py::object {
                               const auto* a = s.sel.warning;
                               if (a == nullptr) return py::none();
                               py::dict d;
                               d["id"] = a->id;
                               d["action"] = std::string(attnsel::to_string(a->action));
                               d["message"] = a->message;
                               py::list upstream;
                               for (const auto& u : a->upstream) upstream.append(py::str(u));
                               d["upstream"] = upstream;
                               return {std::move(d)};
                             }),
                             "The chosen backend's warning advisory that holds for the call (a known-bad "
                             "combination the engine runs anyway): a dict of id, action, message, upstream; None "
                             "when none holds.")
      .def("block_size_for", guard([](const selection_handle& s, py::handle current) {
             return s.sel.block_size_for(count_arg("current", current, 0, 0xffffffffU));
           }),
           py::arg("current"), py::pos_only(),
           "vLLM's block-size negotiation: current if the kernel accepts it, else its preferred size, else its "
           "smallest supported multiple.")
      .def("__repr__", guard(&selection_repr))
      .def("__str__", guard([](const selection_handle& s) { return std::string(s.sel.name()); }))
      .def("__eq__", guard([](const selection_handle& a, const selection_handle& b) { return same(a, b); }),
           py::is_operator())
      .def("__hash__", guard([](const selection_handle& h) {
             const auto& s = h.sel;
             return py::hash(py::make_tuple(std::string(s.name()), std::string(s.variant_name()), s.rank, s.overridden,
                                            std::string(attnsel::to_string(s.source)), s.fell_back));
           }))
      .def(py::pickle(guard([](const selection_handle& s) -> py::object { return selection_state(s); }),
                      [](const py::object& state) { return selection_from_state(state); }));

  py::class_<explanation_handle>(m, "Explanation",
                                 "What explain() found: the result and every candidate in trial order.")
      .def_property_readonly("result", guard([](const explanation_handle& e) { return e.result; }),
                             "A Selection, or the SelectionError (not raised).")
      .def_property_readonly("ok", guard([](const explanation_handle& e) { return e.ex.result.ok(); }))
      .def_property_readonly(
          "candidates", guard([](const explanation_handle& e) { return candidate_list(e.ex.candidates); }),
          "The backends serving the query's domain on this platform: tried ones in trial order, then the "
          "skipped ones.")
      .def_property_readonly("rule", guard([](const explanation_handle& e) { return e.ex.rule; }),
                             "The policy rule that gave the order ('' if none matched).")
      .def_property_readonly("note", guard([](const explanation_handle& e) { return e.ex.note; }))
      .def_property_readonly("unstated", guard([](const explanation_handle& e) {
                               return dicts(e.ex.unstated, [](const attnsel::unstated_dependency& u, py::dict& d) {
                                 d["subject"] = u.subject;
                                 d["fields"] = u.fields;
                                 d["condition"] = u.condition;
                               });
                             }),
                             "What the answer depends on that the query left unstated: dicts of subject, fields, "
                             "condition.")
      .def_property_readonly("stale", guard([](const explanation_handle& e) {
                               return dicts(e.ex.stale, [](const attnsel::stale_measurement& st, py::dict& d) {
                                 d["rule"] = st.rule;
                                 d["measured_on"] = st.measured_on;
                                 py::list differs;
                                 for (const auto& text : st.differences) differs.append(py::str(text));
                                 d["differences"] = differs;
                               });
                             }),
                             "Measured rules set aside because they were measured on another device or with other "
                             "component versions: dicts of rule, measured_on, differences.")
      .def("__repr__", guard([](const explanation_handle& e) {
             const std::string head = e.ex.result.ok()
                                          ? std::string(e.ex.result->name())
                                          : "error " + std::string(attnsel::to_string(e.ex.result.error().code));
             return "<attnsel.Explanation " + head + ", " + std::to_string(e.ex.candidates.size()) + " candidates>";
           }))
      // Equal when they report the same (the JSON report is every field a caller can read).
      .def("__eq__",
           guard([](const explanation_handle& a, const explanation_handle& b) { return report(a) == report(b); }),
           py::is_operator())
      .def("__hash__", guard([](const explanation_handle& e) { return py::hash(py::str(report(e))); }))
      .def(py::pickle(guard([](const explanation_handle& e) -> py::object { return explanation_state(e); }),
                      [](const py::object& state) { return explanation_from_state(state); }));

  static PyMethodDef select_def = {
      "select", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&select_fast)),
      METH_FASTCALL | METH_KEYWORDS,
      "select(registry, query, platform, override=None, *, prefer=False, raise_on_error=True, "
      "refuse_advisories=False)\n--\n\n"
      "Selects a backend. override: None, an override string or an OverrideSet. Raises SelectionError on "
      "failure, or returns it when raise_on_error=False. refuse_advisories=True refuses a backend that a "
      "warning advisory holds for. Runs without the GIL."};
  PyObject* select_fn = PyCFunction_NewEx(&select_def, nullptr, m.attr("__name__").ptr());
  if (!select_fn) throw py::error_already_set();
  m.attr("select") = py::reinterpret_steal<py::object>(select_fn);
  m.def("explain", &explain_py, py::arg("registry"), py::arg("query"), py::arg("platform"),
        py::arg("override") = py::none(), py::kw_only(), py::arg("prefer") = false,
        py::arg("refuse_advisories") = false,
        "Runs the same selection and records every candidate with its verdict and reasons.");
}

}  // namespace attnsel_py

// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the Python bindings: the wrapped handle types, argument checks, one bind_* per topic.
#pragma once

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/override.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>
#include <attnsel/core/registry.hpp>
#include <attnsel/core/select.hpp>

#include <pybind11/pybind11.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace attnsel_py {

namespace py = pybind11;

// ---- objects whose __init__ never ran -----------------------------------------------------------------

/// Base of every C++ type bound to Python. An object made without its constructor (`cls.__new__(cls)`, a
/// crafted pickle) has no C++ value: pybind11 allocates the storage with the class's own operator new on
/// first use and constructs nothing in it. This operator new zero-fills, so `constructed` reads false
/// there and true in every object a constructor built; guard() and value_arg() check it before any use.
struct bound_value {
  bool constructed = true;

  static void* operator new(std::size_t size) { return std::memset(::operator new(size), 0, size); }
  static void operator delete(void* p) noexcept { ::operator delete(p); }
};

/// TypeError unless `v` was built by a constructor.
void require_constructed(const bound_value& v);

namespace guard_detail {
template <class T>
void check(const T& v) {
  if constexpr (std::is_base_of_v<bound_value, std::decay_t<T>>) require_constructed(v);
}
template <class R, class... A>
auto wrap_pointer(R (*f)(A...)) {
  return [f](A... a) -> R {
    (check(a), ...);
    return f(std::forward<A>(a)...);
  };
}
template <class F, class R, class C, class... A>
auto wrap(F f, R (C::*)(A...) const) {
  return [f = std::move(f)](A... a) -> R {
    (check(a), ...);
    return f(std::forward<A>(a)...);
  };
}
}  // namespace guard_detail

/// `f` (a lambda or function pointer), first checking that each bound-object argument was constructed.
/// Every method and property of a bound class goes through it.
template <class F>
auto guard(F f) {
  if constexpr (std::is_pointer_v<F>) {
    return guard_detail::wrap_pointer(f);
  } else {
    return guard_detail::wrap(std::move(f), &F::operator());
  }
}

/// The library's values as bound classes (the same value, plus the constructed mark).
struct py_query : attnsel::query, bound_value {
  py_query() = default;
  py_query(attnsel::query q) : attnsel::query(std::move(q)) {}  // NOLINT(google-explicit-constructor)
};
struct py_platform : attnsel::platform, bound_value {
  py_platform() = default;
  py_platform(attnsel::platform p) : attnsel::platform(std::move(p)) {}  // NOLINT(google-explicit-constructor)
};
struct py_reason : attnsel::reason, bound_value {
  py_reason() = default;
  py_reason(attnsel::reason r) : attnsel::reason(std::move(r)) {}  // NOLINT(google-explicit-constructor)
};
struct py_candidate : attnsel::candidate_report, bound_value {
  py_candidate() = default;
  py_candidate(attnsel::candidate_report c)  // NOLINT(google-explicit-constructor)
      : attnsel::candidate_report(std::move(c)) {}
};

/// The Selection objects a registry's answers have produced, by content: a Selection is immutable, so an
/// answer equal to an earlier one returns that object instead of building another (a new pybind11
/// instance, its registration and its destruction cost about 2,300 instructions: docs/performance.md,
/// "Python bindings"). A direct-mapped table of `slots` entries: bounded memory, one probe; a collision
/// replaces the older entry. Selections carrying a prefer-mode fallback list are never kept. Used under
/// the GIL only. A copy starts empty: each Python object has its own, and a copy kept in a C++ static (the
/// built-in registries) holds no Python reference past the interpreter's end.
class selection_memo {
 public:
  static constexpr std::size_t slots = 64;
  selection_memo() = default;
  selection_memo(const selection_memo&) noexcept {}
  selection_memo& operator=(const selection_memo&) noexcept {
    clear();
    return *this;
  }
  ~selection_memo() = default;
  /// The Selection for `sel` from `keep`'s registry: the kept object when an equal one was built.
  py::object get(const attnsel::selection& sel, const std::shared_ptr<const attnsel::registry>& keep);
  void clear() noexcept;

 private:
  struct entry {
    const attnsel::registry* reg = nullptr;
    const attnsel::backend_descriptor* backend = nullptr;
    const attnsel::capabilities* variant = nullptr;
    const attnsel::advisory* warning = nullptr;
    std::size_t rank = 0;
    std::uint32_t flags = 0;  ///< overridden, source, fell_back (the selection's other fields)
    py::object object;
  };
  std::array<entry, slots> entries_{};
};

/// A registry as Python sees it. The registry itself is never changed in place: `merge` builds a new
/// one and swaps the pointer (under the GIL), so a selection running without the GIL, or a Selection
/// pointing into the old registry, keeps a valid one.
struct registry_handle : bound_value {
  std::shared_ptr<const attnsel::registry> reg;
  attnsel::catalog_info info;
  /// Names the registry `reg` points to, for caches keyed on a Registry (attnsel.torch.select_sdpa):
  /// a new value for every registry built or merged in this process, never reused, shared by copies.
  std::uint64_t generation = next_registry_generation();
  /// The Selection objects select() returned from `reg` (cleared when merge() replaces it).
  mutable selection_memo memo{};

  /// Under the GIL, as every handle is built and merged.
  static std::uint64_t next_registry_generation() {
    static std::uint64_t last = 0;
    return ++last;
  }
};

/// A successful selection plus the registry its pointers refer into.
struct selection_handle : bound_value {
  attnsel::selection sel;
  std::shared_ptr<const attnsel::registry> keep;
};

/// The decoder and encoder override strings; immutable once built, so `select` may read them
/// without the GIL.
struct override_set_handle : bound_value {
  std::string decoder;
  std::string encoder;
  attnsel::override_source source = attnsel::override_source::api;
  std::optional<std::string> prefill;         ///< decoder calls in the prefill phase; unset inherits decoder
  std::optional<std::string> decode;          ///< decoder calls in the decode phase; unset inherits decoder
  std::optional<std::string> drafter;         ///< the speculative drafter; unset inherits the decoder's
  std::string linear;                         ///< linear-attention and state-space layers
  std::optional<std::string> linear_prefill;  ///< linear layers in the prefill phase; unset inherits linear
  std::optional<std::string> linear_decode;   ///< linear layers in the decode phase; unset inherits linear

  /// The C++ set, viewing these strings (which outlive it: the handle is immutable).
  [[nodiscard]] attnsel::override_set view() const {
    attnsel::override_set out{{decoder, source}, {encoder, source}, std::nullopt,
                              std::nullopt,      std::nullopt,      {linear, source}};
    if (prefill) out.prefill = attnsel::override_request{*prefill, source};
    if (decode) out.decode = attnsel::override_request{*decode, source};
    if (drafter) out.drafter = attnsel::override_request{*drafter, source};
    if (linear_prefill) out.linear_prefill = attnsel::override_request{*linear_prefill, source};
    if (linear_decode) out.linear_decode = attnsel::override_request{*linear_decode, source};
    return out;
  }
  /// The request `q` reads (attnsel::override_set::for_query), viewing these strings.
  [[nodiscard]] attnsel::override_request for_query(const attnsel::query& q) const noexcept {
    const auto set = view();
    return set.for_query(q);
  }
};

/// An explanation plus what `to_json` needs to print the CLI's report.
struct explanation_handle : bound_value {
  attnsel::explanation ex;
  std::shared_ptr<const attnsel::registry> keep;
  attnsel::query q;
  attnsel::platform p;
  std::string override_spec;
  attnsel::override_source source = attnsel::override_source::none;
  attnsel::select_options options;  ///< prefer, refuse_advisories: as explain() was called
  py::object result;                ///< Selection or SelectionError, built once
};

// ---- reading arguments: TypeError for a wrong type, ValueError for a wrong value, both naming it ----------
// The wording is the CLI's (tools/attnsel/inputs.cpp), with `--flag` spelt `name`.

/// `'text'` with control and non-ASCII bytes escaped, as the CLI quotes what a person typed.
std::string quote_input(std::string_view text);

/// The public name of a class (`str`, `attnsel.Query`) for messages.
std::string class_name(py::handle type);
/// The public name of `value`'s class.
std::string type_name(py::handle value);

/// `value` as UTF-8 text; TypeError `name: expected a str, got int` otherwise (ValueError for a str that
/// is not valid Unicode, such as a lone surrogate).
std::string str_arg(std::string_view name, py::handle value);

/// `value` as a count in [min, max]: TypeError unless an int (a bool is refused: `True` is not a size),
/// ValueError `name: -1 is outside 1..65536` otherwise.
std::uint32_t count_arg(std::string_view name, py::handle value, std::uint32_t min, std::uint32_t max);

/// `value` as an int that fits `long long`; TypeError for a bool or a non-int, ValueError past the range.
long long int_arg(std::string_view name, py::handle value);

/// Parses a catalog string for enum `E`; ValueError `name: 'x' is not one of a, b, c` otherwise.
template <class E>
E parse_arg(std::string_view name, std::string_view text) {
  if (const auto value = attnsel::parse_enum<E>(text)) return *value;
  throw py::value_error(std::string(name) + ": " + quote_input(text) + " is not one of " + attnsel::enum_names<E>());
}

/// An enum argument given as its catalog string.
template <class E>
E enum_arg(std::string_view name, py::handle value) {
  return parse_arg<E>(name, str_arg(name, value));
}

/// The value `read` (attnsel::platform_from_json, query_from_json) makes of the JSON text `text`; a text
/// that is no JSON document, or a value `read` refuses, is a ValueError with the library's message.
template <class Read>
auto from_json_arg(const py::handle& text, std::string_view what, Read read) {
  const auto json = str_arg("text", text);
  try {
    return read(attnsel::parse_json_document(json, what));
  } catch (const attnsel::catalog_error& e) {
    throw py::value_error(e.what());
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

/// The entries of a collection of str (a list, set, tuple or any iterable; not a str itself): TypeError
/// naming `name` for anything else, ValueError when it holds more than `limits::elements_per_list`
/// entries (counted before any is read, or while iterating when the length is unknown).
std::vector<std::string> str_list_arg(std::string_view name, py::handle value);

/// TypeError `callable() got an unexpected keyword argument 'x'; did you mean 'y'?` (the hint only when
/// one of `known` is close).
[[noreturn]] void unexpected_keyword(std::string_view callable, std::string_view keyword,
                                     const std::vector<std::string>& known);

/// The C++ value inside a pybind11 object of class `T`, checked: TypeError naming `argument` when `value`
/// is not a `T`, and when it is one built without its constructor (`T.__new__(T)`), which has no value.
/// The hot path (a constructed `T`) reads the value where pybind11 keeps it, the first value of the
/// instance (pybind11::detail::instance, stable since 2.2): handle::cast looks the C++ type up in
/// pybind11's registry by name, ~500 instructions a call (docs/performance.md, "Python bindings").
template <class T>
const T& value_arg(std::string_view argument, py::handle value) {
  static auto* const type = reinterpret_cast<PyTypeObject*>(py::type::of<T>().ptr());
  if (PyObject_TypeCheck(value.ptr(), type)) {
    const void* stored = reinterpret_cast<py::detail::instance*>(value.ptr())->get_value_and_holder().value_ptr();
    if (stored != nullptr && static_cast<const T*>(stored)->constructed) return *static_cast<const T*>(stored);
  }
  if (!py::isinstance<T>(value))
    throw py::type_error(std::string(argument) + ": expected an " + class_name(py::type::of<T>()) + ", got " +
                         type_name(value));
  const T& out = value.cast<const T&>();
  if (!out.constructed)
    throw py::type_error(std::string(argument) + ": this " + class_name(py::type::of<T>()) +
                         " was never initialised (made by __new__ without __init__, or by a crafted pickle)");
  return out;
}

/// Adds `name` or `name=version` to `p`; ValueError worded like the CLI's --component, naming `argument`.
void add_component(attnsel::platform& p, const std::string& spec, std::string_view argument);

/// Adds every spec of `specs` (in order: a later spec for a name replaces an earlier one), sorted first
/// so that each insert is at the end: O(n log n) for any order.
void add_components(attnsel::platform& p, std::vector<std::string> specs, std::string_view argument);

// ---- entry points called through CPython's vectorcall (fast_call.cpp) ---------------------------------
// The calls an engine makes per layer (select, Selector.select, Query) skip pybind11's generic dispatcher,
// which costs several times the work they do (docs/performance.md, "Python bindings").

/// A vectorcall signature: `names` in order, the first `positional` of them accepted by position, the
/// first `required` of them required.
struct fast_signature {
  const char* callable;
  const char* const* names;
  std::size_t count;
  std::size_t positional;
  std::size_t required;
};

/// Reads a vectorcall's arguments into `out` (`sig.count` slots, nullptr where not given); TypeError worded
/// as CPython's for too many positionals, an unknown keyword (with did-you-mean), a repeated or a missing one.
void fast_arguments(const fast_signature& sig, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                    PyObject** out);

/// A flag argument by its truth value; `absent` when not given.
bool truth_arg(PyObject* value, bool absent);

/// Inside a catch block: sets the Python error for the exception in flight (what pybind11's dispatcher
/// does), so that nothing crosses into the interpreter.
void set_python_error() noexcept;

/// Runs `f` (returning py::object) as a CPython entry point: its new reference, or nullptr with the error set.
template <class F>
PyObject* python_entry(F&& f) noexcept {
  try {
    return f().release().ptr();
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

/// Adds `def` (METH_FASTCALL | METH_KEYWORDS, a static definition) to the class `cls` as a method.
void add_fast_method(py::handle cls, PyMethodDef* def);

// ---- the exception types -----------------------------------------------------------------------------

/// An (unraised) attnsel.SelectionError carrying code, message, candidates and suggestions. C++
/// selection_exception, catalog_error and registry_error thrown through a binding become SelectionError
/// and CatalogError with their fields (a local exception translator, errors.cpp).
py::object make_selection_error(const attnsel::selection_error& e);
/// Raises `error` (an exception instance) as a Python exception.
[[noreturn]] void raise_instance(const py::object& error);

/// A Python Selection keeping `keep` alive.
py::object make_selection(attnsel::selection sel, std::shared_ptr<const attnsel::registry> keep);
/// A Python Explanation of `ex`, keeping `keep` alive; its JSON report states `q`, `p` and the override
/// string the query read (`request`).
py::object make_explanation(attnsel::explanation ex, std::shared_ptr<const attnsel::registry> keep,
                            const attnsel::query& q, const attnsel::platform& p, attnsel::override_request request,
                            const attnsel::select_options& options);

// ---- one binder per topic (each in its own .cpp) ----------------------------------------------------

void bind_names(py::module_& m);         // names.cpp: the enum vocabularies as tuples
void bind_errors(py::module_& m);        // errors.cpp: SelectionError, CatalogError
void bind_platform(py::module_& m);      // platform.cpp: Platform
void bind_query(py::module_& m);         // query.cpp: Query
void bind_registry(py::module_& m);      // registry.cpp: Registry and the catalog loaders
void bind_overrides(py::module_& m);     // overrides.cpp: OverrideSet
void bind_selection(py::module_& m);     // selection.cpp: Reason, Candidate, Selection, Explanation, select, explain
void bind_selector(py::module_& m);      // selector.cpp: Selector (the bound selector)
void bind_report(py::module_& m);        // report.cpp: to_json
void bind_detect(py::module_& m);        // detect.cpp: _detect, the C++ half of attnsel.detect_platform()
void bind_model_config(py::module_& m);  // model_config.cpp: ModelConfig, read_model_config, Query.from_model_config
void bind_tuning(py::module_& m);        // tuning.cpp: _tuning_*, the C++ decisions attnsel.tune runs

}  // namespace attnsel_py

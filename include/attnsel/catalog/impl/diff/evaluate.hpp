// SPDX-License-Identifier: Apache-2.0
// diff_catalogs' evaluation helpers: the overrides worth forcing, one decision and the rule that made it,
// and the distinct calls a group of differences covers.
#pragma once

#include <attnsel/catalog/impl/diff/axes.hpp>

ATTNSEL_BEGIN_NAMESPACE
namespace detail {

// Backends whose descriptors differ between the catalogs (or exist in one only) and that could serve
// (v, d, m) in either: forcing any other backend gives the same answer in both, because a forced
// backend ignores the policy, and one that serves the scope in neither catalog is rejected by both.
inline std::vector<std::string> forced_candidates(const registry& a, const registry& b, device_vendor v,
                                                  attention_domain d, attention_mode m) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  const auto could_serve = [&](const backend_descriptor* x, const registry& in) {
    if (!x) return false;
    bool any = false;
    const auto serving = in.selecting_domain(d);
    const auto look = [&](const capabilities& c) {
      if (serves(*x, c, serving) && c.mode == m && runs_on_vendor(c, v)) any = true;
    };
    if (x->variants.empty()) look(x->caps);
    for (const auto& c : x->variants) look(c);
    return any;
  };
  const auto consider = [&](const backend_descriptor& x) {
    if (!seen.insert(x.name).second) return;
    const auto* in_a = a.find(x.name);
    const auto* in_b = b.find(x.name);
    if (in_a && in_b && *in_a == *in_b) return;
    if (!in_a || !in_b || could_serve(in_a, a) || could_serve(in_b, b)) out.push_back(x.name);
  };
  for (const auto& x : a.backends()) consider(x);
  for (const auto& x : b.backends()) consider(x);
  // Where the rules of this domain and vendor differ and one of them substitutes for a forced backend
  // (policy_rule::forced), forcing any backend may decide differently, one that cannot run here most of
  // all: every backend is forced.
  const auto substitutes = [](const policy_rule* r) { return r->forced != forced_handling::honoured; };
  const auto ra = rules_for(a, v, d);
  const auto rb = rules_for(b, v, d);
  if (!same_rules(a, b, v, d) &&
      (std::any_of(ra.begin(), ra.end(), substitutes) || std::any_of(rb.begin(), rb.end(), substitutes))) {
    const auto add_all = [&](const registry& r) {
      for (const auto& x : r.backends())
        if (std::find(out.begin(), out.end(), x.name) == out.end()) out.push_back(x.name);
    };
    add_all(a);
    add_all(b);
  }
  return out;
}

// The backend, with the warning advisory the engine shows for it (`NAME warning:ID`), or the error code.
inline std::string decision_of(const selection_result& r) {
  if (!r) return "error:" + std::string(to_string(r.error().code));
  return r->warning == nullptr ? std::string(r->name()) : std::string(r->name()) + " warning:" + r->warning->id;
}

inline std::string rule_of(const registry& reg, const query& q, const platform& p, const std::string& spec) {
  if (!spec.empty()) return "forced " + spec;
  query selecting = q;
  selecting.domain = reg.selecting_domain(q.domain);  // a drafter this catalog does not serve: the decoder's rules
  const auto* rule = reg.policy().match(selecting, p);
  return rule ? to_string(*rule) : std::string("registration order");
}

inline std::string components_text(const platform& p) {
  if (p.components().empty()) return "none";
  return join(p.components(), ",", [](const component& c) { return to_string(c); });
}

// Appends each value not yet in `out`; `seen` mirrors `out` so the check is a lookup, not a scan.
template <class T, class F>
void append_unique(std::vector<std::string>& out, std::set<std::string>& seen, const std::vector<T>& values, F&& text) {
  for (const auto& v : values) {
    auto t = text(v);
    if (seen.insert(t).second) out.push_back(std::move(t));
  }
}

inline void append_unique_numbers(std::vector<std::uint32_t>& out, std::set<std::uint32_t>& seen,
                                  const std::vector<std::uint32_t>& values) {
  for (auto v : values)
    if (seen.insert(v).second) out.push_back(v);
}

// The distinct calls of several scopes' call axes, ascending: how many, and the first `keep` as text.
// Each axes' calls come out in order (the product walked like an odometer, merged with its sorted
// corners) and the streams are merged, so counting holds no set of calls (issue 35: the union of
// every block's calls was a set of strings, a 26 MB `calls:` line for a 4 KB catalog).
inline std::pair<std::size_t, std::vector<std::string>> distinct_calls(const std::vector<const call_axes*>& axes,
                                                                       std::size_t keep) {
  struct cursor {
    const call_axes* ax;
    std::vector<call_point> corners;  // sorted, unique
    std::size_t corner = 0;
    std::array<std::size_t, 5> at{};
    bool product_done = false;

    [[nodiscard]] std::array<std::size_t, 5> sizes() const {
      return {ax->phases.size(), ax->seq_len_q.size(), ax->seq_len_kv.size(), ax->batch_size.size(),
              ax->gqa_group.size()};
    }
    [[nodiscard]] std::optional<call_point> product() const {
      if (product_done) return std::nullopt;
      return call_point{ax->phases[at[0]], ax->seq_len_q[at[1]], ax->seq_len_kv[at[2]], ax->batch_size[at[3]],
                        ax->gqa_group[at[4]]};
    }
    [[nodiscard]] std::optional<call_point> current() const {
      auto p = product();
      if (corner == corners.size()) return p;
      if (!p || corners[corner] < *p) return corners[corner];
      return p;
    }
    void advance(const call_point& low) {
      if (const auto p = product(); p && *p == low) {
        const auto n = sizes();
        std::size_t k = n.size();
        while (k > 0) {
          --k;
          if (++at[k] < n[k]) break;
          at[k] = 0;
          if (k == 0) product_done = true;
        }
      }
      if (corner < corners.size() && corners[corner] == low) ++corner;
    }
  };
  std::vector<cursor> cursors;
  for (const auto* ax : axes) {
    cursor c{ax, ax->corners};
    std::sort(c.corners.begin(), c.corners.end());
    c.corners.erase(std::unique(c.corners.begin(), c.corners.end()), c.corners.end());
    cursors.push_back(std::move(c));
  }
  std::size_t count = 0;
  std::vector<std::string> listed;
  for (;;) {
    std::optional<call_point> low;
    for (const auto& c : cursors)
      if (const auto v = c.current(); v && (!low || *v < *low)) low = v;
    if (!low) break;
    ++count;
    if (listed.size() < keep) listed.push_back(call_text(*low));
    for (auto& c : cursors) c.advance(*low);
  }
  return {count, std::move(listed)};
}

}  // namespace detail
ATTNSEL_END_NAMESPACE

// SPDX-License-Identifier: Apache-2.0
// diff_catalogs' query side: the call points and query axes of a scope, each reduced to the values
// some check or rule tells apart, and the enumeration of their queries.
#pragma once

#include <attnsel/catalog/impl/diff/scope.hpp>
#include <attnsel/core/checks.hpp>
#include <attnsel/core/impl/checks_inl.hpp>  // the gate table (in header-only mode checks.hpp brought it)

ATTNSEL_BEGIN_NAMESPACE
namespace detail {

// The query axes of a scope, each reduced to the values some check or rule tells apart.
// One call a diff asks about (catalog format 2): a phase and the shape fields; 0 = unstated.
struct call_point {
  attention_phase phase = attention_phase::unstated;
  std::uint32_t seq_len_q = 0;
  std::uint32_t seq_len_kv = 0;
  std::uint32_t batch_size = 0;
  std::uint32_t gqa_group = 0;  ///< stated through num_kv_heads = num_heads / gqa_group; 0: unstated

  friend bool operator==(const call_point& a, const call_point& b) {
    return a.phase == b.phase && a.seq_len_q == b.seq_len_q && a.seq_len_kv == b.seq_len_kv &&
           a.batch_size == b.batch_size && a.gqa_group == b.gqa_group;
  }
  friend bool operator<(const call_point& a, const call_point& b) {
    const auto key = [](const call_point& c) {
      return std::make_tuple(static_cast<int>(c.phase), c.seq_len_q, c.seq_len_kv, c.batch_size, c.gqa_group);
    };
    return key(a) < key(b);
  }
};

inline std::string call_text(const call_point& c) {
  std::string out(to_string(c.phase));
  if (c.seq_len_q) out += " seq_len_q=" + std::to_string(c.seq_len_q);
  if (c.seq_len_kv) out += " seq_len_kv=" + std::to_string(c.seq_len_kv);
  if (c.batch_size) out += " batch_size=" + std::to_string(c.batch_size);
  if (c.gqa_group) out += " gqa_group=" + std::to_string(c.gqa_group);
  return out;
}

// a * b, or SIZE_MAX when that overflows: counts are compared with a limit before anything is built.
inline std::size_t saturating_product(std::initializer_list<std::size_t> factors) {
  std::size_t out = 1;
  for (auto f : factors) {
    if (f == 0) return 0;
    if (out > SIZE_MAX / f) return SIZE_MAX;
    out *= f;
  }
  return out;
}

inline std::size_t saturating_sum(std::size_t a, std::size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

inline std::string with_commas(std::size_t n) {
  auto digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The calls axis by its factors (issue 35): each phase x each query length x each key length x each
// batch size x each GQA group, plus the corners of measured rules. Each factor is linear in the
// catalogs; the product is counted (size()) and walked (for_each()), never stored, so a space too
// large to compare is refused before any of it is built.
struct call_axes {
  std::vector<attention_phase> phases = {attention_phase::unstated};
  std::vector<std::uint32_t> seq_len_q = {0};  // ascending, 0 (unstated) first
  std::vector<std::uint32_t> seq_len_kv = {0};
  std::vector<std::uint32_t> batch_size = {0};
  std::vector<std::uint32_t> gqa_group = {0};
  std::vector<call_point> corners;  // measured rules' own corners, in rule order (issue 23)

  [[nodiscard]] std::size_t product_size() const {
    return saturating_product(
        {phases.size(), seq_len_q.size(), seq_len_kv.size(), batch_size.size(), gqa_group.size()});
  }
  [[nodiscard]] std::size_t size() const { return saturating_sum(product_size(), corners.size()); }
  template <class F>
  void for_each(F&& f) const {
    for (auto ph : phases)
      for (auto q : seq_len_q)
        for (auto kv : seq_len_kv)
          for (auto b : batch_size)
            for (auto g : gqa_group) f(call_point{ph, q, kv, b, g});
    for (const auto& c : corners) f(c);
  }
  // How many of the calls state the GQA group g.
  [[nodiscard]] std::size_t with_group(std::uint32_t g) const {
    std::size_t n = std::binary_search(gqa_group.begin(), gqa_group.end(), g)
                        ? saturating_product({phases.size(), seq_len_q.size(), seq_len_kv.size(), batch_size.size()})
                        : 0;
    for (const auto& c : corners)
      if (c.gqa_group == g) n = saturating_sum(n, 1);
    return n;
  }
  [[nodiscard]] std::string sizes_text() const {
    return "phases " + with_commas(phases.size()) + " x seq_len_q " + with_commas(seq_len_q.size()) + " x seq_len_kv " +
           with_commas(seq_len_kv.size()) + " x batch_size " + with_commas(batch_size.size()) + " x gqa_group " +
           with_commas(gqa_group.size()) + " + " + with_commas(corners.size()) + " measured corners";
  }
  friend bool operator==(const call_axes& a, const call_axes& b) {
    return a.phases == b.phases && a.seq_len_q == b.seq_len_q && a.seq_len_kv == b.seq_len_kv &&
           a.batch_size == b.batch_size && a.gqa_group == b.gqa_group && a.corners == b.corners;
  }
};

struct diff_axes {
  call_axes calls;  // just the unstated call when the scope reads no phase or shape
  std::vector<std::uint32_t> head_sizes;
  std::vector<data_type> dtypes;
  std::vector<cache_dtype> kv_cache_dtypes;
  std::vector<std::uint32_t> block_sizes;
  std::vector<attention_type> attn_types;
  std::vector<std::string> features;  // "" = none
  std::vector<std::uint32_t> num_heads;
  // Head-count classes, for stating a GQA group with a head count of the same class (issue 35): the
  // positive counts cut into intervals [head_starts[k], head_starts[k + 1]) that no rule tells apart
  // inside, the class of each interval, and the class of each value of `num_heads` (0: unknown).
  std::vector<std::uint32_t> head_starts;
  std::vector<std::uint32_t> interval_class;
  std::vector<std::uint32_t> head_class;
  // Filled by realise_groups() once the space is accepted: for num_heads[i] and group groups[j], the
  // head count that states it (0: none in the class can) at realised[i * groups.size() + j].
  std::vector<std::uint32_t> groups;
  std::vector<std::uint32_t> realised;
};

// The gate table asked about one variant (issue 33): whether query gate `Code` passes a probe query.
// The diff tells a capability's values apart by the gates' own answers instead of restating each
// gate's test. It asks only the gates that read nothing but the variant and one or two query fields:
// the call-rule gate also reads the call a probe leaves unstated (its conditions' lists are read
// apart, below), the component gate the platform, the custom and advisory gates the backend.
class gate_asker {
 public:
  template <reason_code Code>
  [[nodiscard]] bool passes(const capabilities& variant, const query& probe) const {
    static_assert(Code == reason_code::attn_type || Code == reason_code::dtype || Code == reason_code::kv_cache_dtype ||
                      Code == reason_code::head_size || Code == reason_code::block_size,
                  "the diff asks the gates that read the variant and the probe's fields alone");
    constexpr std::size_t gate = index_of(Code);
    reason_sink sink(nullptr);
    return gate_table[gate].run(gate_context{none_, &variant, probe, anywhere_}, sink);
  }

 private:
  static constexpr std::size_t index_of(reason_code code) {
    std::size_t i = 0;
    while (i < check_gates.size() && check_gates[i].code != code) ++i;
    return i;
  }
  backend_descriptor none_;
  platform anywhere_;
};

// A default query with one or two fields set: what the diff asks the gates about.
template <class... Set>
query probe(Set&&... set) {
  query q;
  (set(q), ...);
  return q;
}

// One value per class of a shape field (issue 35; before, both sides of every cut, up to twice as
// many per field and 16 times as many calls): 0 (unstated), and for cuts c1 < ... < ck (a class is
// [ci, ci+1 - 1]) each ci - 1 and ck, up to the field's limit. `both_sides` also keeps each ci, so
// two unequal lengths of one class exist where `equal_seq_lens` compares the query and key lengths.
inline std::vector<std::uint32_t> field_values(const std::vector<std::uint32_t>& cuts, std::uint32_t limit,
                                               bool both_sides) {
  std::vector<std::uint32_t> out = {0};
  for (auto c : cuts) {
    if (c > 1) out.push_back(c - 1);
    if (both_sides) out.push_back(c);
  }
  if (!cuts.empty()) out.push_back(*std::max_element(cuts.begin(), cuts.end()));
  out.erase(std::remove_if(out.begin(), out.end(), [&](std::uint32_t v) { return v > limit; }), out.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The calls that tell the scope's format-2 limits and conditions apart: the unstated call, and when
// something reads them, each phase and one value per class of every length, batch and GQA-group
// threshold (a query length equal to each key length among them, for `equal_seq_lens`).
inline call_axes calls_of(const diff_scope& s) {
  bool phases = false;
  bool equal_lens = false;
  shape_thresholds cuts;
  for (const auto* c : s.caps) {
    add_cuts(*c, cuts);
    for (const auto& r : c->call_rules) {
      phases = phases || !r.when.phases.empty() || !r.require.phases.empty();
      equal_lens = equal_lens || r.when.equal_seq_lens || r.require.equal_seq_lens;
    }
  }
  for (const auto* r : s.rules) {
    if (r->measured) continue;  // its own corners below
    add_cuts(r->shape, cuts);
    phases = phases || !r->phases.empty();
    for (const auto& e : r->order) {
      add_cuts(e.shape, cuts);
      phases = phases || !e.phases.empty();
    }
  }
  const auto values = [&](shape_field f, std::uint32_t limit) {
    return field_values(cuts.cuts[static_cast<std::size_t>(f)], limit, equal_lens);
  };
  call_axes out;
  if (phases) out.phases = {attention_phase::unstated, attention_phase::prefill, attention_phase::decode};
  out.seq_len_q = values(shape_field::seq_len_q, limits::seq_len);
  out.seq_len_kv = values(shape_field::seq_len_kv, limits::seq_len);
  out.batch_size = values(shape_field::batch_size, limits::batch_size);
  // GQA groups, one per class (stated through num_kv_heads: for_each_query).
  out.gqa_group = values(shape_field::gqa_group, limits::num_heads);
  out.seq_len_q.insert(out.seq_len_q.end(), out.seq_len_kv.begin(), out.seq_len_kv.end());
  std::sort(out.seq_len_q.begin(), out.seq_len_q.end());
  out.seq_len_q.erase(std::unique(out.seq_len_q.begin(), out.seq_len_q.end()), out.seq_len_q.end());
  // A measured rule's class: the corners of its own ranges, with its GQA group. Crossed with every
  // other rule's cuts they would multiply as classes are added (an overlay has dozens).
  for (const auto* r : s.rules) {
    if (!r->measured) continue;
    const auto ends = [&](shape_field f) {
      std::vector<std::uint32_t> v;
      const auto& range = r->shape[f];
      if (!range) return std::vector<std::uint32_t>{0};
      v.push_back(range->min);
      if (range->bounded_above() && range->max != range->min) v.push_back(range->max);
      return v;
    };
    const auto& g = r->shape[shape_field::gqa_group];
    const std::uint32_t gqa = g ? g->min : 0;
    std::vector<attention_phase> rule_phases;
    r->phases.for_each([&](attention_phase ph) { rule_phases.push_back(ph); });
    if (rule_phases.empty()) rule_phases.push_back(attention_phase::unstated);
    for (auto ph : rule_phases)
      for (auto q : ends(shape_field::seq_len_q))
        for (auto kv : ends(shape_field::seq_len_kv))
          for (auto b : ends(shape_field::batch_size)) out.corners.push_back({ph, q, kv, b, gqa});
  }
  return out;
}

// The numbers a capability field names, as candidate values of the query axis its row names
// (capability_field::query_field): every value of a head-size set and the edges of a range (per dtype
// and in call rules too), every block multiple and preferred size. A type that names no number (an
// enum or enum set: the axis enumerates every value; names, platforms, components, the call's ranges,
// which calls_of reads) adds none; any other type must say what it adds.
template <class T>
void add_candidates(std::vector<std::uint32_t>&, const T&) {
  static_assert(std::is_enum_v<T>, "a capability field of a new type: say which numbers it names (add_candidates)");
}
template <class E>
void add_candidates(std::vector<std::uint32_t>&, enum_set<E>) {}
inline void add_candidates(std::vector<std::uint32_t>&, const std::string&) {}
inline void add_candidates(std::vector<std::uint32_t>&, const feature_set&) {}
inline void add_candidates(std::vector<std::uint32_t>&, const std::vector<platform_constraint>&) {}
inline void add_candidates(std::vector<std::uint32_t>&, const std::vector<component_requirement>&) {}
inline void add_candidates(std::vector<std::uint32_t>&, const shape_limits&) {}

inline void add_candidates(std::vector<std::uint32_t>& out, const head_size_spec& h) {
  if (h.form == head_size_spec::kind::set) {
    out.insert(out.end(), h.values.begin(), h.values.end());
  } else if (h.form == head_size_spec::kind::range) {
    out.push_back(h.min);
    if (h.min > 1) out.push_back(h.min - 1);
    if (h.max < max_head_size) {
      out.push_back(h.max);
      out.push_back(h.max + 1);
    }
    if (h.multiple_of > 1) out.push_back(((h.min + h.multiple_of - 1) / h.multiple_of) * h.multiple_of + 4);
  }
}

inline void add_candidates(std::vector<std::uint32_t>& out, const std::optional<head_size_spec>& h) {
  if (h) add_candidates(out, *h);
}

inline void add_candidates(std::vector<std::uint32_t>& out, const std::vector<dtype_head_sizes>& by_dtype) {
  for (const auto& d : by_dtype) add_candidates(out, d.head_sizes);
}

// A call rule's head sizes and value head sizes (its `when` or its `require`) tell heads apart as a
// variant's own do (the diff's value head size is the head size).
inline void add_candidates(std::vector<std::uint32_t>& out, const std::vector<call_rule>& rules) {
  for_each_condition(rules, [&](const call_condition& c, std::string_view) {
    add_candidates(out, c.head_sizes);
    add_candidates(out, c.value_head_sizes);
  });
}

inline void add_candidates(std::vector<std::uint32_t>& out, const std::vector<std::uint32_t>& values) {
  out.insert(out.end(), values.begin(), values.end());
}

inline void add_candidates(std::vector<std::uint32_t>& out, std::uint32_t value) {
  if (value != 0) out.push_back(value);
}

// The candidates the scope's capabilities name for the query axis `axis`, field by field of the
// capability list: a new field whose row names the axis adds its numbers with no edit here.
inline void capability_candidates(const diff_scope& s, std::string_view axis, std::vector<std::uint32_t>& out) {
  for (const auto* c : s.caps)
    field_list<capabilities>::members([&](const capability_field& f, auto m) {
      if (f.query_field == axis) add_candidates(out, c->*decltype(m)::value);
    });
}

// What each set-valued condition of `item` (a policy rule or a call condition, through its field list)
// answers for `value`, onto `sig`: a set of `value`'s type admits it when empty or holding it; a head
// size list (a rule's sorted sizes, a condition's head and value head sizes) when empty, unset or
// holding it. Fields of other types say nothing of `value`, so a new set-valued field is read with no
// edit here.
template <class Item, class V>
void condition_answers(const Item& item, V value, std::vector<bool>& sig) {
  for_each_field(item, [&](std::string_view, const auto& field) {
    using F = bare_t<decltype(field)>;
    if constexpr (std::is_same_v<F, enum_set<V>>) {
      sig.push_back(field.empty() || field.contains(value));
    } else if constexpr (std::is_same_v<V, std::uint32_t> && std::is_same_v<F, std::vector<std::uint32_t>>) {
      sig.push_back(field.empty() || std::binary_search(field.begin(), field.end(), value));
    } else if constexpr (std::is_same_v<V, std::uint32_t> && std::is_same_v<F, std::optional<head_size_spec>>) {
      if (field) sig.push_back(field->accepts(value));
    }
  });
}

inline diff_axes axes_of(const diff_scope& s) {
  diff_axes ax;
  ax.calls = calls_of(s);
  // Head sizes: the usual sizes first, then every boundary a capability names.
  std::vector<std::uint32_t> heads = {128, 64, 80, 96, 256, 512, 576};
  capability_candidates(s, "head_size", heads);
  // Each condition of a variant's call rules, and each policy rule, tells an axis's values apart by its
  // sets of that axis's type (condition_answers): the call-rule gate reads the call a probe leaves
  // unstated, and a rule's other conditions would hide the one asked, so the sets are read one by one.
  const auto conditions_answer = [](const capabilities& c, auto value, std::vector<bool>& sig) {
    for_each_condition(c.call_rules,
                       [&](const call_condition& k, std::string_view) { condition_answers(k, value, sig); });
  };
  for (const auto* r : s.rules) heads.insert(heads.end(), r->head_sizes.begin(), r->head_sizes.end());
  heads.erase(std::remove_if(heads.begin(), heads.end(), [](std::uint32_t h) { return h == 0 || h > max_head_size; }),
              heads.end());
  const gate_asker ask;
  const auto dts = enum_values<data_type>();
  const auto head_probe = [](std::uint32_t h, data_type d) {
    return probe([h](query& q) { q.head_size = h; }, [d](query& q) { q.dtype = d; });
  };
  // The head-size gate under each dtype: a dtype may have head sizes of its own.
  ax.head_sizes = distinct_by(first_occurrences(heads), [&](std::uint32_t h) {
    std::vector<bool> sig;
    for (const auto* c : s.caps) {
      for (auto d : dts) sig.push_back(ask.passes<reason_code::head_size>(*c, head_probe(h, d)));
      conditions_answer(*c, h, sig);
    }
    for (const auto* r : s.rules) condition_answers(*r, h, sig);
    return sig;
  });

  // A dtype by the dtype gate, the head-size gate at each head size kept (head sizes of its own), and
  // the KV gate on `auto` (which stores the cache in the compute dtype).
  ax.dtypes = distinct_by(std::vector<data_type>(dts.begin(), dts.end()), [&](data_type d) {
    std::vector<bool> sig;
    const auto auto_kv =
        probe([d](query& q) { q.dtype = d; }, [](query& q) { q.kv_cache_dtype = cache_dtype::automatic; });
    for (const auto* c : s.caps) {
      // A variant that refuses the dtype tells nothing else apart for it.
      const bool taken = ask.passes<reason_code::dtype>(*c, probe([d](query& q) { q.dtype = d; }));
      sig.push_back(taken);
      for (auto h : ax.head_sizes) sig.push_back(taken && ask.passes<reason_code::head_size>(*c, head_probe(h, d)));
      sig.push_back(taken && ask.passes<reason_code::kv_cache_dtype>(*c, auto_kv));
      conditions_answer(*c, d, sig);
    }
    for (const auto* r : s.rules) condition_answers(*r, d, sig);
    return sig;
  });

  const auto kvs = enum_values<cache_dtype>();
  ax.kv_cache_dtypes = distinct_by(std::vector<cache_dtype>(kvs.begin(), kvs.end()), [&](cache_dtype k) {
    std::vector<bool> sig{k == cache_dtype::automatic};  // `auto` depends on the dtype: its own class
    const auto kv = probe([k](query& q) { q.kv_cache_dtype = k; });
    for (const auto* c : s.caps) sig.push_back(ask.passes<reason_code::kv_cache_dtype>(*c, kv));
    for (const auto* r : s.rules) condition_answers(*r, k, sig);
    return sig;
  });

  std::vector<std::uint32_t> blocks = {0, 1, 8, 16, 32, 64, 128, 256};
  capability_candidates(s, "block_size", blocks);
  ax.block_sizes = distinct_by(first_occurrences(blocks), [&](std::uint32_t size) {
    std::vector<bool> sig;
    const auto block = probe([size](query& q) { q.block_size = size; });
    for (const auto* c : s.caps) sig.push_back(ask.passes<reason_code::block_size>(*c, block));
    return sig;
  });

  const auto ats = enum_values<attention_type>();
  ax.attn_types = distinct_by(std::vector<attention_type>(ats.begin(), ats.end()), [&](attention_type t) {
    std::vector<bool> sig;
    const auto typed = probe([t](query& q) { q.attn_type = t; });
    for (const auto* c : s.caps) {
      sig.push_back(ask.passes<reason_code::attn_type>(*c, typed));
      conditions_answer(*c, t, sig);
    }
    for (const auto* r : s.rules) condition_answers(*r, t, sig);
    return sig;
  });

  // Features: every feature list of the variants, their call rules' conditions, the rules and their
  // entries (each through its field list) is a predicate on the feature named.
  const auto each_list = [&](auto&& visit) {
    for (const auto* c : s.caps) {
      visit(c->features);
      for_each_condition(c->call_rules,
                         [&](const call_condition& k, std::string_view) { for_each_feature_list(k, visit); });
    }
    for (const auto* r : s.rules) {
      for_each_feature_list(*r, visit);
      for (const auto& e : r->order) for_each_feature_list(e, visit);
    }
  };
  std::vector<std::string> feats = {""};
  each_list([&](const feature_set& names) { feats.insert(feats.end(), names.begin(), names.end()); });
  {
    std::set<std::string> seen;
    feats.erase(
        std::remove_if(feats.begin(), feats.end(), [&](const std::string& f) { return !seen.insert(f).second; }),
        feats.end());
  }
  {
    // Predicate 0 is "no feature"; every other one is a feature list, true of the names it holds.
    std::map<std::string, sig_hash> by_name;
    std::size_t predicate = 1;
    const auto list = [&](const feature_set& names) {
      for (const auto& f : names) by_name[f].flip(predicate);
      ++predicate;
    };
    each_list(list);
    std::vector<sig_hash> hashes;
    hashes.reserve(feats.size());
    for (const auto& f : feats) hashes.push_back(f.empty() ? sig_hash::of(0) : by_name[f]);
    ax.features = distinct_by_hash(feats, hashes);
  }

  std::vector<std::uint32_t> heads_count = {0};
  // A GQA group is stated through num_kv_heads = num_heads / group: when some call states one, the
  // first stated head count is one every group divides (their least common multiple, within limits);
  // a group it misses is stated with a head count of the same class (realise_groups()).
  std::uint32_t divisible = 1;
  bool any_group = false;
  const auto note_group = [&](std::uint32_t g) {
    if (g == 0) return;
    any_group = true;
    const auto lcm = std::uint64_t{divisible} / std::gcd(divisible, g) * g;
    if (lcm <= limits::num_heads) divisible = static_cast<std::uint32_t>(lcm);
  };
  for (auto g : ax.calls.gqa_group) note_group(g);
  for (const auto& c : ax.calls.corners) note_group(c.gqa_group);
  if (any_group) heads_count.push_back(divisible);
  for (const auto* r : s.rules) {
    if (!r->min_num_heads && !r->max_num_heads) continue;
    heads_count.push_back(std::max<std::uint32_t>(r->min_num_heads, 1));
    if (r->min_num_heads > 1) heads_count.push_back(r->min_num_heads - 1);
    if (r->max_num_heads) {
      heads_count.push_back(r->max_num_heads);
      heads_count.push_back(r->max_num_heads + 1);
    }
  }
  {
    // Predicate 0 is "unknown" (0); each bounded rule is an interval over the sorted candidate
    // values: its key is flipped at the interval's first value and again past its last, and a
    // prefix XOR gives each value its hash.
    const auto values = first_occurrences(heads_count);
    std::vector<std::uint32_t> sorted(values);
    std::sort(sorted.begin(), sorted.end());
    std::vector<sig_hash> diff(sorted.size() + 1);
    // The same flips over the interval starts, for the classes of head counts that are no candidate.
    std::vector<std::uint32_t> starts = {1};
    for (const auto* r : s.rules) {
      if (!r->min_num_heads && !r->max_num_heads) continue;
      starts.push_back(std::max<std::uint32_t>(r->min_num_heads, 1));
      if (r->max_num_heads && r->max_num_heads < limits::num_heads) starts.push_back(r->max_num_heads + 1);
    }
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    starts.erase(std::upper_bound(starts.begin(), starts.end(), limits::num_heads), starts.end());
    std::vector<sig_hash> start_diff(starts.size() + 1);
    std::size_t predicate = 1;
    for (const auto* r : s.rules) {
      if (!r->min_num_heads && !r->max_num_heads) continue;
      const auto lo = std::max<std::uint32_t>(r->min_num_heads, 1);
      const auto hi = r->max_num_heads ? r->max_num_heads : UINT32_MAX;
      if (lo <= hi) {
        const auto a = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), lo) - sorted.begin());
        const auto b = static_cast<std::size_t>(std::upper_bound(sorted.begin(), sorted.end(), hi) - sorted.begin());
        diff[a].flip(predicate);
        diff[b].flip(predicate);
        const auto sa = static_cast<std::size_t>(std::lower_bound(starts.begin(), starts.end(), lo) - starts.begin());
        const auto sb = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), hi) - starts.begin());
        start_diff[sa].flip(predicate);
        start_diff[sb].flip(predicate);
      }
      ++predicate;
    }
    std::map<std::uint32_t, sig_hash> at;
    sig_hash running;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      running.flip(diff[i]);
      at[sorted[i]] = sorted[i] == 0 ? sig_hash::of(0) : running;
    }
    std::vector<sig_hash> hashes;
    hashes.reserve(values.size());
    for (auto v : values) hashes.push_back(at[v]);
    ax.num_heads = distinct_by_hash(values, hashes);
    // Classes numbered in order of first interval; each value of the axis takes its interval's class.
    std::unordered_map<sig_hash, std::uint32_t, sig_hash_hasher> class_of;
    sig_hash start_running;
    ax.interval_class.reserve(starts.size());
    for (std::size_t k = 0; k < starts.size(); ++k) {
      start_running.flip(start_diff[k]);
      const auto id = static_cast<std::uint32_t>(class_of.size());
      ax.interval_class.push_back(class_of.emplace(start_running, id).first->second);
    }
    ax.head_starts = std::move(starts);
    for (auto n : ax.num_heads) {
      std::uint32_t id = UINT32_MAX;  // unknown, or above the limit: no class to realise a group in
      if (n != 0 && n <= limits::num_heads) {
        const auto k = static_cast<std::size_t>(std::upper_bound(ax.head_starts.begin(), ax.head_starts.end(), n) -
                                                ax.head_starts.begin() - 1);
        id = ax.interval_class[k];
      }
      ax.head_class.push_back(id);
    }
  }
  return ax;
}

// The head count that states group g for the head-count value num_heads[i]: the value itself when g
// divides it, else the smallest multiple of g in an interval of its class (same answer from every
// rule), else 0. Run once the space is accepted: the table has num_heads x groups entries.
inline void realise_groups(diff_axes& ax) {
  std::set<std::uint32_t> groups;
  for (auto g : ax.calls.gqa_group)
    if (g) groups.insert(g);
  for (const auto& c : ax.calls.corners)
    if (c.gqa_group) groups.insert(c.gqa_group);
  ax.groups.assign(groups.begin(), groups.end());
  if (ax.groups.empty()) return;
  std::vector<std::vector<std::size_t>> intervals;  // by class, ascending
  for (std::size_t k = 0; k < ax.interval_class.size(); ++k) {
    if (ax.interval_class[k] >= intervals.size()) intervals.resize(ax.interval_class[k] + 1);
    intervals[ax.interval_class[k]].push_back(k);
  }
  ax.realised.assign(ax.num_heads.size() * ax.groups.size(), 0);
  for (std::size_t i = 0; i < ax.num_heads.size(); ++i) {
    const auto n = ax.num_heads[i];
    if (ax.head_class[i] == UINT32_MAX) continue;
    for (std::size_t j = 0; j < ax.groups.size(); ++j) {
      const std::uint64_t g = ax.groups[j];
      auto& slot = ax.realised[i * ax.groups.size() + j];
      if (n % g == 0) {
        slot = n;
        continue;
      }
      for (auto k : intervals[ax.head_class[i]]) {
        const std::uint64_t lo = ax.head_starts[k];
        const std::uint64_t hi = k + 1 < ax.head_starts.size() ? ax.head_starts[k + 1] - 1 : limits::num_heads;
        const auto m = (lo + g - 1) / g * g;
        if (m <= hi) {
          slot = static_cast<std::uint32_t>(m);
          break;
        }
      }
    }
  }
}

// Configurations (per component set, override and platform point) whose GQA group no head count of
// their num_heads class states: they are compared with the group unstated, and the report says how many.
inline std::size_t unrealised_queries(const diff_axes& ax) {
  std::size_t calls = 0;
  for (std::size_t i = 0; i < ax.num_heads.size(); ++i)
    for (std::size_t j = 0; j < ax.groups.size(); ++j)
      if (ax.head_class[i] != UINT32_MAX && ax.realised[i * ax.groups.size() + j] == 0)
        calls = saturating_sum(calls, ax.calls.with_group(ax.groups[j]));
  return saturating_product({ax.head_sizes.size(), ax.dtypes.size(), ax.kv_cache_dtypes.size(), ax.block_sizes.size(),
                             ax.attn_types.size(), ax.features.size(), calls});
}

// How many queries for_each_query(ax) builds, computed from the axes alone.
inline std::size_t query_count(const diff_axes& ax) {
  return saturating_product({ax.head_sizes.size(), ax.dtypes.size(), ax.kv_cache_dtypes.size(), ax.block_sizes.size(),
                             ax.attn_types.size(), ax.features.size(), ax.num_heads.size(), ax.calls.size()});
}

inline std::string query_sizes_text(const diff_axes& ax) {
  return "head sizes " + with_commas(ax.head_sizes.size()) + " x dtypes " + with_commas(ax.dtypes.size()) +
         " x kv cache dtypes " + with_commas(ax.kv_cache_dtypes.size()) + " x block sizes " +
         with_commas(ax.block_sizes.size()) + " x attention types " + with_commas(ax.attn_types.size()) +
         " x features " + with_commas(ax.features.size()) + " x num_heads " + with_commas(ax.num_heads.size()) +
         " x calls " + with_commas(ax.calls.size()) + " (" + ax.calls.sizes_text() + ")";
}

// Each query of the axes, in enumeration order, built as it is visited: a block's queries are never
// all held unless the caller keeps them. Needs realise_groups(ax) first.
template <class F>
void for_each_query(const diff_axes& ax, attention_domain d, attention_mode m, F&& f) {
  for (auto h : ax.head_sizes)
    for (auto dt : ax.dtypes)
      for (auto kv : ax.kv_cache_dtypes)
        for (auto bs : ax.block_sizes)
          for (auto at : ax.attn_types)
            for (const auto& feature : ax.features)
              for (std::size_t i = 0; i < ax.num_heads.size(); ++i) {
                const auto n = ax.num_heads[i];
                ax.calls.for_each([&](const call_point& c) {
                  query q;
                  q.domain = d;
                  q.mode = m;
                  q.head_size = h;
                  q.dtype = dt;
                  q.kv_cache_dtype = kv;
                  q.block_size = bs;
                  q.attn_type = at;
                  q.num_heads = n;
                  if (!feature.empty()) q.required.insert(feature);
                  q.phase = c.phase;
                  q.seq_len_q = c.seq_len_q;
                  q.seq_len_kv = c.seq_len_kv;
                  q.batch_size = c.batch_size;
                  if (c.gqa_group != 0 && n != 0) {
                    const auto j = static_cast<std::size_t>(
                        std::lower_bound(ax.groups.begin(), ax.groups.end(), c.gqa_group) - ax.groups.begin());
                    if (const auto r = ax.realised[i * ax.groups.size() + j]; r != 0) {
                      q.num_heads = r;
                      q.num_kv_heads = r / c.gqa_group;
                    }
                  }
                  f(std::move(q));
                });
              }
}

}  // namespace detail
ATTNSEL_END_NAMESPACE

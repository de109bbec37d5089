// SPDX-License-Identifier: Apache-2.0
// The field lists (field_list.hpp): every member of query, platform, capabilities, policy_rule and
// policy_entry is listed, and every consumer sees every listed field. A new member fails here until it
// is listed, set in tests/data/fields/every_field.json (capabilities and policy) and carried by each
// consumer: equality, JSON written and read back, diff, and (through the fixture) the code generator.
#include "catch.hpp"

#include <attnsel/all.hpp>
#include <attnsel/core/impl/decision_cache.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

using namespace attnsel;

// Named, not anonymous: `anything`'s conversion is declared only, and an optional member's converting
// constructor names it, which clang's -Wundefined-internal refuses for internal linkage.
namespace fields_test {

// Converts to any member type: `T{anything{}, ...}` with N arguments compiles while N is at most the
// number of T's members (a base class counts as one).
// An optional member takes it through optional's own converting constructor, so that the two
// conversions are not a choice (-Wconversion).
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
struct anything {
  template <class T, std::enable_if_t<!is_optional<T>::value, int> = 0>
  operator T() const;  // NOLINT(google-explicit-constructor): declared only, for unevaluated braces
};

template <class T, class Indices, class = void>
struct takes_braces : std::false_type {};
template <class T, std::size_t... I>
struct takes_braces<T, std::index_sequence<I...>,
                    std::void_t<decltype(T{(static_cast<void>(I), fields_test::anything{})...})>> : std::true_type {};

}  // namespace fields_test

namespace {

// The number of members of the aggregate T (up to 64).
template <class T, std::size_t N = 0>
constexpr std::size_t member_count() {
  if constexpr (N < 64 && fields_test::takes_braces<T, std::make_index_sequence<N + 1>>::value)
    return member_count<T, N + 1>();
  else
    return N;
}

template <class T>
std::vector<std::string> names_of(const T& value) {
  std::vector<std::string> out;
  for_each_field(value, [&out](std::string_view name, const auto&...) { out.emplace_back(name); });
  return out;
}

// A valid query value other than `v`, of v's kind.
std::uint32_t other(std::uint32_t v) { return v == 0 ? 8 : v / 2; }
feature_set other(const feature_set& v) { return v.empty() ? feature_set{"sinks"} : feature_set{}; }
template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
E other(E v) {
  for (const E e : enum_values<E>())
    if (e != v) return e;
  return v;
}

// The fixture: every_field.json, which the code generator's test also compiles, and its measured rule,
// an overlay (built-in catalogs, and so the generator, hold no measured rules).
catalog every_field() {
  const std::string dir = std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/fields/";
  auto c = read_catalog_file(dir + "every_field.json");
  merge_catalog_file(c.registry, dir + "measured_rule.json");
  return c;
}

// `c` with its registry rebuilt after `edit` changed the backends and rules.
catalog rebuilt(const catalog& c, const std::function<void(std::vector<backend_descriptor>&, priority_policy&)>& edit) {
  auto backends = c.registry.backends();
  auto policy = c.registry.policy();
  edit(backends, policy);
  catalog out{c.info, registry{}};
  for (auto& b : backends) out.registry.add(std::move(b));
  out.registry.set_policy(std::move(policy));
  out.registry.set_implications(c.registry.implications());
  return out;
}

// Which fields of `value` differ from a default-constructed T.
template <class T>
std::vector<std::string> set_fields(const T& value) {
  std::vector<std::string> out;
  for_each_field(value, T{}, [&out](std::string_view name, const auto& mine, const auto& fresh) {
    if (!(mine == fresh)) out.emplace_back(name);
  });
  return out;
}

// `value` with field `field` taken from `donor`.
template <class T>
T with_field(T value, std::string_view field, const T& donor) {
  for_each_field(value, donor, [&](std::string_view name, auto& mine, const auto& from) {
    if (name == field) mine = from;
  });
  return value;
}

// A small catalog for asking diff about one field: the fixture's three plain backends (FALLBACK,
// FALLBACK_MLA, PICK), then `subjects`, under `rules`. The whole fixture spans millions of
// configurations; one field alone spans a few thousand.
catalog with_plain(const catalog& fixture, const std::vector<backend_descriptor>& subjects,
                   std::vector<policy_rule> rules) {
  catalog out{fixture.info, registry{}};
  for (const char* name : {"FALLBACK", "FALLBACK_MLA", "PICK"}) out.registry.add(*fixture.registry.find(name));
  for (const auto& b : subjects) out.registry.add(b);
  out.registry.set_policy(priority_policy{std::move(rules)});
  return out;
}

bool diff_sees(const catalog& a, const catalog& b) {
  diff_options options;
  options.max_examples = 0;
  return !diff_catalogs(a, b, options).empty();
}

using edit_fn = std::function<void(std::vector<backend_descriptor>&, priority_policy&, const std::string&)>;
using alone_fn = std::function<catalog(const std::string&, bool)>;

// Checks every field set in one place of the fixture (a capability set, a rule or an entry), reset
// alone: equality, the JSON text and the JSON read back all see it on the whole fixture, and diff sees
// the field alone (`alone(field, set)`: a small catalog holding the field as the fixture sets it, or
// as the reset leaves it). A reset the registry refuses (a rule's vendor with gfx targets) is skipped;
// the field must then be checked in another place (`checked` counts the places).
struct reset_check {
  const catalog& base;
  std::vector<std::string> decision_free;  // fields diff cannot see: they decide no backend
  std::map<std::string, int> checked;

  void run(const std::string& where, const std::vector<std::string>& fields, const edit_fn& reset_one,
           const alone_fn& alone) {
    const auto text = json_text(to_json(base));
    for (const auto& field : fields) {
      INFO(where << " field " << field);
      catalog changed;
      try {
        changed = rebuilt(base, [&](auto& backends, auto& policy) { reset_one(backends, policy, field); });
      } catch (const registry_error&) {
        continue;
      }
      if (changed.registry == base.registry) continue;  // the donor holds the fixture's value
      ++checked[field];
      const auto written = to_json(changed);
      CHECK(json_text(written) != text);
      CHECK(parse_catalog(written).registry == changed.registry);
      const bool decides = std::find(decision_free.begin(), decision_free.end(), field) == decision_free.end();
      CHECK(diff_sees(alone(field, true), alone(field, false)) == decides);
    }
  }
};

}  // namespace

TEST_CASE("every member of each value type is in its field list", "[fields]") {
  CHECK(names_of(query{}).size() == member_count<query>());
  CHECK(names_of(capabilities{}).size() == member_count<capabilities>());
  CHECK(names_of(policy_entry{}).size() == member_count<policy_entry>());
  // policy_rule's first member, for brace counting, is its arch_filter base.
  CHECK(names_of(policy_rule{}).size() == member_count<policy_rule>() - 1 + member_count<arch_filter>());
  CHECK(names_of(platform{}).size() == member_count<platform::fields>());
  CHECK(names_of(call_condition{}).size() == member_count<call_condition>());
  // The lists are the readers' keys: the catalog reader refuses a key no list names.
  CHECK_THROWS_WITH(parse_catalog_text(R"({"format": "attnsel-catalog", "version": 1, "name": "x", "backends": [
      {"name": "A", "domains": ["decoder"], "colour": "red"}], "policies": []})"),
                    ATTNSEL_CONTAINS("unknown key \"colour\"") && ATTNSEL_CONTAINS("call_rules"));
}

TEST_CASE("the query's field list covers every consumer", "[fields][query]") {
  const auto names = names_of(query{});
  // Every listed field, changed alone to another valid value, is seen by each consumer: equality, the
  // text form, JSON both ways, and the bound selector's cache key. (Python checks its Query table
  // against this list when the module loads.)
  for (std::size_t i = 0; i < names.size(); ++i) {
    query changed;
    std::size_t at = 0;
    for_each_field(changed, [&](std::string_view, auto& member) {
      if (at++ == i) member = other(member);
    });
    INFO("field " << names[i] << ": " << to_string(changed));
    REQUIRE(is_valid(changed));
    CHECK_FALSE(changed == query{});
    CHECK(to_string(changed) != to_string(query{}));
    CHECK(query_from_json(to_json(changed)) == changed);
    CHECK(to_json(changed) != to_json(query{}));
    // The cache key (features by identity here: a vocabulary of no names would refuse this test's own).
    const detail::feature_vocabulary identity;
    std::uint64_t features = 0;
    REQUIRE(identity.word_of(changed.required, features));
    CHECK(detail::key_of(changed, features).words != detail::key_of(query{}, 0).words);
  }
}

TEST_CASE("a query's text and its range checks come from the field list", "[fields][query]") {
  // Each field changed alone is named in the text (the domain leads it); each count with a bound is
  // valid at its bound and refused one above it, the message naming the field as the list does.
  const query plain;
  CHECK(to_string(plain).rfind("decoder attention (head_size=128, dtype=bfloat16", 0) == 0);
  // How the text shows one value: a count in decimal, an enumerator by name, the feature names.
  const auto shown = [](const auto& value) -> std::string {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, std::uint32_t>)
      return std::to_string(value);
    else if constexpr (std::is_enum_v<T>)
      return std::string(to_string(value));
    else
      return value.empty() ? "none" : *value.begin();
  };
  field_list<query>::members([&](const query_field& field, auto m) {
    constexpr auto member = decltype(m)::value;
    INFO("field " << field.name);
    query changed;
    changed.*member = other(changed.*member);
    const auto text = to_string(changed);
    if (field.name == "domain")
      CHECK(text.rfind(std::string(to_string(changed.domain)) + " attention (", 0) == 0);
    else
      CHECK(text.find(std::string(field.name) + "=" + shown(changed.*member)) != std::string::npos);
    if constexpr (std::is_same_v<std::remove_reference_t<decltype(changed.*member)>, std::uint32_t>) {
      if (field.max == 0) return;
      query at_bound;
      at_bound.*member = field.max;
      CHECK(is_valid(at_bound));
      query above = at_bound;
      above.*member = field.max + 1;
      REQUIRE_FALSE(is_valid(above));
      CHECK(validation_message(above) == std::string(field.name) + " " + std::to_string(field.max + 1) +
                                             " is outside [" + (field.unstated.empty() ? "1" : "0") + ", " +
                                             std::to_string(field.max) + "]");
      // A count with no unstated meaning starts at 1.
      query zero;
      zero.*member = 0;
      CHECK(is_valid(zero) == !field.unstated.empty());
    }
  });
}

TEST_CASE("the fixture sets every capability, rule and entry field", "[fields]") {
  // tests/data/fields/every_field.json (with its measured rule) is the one catalog that sets each
  // field somewhere; the code generator's test (catalog_codegen_odd_names) compiles it to tables and
  // compares them with its reading, so a field the generator leaves out fails there.
  const auto c = every_field();
  std::map<std::string, int> caps_set;
  std::map<std::string, int> rules_set;
  std::map<std::string, int> entries_set;
  for (const auto& b : c.registry.backends()) {
    for (const auto& f : set_fields(b.caps)) ++caps_set[f];
    for (const auto& v : b.variants)
      for (const auto& f : set_fields(v)) ++caps_set[f];
  }
  for (const auto& r : c.registry.policy().rules) {
    for (const auto& f : set_fields(r)) ++rules_set[f];
    for (const auto& e : r.order)
      for (const auto& f : set_fields(e)) ++entries_set[f];
  }
  for (const auto& name : names_of(capabilities{})) CHECK(caps_set.count(name) == 1);
  for (const auto& name : names_of(policy_rule{})) CHECK(rules_set.count(name) == 1);
  for (const auto& name : names_of(policy_entry{})) CHECK(entries_set.count(name) == 1);
}

TEST_CASE("the capability field list covers every consumer", "[fields][capabilities]") {
  const auto base = every_field();
  // A variant's name and the preferred block size decide no backend (the block size is the answer's).
  // diff compares queries whose value head size is their head size, so it cannot see value head sizes
  // (diff.hpp says so).
  reset_check check{base, {"variant", "preferred_block_size", "value_head_sizes"}, {}};
  capabilities donor;
  donor.variant = "RENAMED";  // a variant needs a name
  const auto& backends = base.registry.backends();
  for (std::size_t b = 0; b < backends.size(); ++b) {
    // The plain backends (FALLBACK, FALLBACK_MLA, PICK) are the rules' material; the subjects are
    // FIXTURE_ATTN and FIXTURE_VARIANTS.
    if (backends[b].name.rfind("FIXTURE_", 0) != 0) continue;
    // A backend with variants answers with them: its own capabilities are their defaults only.
    const std::size_t first = backends[b].variants.empty() ? 0 : 1;
    for (std::size_t v = first; v <= backends[b].variants.size(); ++v) {
      const auto& source = v == 0 ? backends[b].caps : backends[b].variants[v - 1];
      // The field alone: a backend serving both domains whose capabilities (or one variant) are the
      // defaults but for this field.
      const auto alone = [&, v](const std::string& field, bool set) {
        backend_descriptor subject;
        subject.name = "SUBJECT";
        subject.domains = {attention_domain::decoder, attention_domain::encoder};
        const capabilities plain = v == 0 ? capabilities{} : donor;
        const capabilities caps = set ? with_field(plain, field, source) : plain;
        if (v == 0)
          subject.caps = caps;
        else
          subject.variants = {caps};
        return with_plain(base, {subject}, {});
      };
      check.run(
          backends[b].name + (v ? " variant " + std::to_string(v) : ""), set_fields(source),
          [&, b, v](std::vector<backend_descriptor>& list, priority_policy&, const std::string& field) {
            auto& caps = v == 0 ? list[b].caps : list[b].variants[v - 1];
            caps = with_field(caps, field, donor);
          },
          alone);
    }
  }
  for (const auto& name : names_of(capabilities{})) {
    INFO("field " << name);
    CHECK(check.checked[name] > 0);
  }
}

TEST_CASE("a capability row names a count of the query, or none", "[fields][capabilities]") {
  // capability_field::query_field says which query count a field's numbers are candidate values of in
  // `attnsel diff`; a name that is no count of the query (an enum the diff enumerates whole, or a typo)
  // would leave the field's numbers out of every diff without a word.
  std::map<std::string, std::uint32_t> counts;  // the query's fields by name, with their bound
  field_list<query>::members([&](const query_field& f, auto) { counts[std::string(f.name)] = f.max; });
  std::size_t named = 0;
  field_list<capabilities>::members([&](const capability_field& f, auto) {
    if (f.query_field.empty()) return;
    INFO("capability field " << f.name << " names " << f.query_field);
    const auto it = counts.find(std::string(f.query_field));
    REQUIRE(it != counts.end());
    CHECK(it->second > 0);
    ++named;
  });
  CHECK(named >= 2);  // head sizes and block sizes at least
}

TEST_CASE("the catalog writer takes a backend's keys from the capability field list", "[fields][capabilities]") {
  // The keys a backend is written with: its own (name, domains) and each listed field of the catalog's
  // format, a shape as its fields' keys. A field added to the list with a type that has a codec is
  // written and read back with no edit of the writer or the reader.
  const auto expected_keys = [](int version) {
    std::set<std::string> keys{"name", "domains"};
    field_list<capabilities>::members([&](const capability_field& f, auto) {
      if (f.own_key || f.since > version) return;
      if (f.name == "shape") {
        for (const shape_field sf : shape_fields) keys.insert(std::string(to_string(sf)));
      } else {
        keys.insert(std::string(f.name));
      }
    });
    return keys;
  };
  const auto written_keys = [](const catalog& c) {
    const auto j = to_json(c);
    std::set<std::string> keys;
    for (const auto& item : j.at("backends").at(0).items()) keys.insert(item.key());
    return std::make_pair(j.at("version").get<int>(), keys);
  };
  backend_descriptor b;
  b.name = "PLAIN";
  b.domains = {attention_domain::decoder};
  catalog one{catalog_info{}, registry{}};
  one.info.name = "fields";
  one.registry.add(b);
  const auto [v1, keys1] = written_keys(one);
  CHECK(v1 == 1);
  CHECK(keys1 == expected_keys(1));
  CHECK(keys1 != expected_keys(2));
  // A format-2 field makes the catalog version 2, and every format-2 key is written.
  b.caps.shape[shape_field::batch_size] = count_range{1, 64};
  catalog two{one.info, registry{}};
  two.registry.add(b);
  const auto [v2, keys2] = written_keys(two);
  CHECK(v2 == 2);
  CHECK(keys2 == expected_keys(2));
  // What is written reads back as it was, field by field.
  const auto back = parse_catalog_text(to_json(two).dump());
  CHECK(back.registry.backends().at(0).caps == b.caps);
}

TEST_CASE("the policy rule and entry field lists cover every consumer", "[fields][policy]") {
  const auto base = every_field();
  reset_check rules{base, {"note"}, {}};
  reset_check entries{base, {}, {}};
  policy_entry donor;
  donor.backend = "FALLBACK";  // an entry names a backend
  policy_rule rule_donor;
  rule_donor.order = {donor};  // a rule orders at least one backend
  policy_entry pick;
  pick.backend = "PICK";
  policy_entry fallback_mla;
  fallback_mla.backend = "FALLBACK_MLA";
  const auto& policy = base.registry.policy();
  for (std::size_t r = 0; r < policy.rules.size(); ++r) {
    const auto& fixture_rule = policy.rules[r];
    // The field alone: a rule of the fixture rule's domain and vendor ordering PICK, with the field as
    // the fixture sets it or as the donor leaves it.
    const auto alone_rule = [&](const std::string& field, bool set) {
      policy_rule rule = rule_donor;
      rule.domain = fixture_rule.domain;
      rule.vendor = fixture_rule.vendor;
      rule.order = {pick};
      return with_plain(base, {}, {with_field(rule, field, set ? fixture_rule : rule_donor)});
    };
    const auto where = "rule " + std::to_string(r);
    rules.run(
        where, set_fields(fixture_rule),
        [&, r](std::vector<backend_descriptor>&, priority_policy& p, const std::string& field) {
          p.rules[r] = with_field(p.rules[r], field, rule_donor);
        },
        alone_rule);
    for (std::size_t e = 0; e < fixture_rule.order.size(); ++e) {
      // The field alone: a rule of the fixture rule's domain and vendor ordering PICK, then
      // FALLBACK_MLA, with the entry's field as the fixture sets it or as the donor leaves it.
      const auto alone_entry = [&, e](const std::string& field, bool set) {
        policy_rule rule;
        rule.domain = fixture_rule.domain;
        rule.vendor = fixture_rule.vendor;
        rule.order = {with_field(pick, field, set ? fixture_rule.order[e] : donor), fallback_mla};
        return with_plain(base, {}, {rule});
      };
      entries.run(
          where + " entry " + std::to_string(e), set_fields(fixture_rule.order[e]),
          [&, r, e](std::vector<backend_descriptor>&, priority_policy& p, const std::string& field) {
            p.rules[r].order[e] = with_field(p.rules[r].order[e], field, donor);
          },
          alone_entry);
    }
  }
  for (const auto& name : names_of(policy_rule{})) {
    INFO("rule field " << name);
    CHECK(rules.checked[name] > 0);
  }
  for (const auto& name : names_of(policy_entry{})) {
    INFO("entry field " << name);
    CHECK(entries.checked[name] > 0);
  }
}

TEST_CASE("a call condition's field list drives its equality, writer and reader", "[fields][shape]") {
  // One backend whose call rule's `when` sets every field of the list (`never` stands alone, in a
  // `require`). Each field copied alone into an empty condition is seen by equality, written under its
  // own key(s), and read back equal.
  const auto text = [](const std::string& when, const std::string& require) {
    return R"({"format": "attnsel-catalog", "version": 2, "name": "conditions", "backends": [
        {"name": "A", "domains": ["decoder"], "features": ["alibi", "sinks"], "call_rules": [{"when": )" +
           when + R"(, "require": )" + require + R"(}]}], "policies": []})";
  };
  const auto full = parse_catalog_text(text(R"({"phases": ["decode"], "dtypes": ["float16"], "attn_types": ["decoder"],
      "features": ["alibi"], "without_features": ["sinks"], "seq_len_q": {"min": 1, "max": 4}, "equal_seq_lens": true,
      "head_sizes": [64], "value_head_sizes": [64], "components": [{"component": "lib", "min_version": "1.0"}]})",
                                            R"({"never": true})"));
  const auto& rule = full.registry.find("A")->caps.call_rules.at(0);
  std::vector<std::string> seen;
  for (const auto& field : names_of(call_condition{})) {
    INFO("condition field " << field);
    const bool in_require = field == "never";
    const auto& donor = in_require ? rule.require : rule.when;
    const auto alone = with_field(call_condition{}, field, donor);
    REQUIRE_FALSE(alone == call_condition{});
    auto b = *full.registry.find("A");
    b.caps.call_rules.at(0).when = in_require ? call_condition{} : alone;
    b.caps.call_rules.at(0).require = in_require ? alone : rule.require;
    catalog one{full.info, registry{}};
    one.registry.add(b);
    const auto written = to_json(one);
    const auto& cond = written.at("backends").at(0).at("call_rules").at(0).at(in_require ? "require" : "when");
    CHECK(cond.size() == 1);  // the field alone, under its key (a shape range under its field's key)
    for (auto it = cond.begin(); it != cond.end(); ++it) seen.push_back(it.key());
    CHECK(parse_catalog(written).registry == one.registry);
  }
  CHECK(seen.size() == names_of(call_condition{}).size());
}

TEST_CASE("a catalog whose one format-2 key is a rule's attn_types is written as version 2 and reads back",
          "[fields][policy]") {
  const auto c = parse_catalog_text(R"({"format": "attnsel-catalog", "version": 2, "name": "typed",
    "backends": [{"name": "A", "domains": ["decoder"], "attn_types": ["decoder", "encoder_only"],
                  "platforms": [{"vendor": "cuda"}]},
                 {"name": "B", "domains": ["decoder"], "attn_types": ["decoder", "encoder_only"],
                  "platforms": [{"vendor": "cuda"}]}],
    "policies": [{"domain": "decoder", "vendor": "cuda", "attn_types": ["encoder_only"], "order": ["B", "A"]}]})",
                                    "typed.json");
  const auto written = to_json(c);
  CHECK(written.at("version") == 2);
  const auto again = parse_catalog_text(written.dump(), "again.json");
  REQUIRE(again.registry.policy().rules.size() == 1);
  CHECK(again.registry.policy().rules[0] == c.registry.policy().rules[0]);
  query q;
  q.head_size = 128;
  CHECK(select(again.registry, q, platform::cuda(9, 0))->name() == "A");
  q.attn_type = attention_type::encoder_only;
  CHECK(select(again.registry, q, platform::cuda(9, 0))->name() == "B");
}

TEST_CASE("the platform's field list covers every consumer", "[fields][platform]") {
  // One row per listed field: a platform and the same platform with that field changed.
  auto h200 =
      platform::cuda(9, 0).add_component("torch", parse_component_version("2.11")).set_device_name("NVIDIA H200");
  auto mi300 = platform::rocm("gfx942").add_component("aiter");
  std::map<std::string, std::pair<platform, platform>> rows;
  rows["vendor"] = {platform::cpu().add_component("torch"), platform::xpu().add_component("torch")};
  rows["capability"] = {h200, platform(h200).set_capability({10, 0})};
  rows["gfx"] = {mi300, platform(mi300).set_gfx(*parse_gfx_arch("gfx950"))};
  rows["components"] = {h200, platform(h200).add_component("flashinfer")};
  rows["device_name"] = {h200, platform(h200).set_device_name("NVIDIA H100")};
  const auto names = names_of(platform{});
  CHECK(names.size() == rows.size());
  for (const auto& name : names) {
    INFO("field " << name);
    REQUIRE(rows.count(name) == 1);
    const auto& [a, b] = rows.at(name);
    CHECK_FALSE(a == b);
    CHECK(to_json(a) != to_json(b));
    CHECK(platform_from_json(to_json(b)) == b);
    // The field reaches the field list's visitor: a and b differ in it and in no other field.
    std::vector<std::string> differing;
    for_each_field(a, b, [&](std::string_view field, const auto& x, const auto& y) {
      if (!(x == y)) differing.emplace_back(field);
    });
    CHECK(differing == std::vector<std::string>{name});
  }
}

// The bound selector skips the query half of a rule or an entry that states no query condition:
// reads_query must be set by each field of that half and by no other, and false must mean "holds
// for every query".
TEST_CASE("reads_query: set by each query-half field alone, and false only where every query matches",
          "[fields][policy]") {
  const auto c = every_field();
  const std::set<std::string> rule_query_half{
      "modes",    "attn_types",       "min_num_heads", "max_num_heads", "kv_cache_dtypes", "dtypes", "head_sizes",
      "features", "without_features", "phases",        "shape"};
  const std::set<std::string> entry_query_half{"unless_features", "phases", "shape"};
  // Queries that each state one field otherwise, so a condition on any of them fails for one.
  std::vector<query> queries(1);
  queries[0].head_size = 128;
  const auto vary = [&](auto&& edit) {
    query q = queries[0];
    edit(q);
    queries.push_back(q);
  };
  vary([](query& q) { q.mode = attention_mode::mla; });
  vary([](query& q) { q.attn_type = attention_type::encoder_only; });
  vary([](query& q) { q.dtype = data_type::float32; });
  vary([](query& q) { q.kv_cache_dtype = cache_dtype::fp8; });
  vary([](query& q) { q.head_size = 576; });
  vary([](query& q) { q.num_heads = 1; });
  vary([](query& q) { q.num_heads = 4096; });
  vary([](query& q) { q.phase = attention_phase::decode; });
  vary([](query& q) { q.phase = attention_phase::prefill; });
  vary([](query& q) {
    q.seq_len_q = 1;
    q.seq_len_kv = 1;
    q.batch_size = 1;
  });
  for (const auto& r : c.registry.policy().rules) {
    for (const auto& field : set_fields(r)) {
      INFO("rule field " << field);
      policy_rule alone;
      alone.domain = r.domain;
      alone.vendor = r.vendor;
      alone = with_field(alone, field, r);
      CHECK(alone.reads_query() == (rule_query_half.count(field) == 1));
      if (!alone.reads_query())
        for (const auto& q : queries) CHECK(alone.matches_query(q));
    }
    for (const auto& e : r.order) {
      for (const auto& field : set_fields(e)) {
        INFO("entry field " << field);
        const auto alone = with_field(policy_entry{}, field, e);
        CHECK(alone.reads_query() == (entry_query_half.count(field) == 1));
        if (!alone.reads_query())
          for (const auto& q : queries) CHECK(alone.enabled_for(q));
      }
    }
  }
  // Each query-half field is set somewhere in the fixture, so each was checked above.
  std::set<std::string> seen_rule;
  std::set<std::string> seen_entry;
  for (const auto& r : c.registry.policy().rules) {
    for (const auto& f : set_fields(r)) seen_rule.insert(f);
    for (const auto& e : r.order)
      for (const auto& f : set_fields(e)) seen_entry.insert(f);
  }
  for (const auto& f : rule_query_half) CHECK(seen_rule.count(f) == 1);
  for (const auto& f : entry_query_half) CHECK(seen_entry.count(f) == 1);
}

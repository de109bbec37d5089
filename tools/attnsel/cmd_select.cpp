// SPDX-License-Identifier: Apache-2.0
// The select and explain subcommands: build the inputs, run the selector, print name, table or JSON.
#include "catalog_source.hpp"
#include "commands.hpp"
#include "detect.hpp"
#include "errors.hpp"
#include "explain_table.hpp"
#include "inputs.hpp"
#include "override_source.hpp"
#include "terminal.hpp"
#include "validators.hpp"

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/report.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/override.hpp>
#include <attnsel/core/select.hpp>
#include <attnsel/model/model_plan.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnsel_cli {

namespace {

// A warning advisory on the chosen backend: the engine runs it, and the person should know why not to.
void print_advisory(const attnsel::advisory& a) {
  print_diagnostic("warning", "advisory " + attnsel::printable(a.id, 80) + ": " + attnsel::printable(a.message, 400) +
                                  (a.upstream.empty() ? "" : " (" + attnsel::printable(a.upstream.front(), 200) + ")") +
                                  "; --refuse-advisories refuses it");
}

constexpr const char* select_footer = R"(Examples:
  attnsel select --platform rocm --arch gfx942
  attnsel select --platform cuda --arch sm_90 --head-size 64 --dtype fp16 --kv-cache-dtype fp8
  attnsel select --platform rocm --arch gfx942 --domain encoder --backend TORCH_SDPA
  attnsel select --platform cuda --arch 10.0 --mla --backend FLASHMLA,auto --json
  ATTNSEL_BACKEND=TRITON_ATTN attnsel select --platform cuda --arch 9.0

Override: --backend wins over the domain's variable: $ATTNSEL_BACKEND (decoder),
$ATTNSEL_ENCODER_BACKEND (encoder), $ATTNSEL_DRAFTER_BACKEND (drafter; else the decoder's),
$ATTNSEL_LINEAR_BACKEND (linear).
Exit status: 0 selected, 1 selection failed (message on stderr), 2 usage error.)";

constexpr const char* explain_footer = R"(Examples:
  attnsel explain --platform rocm --arch gfx942 --feature sinks
  attnsel explain --platform cuda --arch 9.0 --backend FLASHINFER --json
  attnsel explain --platform cpu --domain encoder

Exit status: 0 selected, 1 selection failed (message on stderr), 2 usage error.)";

// `select` and `explain` take the same flags; only the output differs.
command setup_selection(CLI::App& app, const char* name, const char* description, const char* footer,
                        int (*run)(const select_flags&)) {
  const bool plan = std::string_view(name) == "plan";
  return make_command<select_flags>(app, name, description, footer, run, [plan](CLI::App& cli, select_flags& flags) {
    add_platform_flags(cli, flags.platform);
    add_query_flags(cli, flags.query);
    add_catalog_flags(cli, flags.catalog);
    // Bound through a function so that `--backend ""` (an explicit `auto`) still counts as given.
    // `--attention-backend` is vLLM's and SGLang's spelling of the same override.
    cli.add_option_function<std::string>(
           "--backend,--attention-backend",
           [&flags](const std::string& spec) {
             flags.backend = spec;
             flags.backend_given = true;
           },
           "Override of the query's domain: NAME, auto, A,B, A,auto or -NAME,auto (default: $ATTNSEL_BACKEND "
           "for the decoder, $ATTNSEL_ENCODER_BACKEND, $ATTNSEL_DRAFTER_BACKEND (else the decoder's) and "
           "$ATTNSEL_LINEAR_BACKEND for the other domains)")
        ->type_name("SPEC");
    // A phase's override: unset, the phase inherits its domain's (CLI11 keeps the text in `target`).
    const auto phase_option = [&cli](const char* flag, std::optional<std::string>& target, const char* layers,
                                     const char* phase, const char* variable, const char* inherited) {
      cli.add_option_function<std::string>(
             flag, [&target](const std::string& spec) { target = spec; },
             std::string("Override for ") + layers + " in the " + phase + " phase (default: $" + variable + ", else " +
                 inherited + ")")
          ->type_name("SPEC");
    };
    phase_option("--prefill-backend", flags.prefill_backend, "decoder calls", "prefill", "ATTNSEL_PREFILL_BACKEND",
                 "the decoder override");
    phase_option("--decode-backend", flags.decode_backend, "decoder calls", "decode", "ATTNSEL_DECODE_BACKEND",
                 "the decoder override");
    phase_option("--linear-prefill-backend", flags.linear_prefill_backend, "linear-attention layers", "prefill",
                 "ATTNSEL_LINEAR_PREFILL_BACKEND", "the linear override; SGLang's --linear-attn-prefill-backend");
    phase_option("--linear-decode-backend", flags.linear_decode_backend, "linear-attention layers", "decode",
                 "ATTNSEL_LINEAR_DECODE_BACKEND", "the linear override; SGLang's --linear-attn-decode-backend");
    if (plan)
      cli.add_option("--backend-per-kind", flags.backend_per_kind,
                     "With --model-config: the override of one kind of layer, KIND=SPEC (KIND: full, sliding, "
                     "chunked, linear, cross, encoder), in place of its domain's; repeat for more kinds (vLLM's "
                     "attention_config.backend_per_kind)")
          ->type_name("KIND=SPEC")
          ->allow_extra_args(false);
    if (plan)
      cli.add_flag("--no-prefix-caching", flags.no_prefix_caching,
                   "With --model-config: the engine runs without prefix caching (vLLM's "
                   "--no-enable-prefix-caching), which a hybrid model's KV-cache block size depends on");
    cli.add_flag("--prefer", flags.prefer, "When every forced backend is rejected, fall back to automatic selection");
    cli.add_flag("--refuse-advisories", flags.refuse_advisories,
                 "Refuse a backend that a catalog advisory (a known-bad combination) warns about, as if demoted");
    cli.add_flag("--json", flags.json, "Print one JSON report on stdout");
  });
}

constexpr const char* plan_footer = R"(Examples:
  attnsel plan --catalog sglang --platform cuda --arch 9.0 --head-size 128
  attnsel plan --platform cuda --arch 9.0 --prefill-backend FLASH_ATTN --decode-backend FLASHINFER --json

Each phase reads its own override (--prefill-backend / --decode-backend, or $ATTNSEL_PREFILL_BACKEND /
$ATTNSEL_DECODE_BACKEND); an unset one inherits --backend / $ATTNSEL_BACKEND. A hybrid model's linear
layers read --linear-prefill-backend / --linear-decode-backend (or $ATTNSEL_LINEAR_PREFILL_BACKEND /
$ATTNSEL_LINEAR_DECODE_BACKEND), else $ATTNSEL_LINEAR_BACKEND.
Exit status: 0 both phases selected and they share one KV cache, 1 otherwise, 2 usage error.)";

int run_select_only(const select_flags& flags) { return run_select(flags, false); }
int run_plan(const select_flags& flags);
int run_explain(const select_flags& flags) { return run_select(flags, true); }

void print_error(const attnsel::selection_error& e, const chosen_override* ovr = nullptr) {
  std::string message = std::string(attnsel::to_string(e.code)) + ": " + e.message;
  // An override from the environment is easy to forget: name the variable when it is what failed.
  const bool about_override = e.code == attnsel::error_code::unknown_backend ||
                              e.code == attnsel::error_code::backend_rejected ||
                              e.code == attnsel::error_code::bad_override;
  if (ovr != nullptr && about_override && ovr->source == attnsel::override_source::env)
    message += " (the override came from " + ovr->origin + "='" + attnsel::printable(ovr->spec) +
               "'; unset it, or give --backend auto)";
  print_diagnostic("error", message);
}

// The query (from flags or --model-config) and the catalog. With --json, which promises exactly one JSON
// object on stdout, failures included, a config or catalog that cannot be read is printed as one
// (error.code "model_config" or "catalog") before the error goes on to set the exit status.
std::pair<attnsel::query, attnsel::catalog> load_inputs(const select_flags& flags, const attnsel::platform& p,
                                                        bool with_backend, attnsel::model_config* model = nullptr) {
  try {
    auto q = build_query(flags.query, p, model);
    return {std::move(q), load_catalog(flags.catalog)};
  } catch (const catalog_failure& e) {
    if (flags.json)
      print_catalog_error_json(e.what(), with_backend,
                               dynamic_cast<const config_failure*>(&e) != nullptr ? "model_config" : "catalog");
    throw;
  }
}

}  // namespace

command setup_select(CLI::App& app) {
  return setup_selection(app, "select", "Print the backend that would be selected", select_footer, run_select_only);
}

command setup_plan(CLI::App& app) {
  return setup_selection(app, "plan", "Print a decoder layer's prefill and decode backends and block size", plan_footer,
                         run_plan);
}

command setup_explain(CLI::App& app) {
  return setup_selection(app, "explain", "Show every candidate, its verdict and reasons, and the rule used",
                         explain_footer, run_explain);
}

int run_select(const select_flags& flags, bool explain_mode) {
  attnsel::detection_report detected;
  auto p = build_platform(flags.platform, &detected);
  auto [q, c] = load_inputs(flags, p, true);
  add_features(q, flags.query, c.registry);

  auto ovr = choose_override(flags.backend_given, flags.backend, q.domain);
  if (!ovr.note.empty()) print_diagnostic("note", ovr.note);
  // A decoder call in a stated phase reads that phase's override when one is given; so does a drafter
  // that inherits the decoder's.
  if ((q.domain == attnsel::attention_domain::decoder || ovr.inherited) &&
      q.phase != attnsel::attention_phase::unstated) {
    const auto& flag = q.phase == attnsel::attention_phase::prefill ? flags.prefill_backend : flags.decode_backend;
    if (auto phase_ovr = choose_phase_override(flag, q.phase)) ovr = std::move(*phase_ovr);
  } else if (q.domain == attnsel::attention_domain::linear && q.phase != attnsel::attention_phase::unstated) {
    const auto& flag =
        q.phase == attnsel::attention_phase::prefill ? flags.linear_prefill_backend : flags.linear_decode_backend;
    if (auto phase_ovr = choose_phase_override(flag, q.phase, q.domain)) ovr = std::move(*phase_ovr);
  }
  attnsel::select_options options;
  options.prefer = flags.prefer;
  options.refuse_advisories = flags.refuse_advisories;
  if (const auto stock = add_stock(flags.platform, c.info, p); !stock.line.empty())
    print_diagnostic("note", stock.line);

  if (!explain_mode && !flags.json) {
    const auto result = attnsel::select(c.registry, q, p, ovr.request(), options);
    if (!result) {
      print_error(result.error(), &ovr);
      return exit_failure;
    }
    if (result->fell_back && flags.prefer) {
      print_diagnostic("note", "--prefer: every forced backend was rejected; " + std::string(result->name()) +
                                   " was chosen automatically");
    } else if (result->fell_back) {
      // The catalog states an engine that substitutes its own choice (policy_rule::forced).
      std::string why;
      for (const auto& passed : result->fallback)
        for (const auto& r : passed.reasons) why += (why.empty() ? "" : "; ") + passed.name + ": " + r.message;
      print_diagnostic("note", "the engine passes over the forced backend here (" + attnsel::printable(why, 400) +
                                   "); it runs " + std::string(result->name()));
    }
    if (result->warning != nullptr) print_advisory(*result->warning);
    std::printf("%s\n", attnsel::printable(result->name(), 200).c_str());
    return exit_ok;
  }

  const auto ex = attnsel::explain(c.registry, q, p, ovr.request(), options);
  if (flags.json) {
    auto report = attnsel::to_json(ex, q, p, ovr.request());
    if (!detected.facts.empty()) report["detection"] = facts_json(detected);
    std::printf("%s\n", attnsel::json_text(report).c_str());
  } else {
    if (!detected.facts.empty())
      std::printf("detected (--no-detect turns this off; 'attnsel doctor' shows every probe):\n%s\n",
                  render_facts(detected, true).c_str());
    std::fputs(render_explanation(ex, q, p, ovr, style::for_fd(STDOUT_FILENO)).c_str(), stdout);
  }
  if (!ex.result.ok()) {
    std::fflush(stdout);
    print_error(ex.result.error(), &ovr);
    return exit_failure;
  }
  return exit_ok;
}

namespace {

// `plan --model-config`: every group of the model's text layers.
int print_model_plan(const attnsel::registry& reg, const attnsel::model_config& model, const attnsel::query& q,
                     const attnsel::platform& p, const attnsel::override_set& overrides,
                     const attnsel::select_options& options, const attnsel::model_plan_options& plan_options,
                     const stock_note& stock, bool json) {
  const auto plan = attnsel::plan_model(reg, model, q, p, overrides, options, plan_options);
  const std::size_t layer_count = std::max<std::size_t>(model.layers.size(), 1);
  if (json) {
    nlohmann::json report;
    report["model_type"] = model.model_type;
    report["num_layers"] = model.layers.empty() ? nlohmann::json(nullptr) : nlohmann::json(model.layers.size());
    report["groups"] = nlohmann::json::array();
    for (const auto& g : plan.groups) {
      nlohmann::json group;
      group["kind"] = std::string(attnsel::to_string(g.kind));
      group["part"] = std::string(attnsel::to_string(g.part));
      group["window"] = g.window ? nlohmann::json(g.window) : nlohmann::json(nullptr);
      group["layers"] = g.layers.empty() || (g.part == attnsel::model_part::text && model.layers.empty())
                            ? nlohmann::json(nullptr)
                            : nlohmann::json(g.layers);
      for (const auto* pq : {&g.plan.prefill_query, &g.plan.decode_query}) {
        const auto phase = pq == &g.plan.prefill_query ? "prefill" : "decode";
        if (g.kind == attnsel::layer_kind::encoder && pq == &g.plan.decode_query) {
          group[phase] = nullptr;  // a tower runs once per input: no decode step
          continue;
        }
        const auto& request = g.overrides.for_query(*pq);
        group[phase] = attnsel::to_json(attnsel::explain(reg, *pq, p, request, options), *pq, p, request);
      }
      group["block_size"] = g.plan.block_size ? nlohmann::json(g.plan.block_size) : nlohmann::json(nullptr);
      group["conflict"] = g.plan.conflict.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.plan.conflict);
      report["groups"].push_back(std::move(group));
    }
    report["block_size"] = plan.block_size ? nlohmann::json(plan.block_size) : nlohmann::json(nullptr);
    report["linear_state_bytes"] =
        plan.linear_state_bytes ? nlohmann::json(plan.linear_state_bytes) : nlohmann::json(nullptr);
    report["model_rule"] = plan.model_rule.empty() ? nlohmann::json(nullptr) : nlohmann::json(plan.model_rule);
    report["conflicts"] = plan.conflicts;
    report["assumptions"] = plan.assumptions;
    if (!stock.sentence.empty()) report["assumptions"].push_back(stock.sentence);
    report["notes"] = plan.notes;
    std::printf("%s\n", attnsel::json_text(report).c_str());
    std::fflush(stdout);
  } else {
    std::printf("%s: %zu layer%s in %zu group%s\n", model.model_type.empty() ? "model" : model.model_type.c_str(),
                layer_count, layer_count == 1 ? "" : "s", plan.groups.size(), plan.groups.size() == 1 ? "" : "s");
    for (const auto& g : plan.groups) {
      // A tower's group is named by its part: "vision encoder", "audio encoder".
      std::string head = g.part != attnsel::model_part::text ? std::string(attnsel::to_string(g.part)) + " " : "";
      head += attnsel::to_string(g.kind);
      if (g.window != 0) head += " " + std::to_string(g.window);
      if (!g.layers.empty() && (g.part != attnsel::model_part::text || !model.layers.empty()))
        head += " (" + std::to_string(g.layers.size()) + " layer" + (g.layers.size() == 1 ? "" : "s") + ": " +
                attnsel::layer_runs(g.layers) + ")";
      std::printf("%s\n", head.c_str());
      const bool tower = g.kind == attnsel::layer_kind::encoder;
      for (const auto* r : {&g.plan.prefill, &g.plan.decode}) {
        if (tower && r == &g.plan.decode) continue;
        const char* label = tower ? "encoder" : r == &g.plan.prefill ? "prefill" : "decode";
        if (r->ok()) {
          if (r->value().warning != nullptr) print_advisory(*r->value().warning);
          std::printf("  %s: %s\n", label, attnsel::printable(r->value().name(), 200).c_str());
        } else {
          std::printf("  %s: (none)\n", label);
        }
      }
    }
    if (plan.ok()) std::printf("block_size: %s\n", plan.block_size ? std::to_string(plan.block_size).c_str() : "any");
    for (const auto& a : plan.assumptions) print_diagnostic("note", "assumed: " + a);
    if (!stock.line.empty()) print_diagnostic("note", stock.line);
    for (const auto& n : plan.notes) print_diagnostic("note", n);
  }
  for (const auto& g : plan.groups) {
    if (!g.plan.prefill.ok()) print_error(g.plan.prefill.error());
    if (!g.plan.decode.ok() && g.kind != attnsel::layer_kind::encoder) print_error(g.plan.decode.error());
  }
  for (const auto& c : plan.conflicts) print_diagnostic("error", "kv_cache: " + c);
  return plan.ok() ? exit_ok : exit_failure;
}

int run_plan(const select_flags& flags) {
  auto p = build_platform(flags.platform, nullptr);
  attnsel::model_config model;
  auto [q, c] = load_inputs(flags, p, false, &model);
  if (q.domain != attnsel::attention_domain::decoder && q.domain != attnsel::attention_domain::drafter)
    throw usage_error("plan: the prefill/decode split is for the decoder and drafter domains (got --domain " +
                      std::string(attnsel::to_string(q.domain)) + ")");
  add_features(q, flags.query, c.registry);
  const auto base = choose_override(flags.backend_given, flags.backend, q.domain);
  if (!base.note.empty()) print_diagnostic("note", base.note);
  const auto prefill = choose_phase_override(flags.prefill_backend, attnsel::attention_phase::prefill);
  const auto decode = choose_phase_override(flags.decode_backend, attnsel::attention_phase::decode);
  attnsel::override_set overrides;
  if (q.domain == attnsel::attention_domain::drafter && !base.inherited) {
    overrides.drafter = base.request();  // the drafter's own: its phases read it too
    if (prefill || decode)
      print_diagnostic("note", "the drafter's own override (" + base.origin +
                                   ") serves both phases; --prefill-backend and --decode-backend are for the "
                                   "decoder and a drafter that inherits its override");
  } else
    overrides.decoder = base.request();
  if (prefill) overrides.prefill = prefill->request();
  if (decode) overrides.decode = decode->request();
  // A model plan's towers and linear layers read their domains' variables, as `select` does for them.
  const auto encoder = choose_override(false, std::string(), attnsel::attention_domain::encoder);
  const auto linear = choose_override(false, std::string(), attnsel::attention_domain::linear);
  overrides.encoder = encoder.request();
  overrides.linear = linear.request();
  const auto linear_prefill = choose_phase_override(flags.linear_prefill_backend, attnsel::attention_phase::prefill,
                                                    attnsel::attention_domain::linear);
  const auto linear_decode = choose_phase_override(flags.linear_decode_backend, attnsel::attention_phase::decode,
                                                   attnsel::attention_domain::linear);
  if (linear_prefill) overrides.linear_prefill = linear_prefill->request();
  if (linear_decode) overrides.linear_decode = linear_decode->request();
  attnsel::select_options options;
  options.prefer = flags.prefer;
  options.refuse_advisories = flags.refuse_advisories;
  // --backend-per-kind KIND=SPEC: each kind once, and only over a model's text part.
  attnsel::model_plan_options plan_options;
  plan_options.tensor_parallel = flags.query.tensor_parallel;
  plan_options.engine = &c.info;
  if (flags.no_prefix_caching && (flags.query.model_config.empty() || model.part != attnsel::model_part::text))
    throw usage_error("--no-prefix-caching: needs --model-config (the text part), whose hybrid block size it sets");
  if (flags.no_prefix_caching) plan_options.prefix_caching = false;
  auto& per_kind = plan_options.per_kind;
  for (const auto& entry : flags.backend_per_kind) {
    if (flags.query.model_config.empty() || model.part != attnsel::model_part::text)
      throw usage_error("--backend-per-kind: needs --model-config (the text part), whose layers it groups");
    const auto eq = entry.find('=');
    const auto kind = attnsel::parse_group_kind(std::string_view(entry).substr(0, eq));
    if (eq == std::string::npos || !kind)
      throw usage_error("--backend-per-kind: " + quoted_value(entry) + " is not KIND=SPEC with KIND one of " +
                        attnsel::group_kind_names());
    if (std::any_of(per_kind.begin(), per_kind.end(), [&](const attnsel::kind_override& k) { return k.kind == *kind; }))
      throw usage_error("--backend-per-kind: " + std::string(attnsel::to_string(*kind)) + " is given twice");
    per_kind.push_back({*kind, {std::string_view(entry).substr(eq + 1), attnsel::override_source::flag}});
  }
  const auto stock = add_stock(flags.platform, c.info, p);
  // A model whose layers attend in more than one way (layer kinds, cross-attention, a tower), or in a way
  // the model's own query does not ask (chunked, linear, hybrid or MLP-only layers), or a plan with per-kind
  // overrides: every group. One whose layers are all full or all sliding keeps the layer plan.
  const auto asks_as_model = [&](attnsel::layer_kind k) {
    return k == model.layers.front() && (k == attnsel::layer_kind::full || k == attnsel::layer_kind::sliding);
  };
  if (!flags.query.model_config.empty() && model.part == attnsel::model_part::text &&
      (model.cross_attention || !model.towers.empty() || !per_kind.empty() ||
       !std::all_of(model.layers.begin(), model.layers.end(), asks_as_model)))
    return print_model_plan(c.registry, model, q, p, overrides, options, plan_options, stock, flags.json);
  if (!stock.line.empty()) print_diagnostic("note", stock.line);
  // An MLA layer decodes over the latent KV (the query's head size, kv_lora_rank + qk_rope). Its prefill
  // runs over the latent KV in some engines (SGLang's MLA kernels) and as per-head attention in others
  // (vLLM's MLA prefill selector: qk_nope + qk_rope and v_head_dim): the latent query first, and when
  // the catalog has no prefill answer for it, the per-head one.
  auto decode_query = q;
  decode_query.seq_len_q = 1;
  auto plan = attnsel::plan_phases(c.registry, q, decode_query, p, overrides, options);
  if (!plan.prefill.ok() && q.mode != attnsel::attention_mode::standard && model.head_size != 0 &&
      model.head_size != q.head_size) {
    auto per_head = q;
    per_head.head_size = model.head_size;
    per_head.head_size_v = model.head_size_v == model.head_size ? 0 : model.head_size_v;
    auto second = attnsel::plan_phases(c.registry, per_head, decode_query, p, overrides, options);
    if (second.prefill.ok()) plan = std::move(second);
  }

  if (flags.json) {
    nlohmann::json report;
    for (const auto* pq : {&plan.prefill_query, &plan.decode_query}) {
      const auto phase = pq->phase;
      const auto& request = overrides.for_query(*pq);
      report[std::string(attnsel::to_string(phase))] =
          attnsel::to_json(attnsel::explain(c.registry, *pq, p, request, options), *pq, p, request);
    }
    report["block_size"] = plan.block_size ? nlohmann::json(plan.block_size) : nlohmann::json(nullptr);
    report["conflict"] = plan.conflict.empty() ? nlohmann::json(nullptr) : nlohmann::json(plan.conflict);
    std::printf("%s\n", attnsel::json_text(report).c_str());
    std::fflush(stdout);
  } else {
    for (const auto* r : {&plan.prefill, &plan.decode}) {
      const char* label = r == &plan.prefill ? "prefill" : "decode";
      if (r->ok()) {
        if (r->value().warning != nullptr) print_advisory(*r->value().warning);
        std::printf("%s: %s\n", label, attnsel::printable(r->value().name(), 200).c_str());
      } else
        std::printf("%s: (none)\n", label);
    }
    if (plan.prefill.ok() && plan.decode.ok() && plan.conflict.empty())
      std::printf("block_size: %s\n", plan.block_size ? std::to_string(plan.block_size).c_str() : "any");
  }
  if (!plan.prefill.ok()) print_error(plan.prefill.error());
  if (!plan.decode.ok()) print_error(plan.decode.error());
  if (!plan.conflict.empty()) print_diagnostic("error", "kv_cache: " + plan.conflict);
  return plan.ok() ? exit_ok : exit_failure;
}

}  // namespace

}  // namespace attnsel_cli

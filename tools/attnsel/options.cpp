// SPDX-License-Identifier: Apache-2.0
// Registers the shared flag groups on CLI11, typed; help texts are generated from limits.hpp and enums.hpp.
#include "options.hpp"

#include "validators.hpp"

#include <attnsel/catalog/builtin_catalog.hpp>
#include <attnsel/core/limits.hpp>
#include <attnsel/core/query.hpp>

#include <algorithm>
#include <cctype>
#include <string>
#include <type_traits>

namespace attnsel_cli {

namespace {

std::string documented_features() {
  std::string out;
  for (const auto& f : attnsel::features::known) out += std::string(f.name) + ", ";
  return out;
}

}  // namespace

void add_catalog_flags(CLI::App& app, catalog_flags& flags) {
  std::vector<std::string> builtin;
  std::string builtin_list;
  for (const auto name : attnsel::builtin_catalog_names) {
    builtin.emplace_back(name);
    builtin_list += (builtin_list.empty() ? "" : ", ") + builtin.back();
  }
  app.add_option("--catalog", flags.layers,
                 "Built-in catalog name (" + builtin_list +
                     ") or a catalog FILE layered on it; repeatable, files merge in order (default: vllm)")
      ->type_name("NAME|FILE")
      ->allow_extra_args(false)
      ->check(non_empty_path());
  app.add_option("--catalog-only", flags.only, "Use this catalog FILE alone, without a built-in base")
      ->type_name("FILE")
      ->check(non_empty_path())
      ->excludes("--catalog");
  app.add_option("--catalog-name", flags.name,
                 "Built-in catalog to use as the base (see 'attnsel list --catalogs'; default: vllm)")
      ->type_name("NAME")
      ->check(one_of(builtin));
}

void add_domain_filter(CLI::App& app, std::optional<attnsel::attention_domain>& domain) {
  add_enum_option<attnsel::attention_domain>(app, "--domain", domain,
                                             "Only " + enum_choices<attnsel::attention_domain>() + " (default: all)")
      ->type_name("DOMAIN");
}

void add_library_dirs(CLI::App& app, std::vector<std::string>& dirs) {
  app.add_option("--library-dir", dirs,
                 "Directory searched for cuDNN before the loader's path, e.g. torch's lib directory (repeatable)")
      ->type_name("DIR")
      ->allow_extra_args(false)
      ->check(non_empty("an empty directory names no place to search (the loader's path is searched anyway)"));
}

void add_component_list(CLI::App& app, std::vector<std::string>& components, const std::string& help,
                        const std::string& type_name) {
  app.add_option("--component", components, help)->type_name(type_name)->allow_extra_args(false)->delimiter(',');
}

void add_platform_flags(CLI::App& app, platform_flags& flags) {
  // The enum also knows tpu, but no catalog describes it and the tool's contract names four vendors.
  add_enum_option(
      app, "--platform", flags.vendor,
      "Device vendor: " + enum_choices({attnsel::device_vendor::tpu}) + " (default: detected on this machine)",
      {attnsel::device_vendor::tpu})
      ->type_name("VENDOR");
  app.add_option("--arch", flags.arch,
                 "CUDA compute capability (9.0, sm_90, sm90) or ROCm gfx target (gfx942) (default: this "
                 "machine's GPU when --platform is not given either)")
      ->type_name("ARCH")
      ->check(non_empty("an empty arch names no architecture; give a compute capability (9.0) or a gfx target "
                        "(gfx942)"));
  add_component_list(app, flags.components,
                     "Installed component NAME or NAME=VERSION (repeatable; comma-separated lists too)");
  app.add_option("--device-name", flags.device_name,
                 "The device's name as the driver reports it (NVIDIA H200); measured policy rules hold only "
                 "on the device they were measured on (default: detected, else none)")
      ->type_name("NAME")
      ->check(non_empty("an empty device name names no device; leave the flag out instead"));
  app.add_flag("--no-detect", flags.no_detect,
               "Probe nothing: without --platform/--arch the platform is cpu with only --component");
  app.add_flag("--no-stock", flags.no_stock,
               "With --platform/--arch: only the components --component names, not those of the catalog "
               "engine's stock install (default: added, with a note; e.g. vLLM's flashinfer)");
  add_library_dirs(app, flags.library_dirs);
}

void add_query_flags(CLI::App& app, query_flags& flags) {
  auto& q = flags.query;
  // One flag per field of the query's list (attnsel::field_list<query>), in its order: `--` and the name
  // with dashes, its text, bounds and default from the list. The features are `--feature` (below).
  attnsel::field_list<attnsel::query>::members([&](const attnsel::query_field& f, auto m) {
    auto& value = q.*decltype(m)::value;
    using T = std::decay_t<decltype(value)>;
    std::string flag = "--" + std::string(f.name);
    std::replace(flag.begin(), flag.end(), '_', '-');
    if constexpr (std::is_enum_v<T>) {
      const std::string_view type = attnsel::detail::enum_table<T>::type_name;
      std::string type_name(type.substr(type.rfind(' ') + 1));  // DTYPE, TYPE, MODE ...
      for (auto& c : type_name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      const auto fallback =
          !f.unstated.empty() && value == T{} ? std::string(f.unstated) : std::string(attnsel::to_string(value));
      add_enum_option<T>(app, flag, value,
                         std::string(f.doc) + ": " + enum_choices<T>() + " (default: " + fallback + ")")
          ->type_name(type_name);
    } else if constexpr (std::is_same_v<T, std::uint32_t>) {
      const auto fallback = f.unstated.empty() ? std::to_string(value) : std::string(f.unstated);
      app.add_option(flag, value, std::string(f.doc) + ", " + range_text(1, f.max) + " (default: " + fallback + ")")
          ->type_name("N")
          ->transform(count_in(1, f.max));
    }
  });
  // `auto` (vLLM's default) is the engine's rule for the model's dtype: float32 checkpoints run in half
  // precision. A transform runs before the enum check; the dtype itself is set by build_query.
  auto* dtype = app.get_option("--dtype");
  dtype->description("Compute dtype: " + enum_choices<attnsel::data_type>() +
                     ", or auto (the model's dtype as vLLM's --dtype auto runs it) (default: " +
                     std::string(attnsel::to_string(q.dtype)) + "; with --model-config: auto)");
  dtype->transform(CLI::Validator(
      [&flags](std::string& input) {
        flags.dtype_auto = input.size() == 4 && (input[0] | 0x20) == 'a' && (input[1] | 0x20) == 'u' &&
                           (input[2] | 0x20) == 't' && (input[3] | 0x20) == 'o';
        if (flags.dtype_auto) input = std::string(attnsel::to_string(attnsel::data_type::bfloat16));
        return std::string();
      },
      ""));
  flags.dtype_option = dtype;
  flags.num_kv_heads_option = app.get_option("--num-kv-heads");
  app.add_flag("--mla", flags.mla, "Multi-head latent attention (DeepSeek)");
  app.add_flag("--sparse", flags.sparse, "Sparse MLA (DeepSeek V3.2); implies --mla");
  app.add_option("--feature", flags.features,
                 "Required feature (repeatable): " + documented_features() + "or one a backend of the catalog declares")
      ->type_name("NAME")
      ->allow_extra_args(false)
      ->delimiter(',');
  // The shape flags say what the config says: giving both is refused rather than silently merged.
  auto* model = app.add_option("--model-config", flags.model_config,
                               "Read head sizes, heads, MLA, dtype, sliding window, softcap and sinks from a "
                               "Hugging Face config.json (an explicit --dtype still wins)")
                    ->type_name("PATH");
  flags.model_config_option = model;
  // Checked after parsing rather than with CLI11's excludes(), whose help line would run past 100 columns.
  app.parse_complete_callback([&app, model] {
    if (model->count() == 0) return;
    for (const char* shape :
         {"--domain", "--head-size", "--head-size-v", "--attn-type", "--mla", "--sparse", "--num-heads"})
      if (app.get_option(shape)->count() > 0) throw CLI::ExcludesError(model->get_name(), shape);
  });
  app.add_option("--model-part", flags.model_part,
                 "Which attention of --model-config: text (the language model), vision (the vision tower) or "
                 "audio (the audio encoder; both in the encoder domain) (default: text)")
      ->type_name("PART")
      ->check(CLI::IsMember({"text", "vision", "audio"}))
      ->needs(model);
  app.add_option("--tp", flags.tensor_parallel,
                 "Tensor-parallel size: --model-config's heads per rank are heads / N, rounded up (default: 1)")
      ->type_name("N")
      ->check(count_in(1, attnsel::limits::num_heads))
      ->needs(model);
}

}  // namespace attnsel_cli

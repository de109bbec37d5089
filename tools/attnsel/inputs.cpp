// SPDX-License-Identifier: Apache-2.0
// What CLI11 cannot check alone (arch against vendor, components, catalog features): one usage error each.
#include "inputs.hpp"

#include "detect.hpp"
#include "errors.hpp"
#include "terminal.hpp"
#include "validators.hpp"

#include <attnsel/core/devices.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/override.hpp>
#include <attnsel/model/model_config.hpp>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace attnsel_cli {

namespace {

// Vendor an --arch spelling implies, when --platform is absent: gfx targets and AMD devices are ROCm,
// capabilities and NVIDIA devices CUDA.
attnsel::device_vendor vendor_of_arch(const std::string& arch) {
  if (const auto* device = attnsel::find_device(arch)) return device->vendor;
  if (attnsel::parse_gfx_arch(arch)) return attnsel::device_vendor::rocm;
  if (attnsel::parse_cuda_capability(arch)) return attnsel::device_vendor::cuda;
  const auto guess = attnsel::arch_suggestion(arch);
  throw usage_error("--arch: " + quoted_value(arch) +
                    " is neither a CUDA compute capability (9.0, sm_90, sm90), a gfx target (gfx942) nor a known "
                    "device (h100, b200, mi300x; docs/cli.md lists them)" +
                    (guess.empty() ? std::string() : "; did you mean '" + guess + "'?"));
}

// The arch text to parse: a device name becomes its architecture; a device of the other vendor is refused.
std::string arch_of(const std::string& arch, attnsel::device_vendor vendor) {
  const auto* device = attnsel::find_device(arch);
  if (device == nullptr) return arch;
  if (device->vendor != vendor)
    throw usage_error("--arch: " + quoted_value(arch) + " is a " + std::string(attnsel::to_string(device->vendor)) +
                      " device (" + std::string(device->arch) + "), not " + std::string(attnsel::to_string(vendor)) +
                      "; give --platform " + std::string(attnsel::to_string(device->vendor)) + " or leave it out");
  return std::string(device->arch);
}

// Parses the arch and refuses one that no device has: `--arch 99.0` would otherwise answer as if it
// were the newest GPU, without a word.
void set_known_arch(attnsel::platform& p, const std::string& typed) {
  const std::string arch = arch_of(typed, p.vendor());
  if (const auto problem = attnsel::set_arch_text(p, arch); !problem.empty()) {
    const auto guess = attnsel::arch_suggestion(typed);
    throw usage_error("--arch: " + quoted_value(typed) + " " + problem +
                      (guess.empty() ? std::string() : "; did you mean '" + guess + "'?"));
  }
  const bool known = p.capability() ? attnsel::is_known_arch(*p.capability()) : attnsel::is_known_arch(*p.gfx());
  if (!known)
    throw usage_error("--arch: " + quoted_value(typed) + " is no " +
                      (p.capability() ? std::string("CUDA compute capability") : std::string("gfx target")) +
                      " a device has; known: " + attnsel::known_arch_list(p.vendor()));
}

}  // namespace

attnsel::platform build_platform(const platform_flags& flags, attnsel::detection_report* report) {
  if (!flags.vendor && flags.arch.empty()) {
    // Neither --platform nor --arch: this machine decides, architecture and components included.
    attnsel::platform p = attnsel::platform::cpu();
    add_components(p, flags.components);
    if (flags.device_name) p.set_device_name(*flags.device_name);
    if (flags.no_detect) return p;
    // --component goes in as the caller's extras, so the engine switches see it (aiter + VLLM_ROCM_USE_AITER).
    auto detected = detect_machine(flags.library_dirs, 0, p.components());
    if (report) *report = std::move(detected.report);
    if (flags.device_name) detected.platform.set_device_name(*flags.device_name);
    return std::move(detected.platform);
  }
  const auto vendor = flags.vendor ? *flags.vendor : vendor_of_arch(flags.arch);
  attnsel::platform p(vendor);
  const std::string& arch = flags.arch;
  if (!arch.empty()) {
    if (vendor != attnsel::device_vendor::cuda && vendor != attnsel::device_vendor::rocm)
      throw usage_error("--arch: " + quoted_value(arch) + " does not apply to --platform " +
                        std::string(attnsel::to_string(vendor)) + "; only cuda and rocm take an arch");
    set_known_arch(p, arch);
  } else if (vendor == attnsel::device_vendor::cuda || vendor == attnsel::device_vendor::rocm) {
    print_diagnostic("warning", "--platform " + std::string(attnsel::to_string(vendor)) +
                                    " without --arch: every backend gated on the " +
                                    (vendor == attnsel::device_vendor::cuda ? "compute capability" : "gfx target") +
                                    " is rejected; give --arch (e.g. " +
                                    (vendor == attnsel::device_vendor::cuda ? "9.0 or h100" : "gfx942 or mi300x") +
                                    ")");
  }
  add_components(p, flags.components);
  if (flags.device_name) p.set_device_name(*flags.device_name);
  return p;
}

stock_note add_stock(const platform_flags& flags, const attnsel::catalog_info& info, attnsel::platform& p) {
  if (flags.no_stock || (!flags.vendor && flags.arch.empty())) return {};
  auto stocked = attnsel::with_stock(info, p);
  if (stocked.added.empty()) return {};
  p = std::move(stocked.platform);
  const auto names = attnsel::detail::join(stocked.added, ", ", [](const auto& c) { return attnsel::to_string(c); });
  const std::string name = attnsel::printable(info.name, 80);
  return {"assumed " + name + "'s stock " + names + " (--no-stock: none)",
          names + ", from a stock " + name + " install: " + attnsel::printable(stocked.because, 300) +
              " (--no-stock: none)"};
}

void add_components(attnsel::platform& p, const std::vector<std::string>& specs) {
  for (const auto& spec : specs)
    if (const auto problem = attnsel::add_component_text(p, spec); !problem.empty())
      throw usage_error("--component: " + quoted_value(spec) + " " + problem);
}

namespace {
bool given(const CLI::Option* option) { return option != nullptr && option->count() > 0; }
}  // namespace

attnsel::query build_query(const query_flags& flags, const attnsel::platform& p, attnsel::model_config* model) {
  attnsel::query q = flags.query;
  // `--dtype auto` is the engine's rule, not a dtype given.
  const bool dtype_given = given(flags.dtype_option) && !flags.dtype_auto;
  if (given(flags.model_config_option) || !flags.model_config.empty()) {
    // `--model-config "$CONFIG"` with CONFIG unset must not quietly select for the default query.
    if (flags.model_config.empty()) throw usage_error("--model-config: the path is empty (an unset variable?)");
    const auto part = attnsel::parse_model_part(flags.model_part);
    if (!part)
      throw usage_error("--model-part: " + quoted_value(flags.model_part) + " is not one of text, vision, audio");
    // An explicit --dtype is the dtype the engine runs in: the config's is then not read, so one that
    // attnsel does not know is no error.
    attnsel::model_config cfg;
    try {
      cfg = attnsel::read_model_config_file(
          flags.model_config, *part, dtype_given ? attnsel::model_dtype_keys::ignore : attnsel::model_dtype_keys::read);
    } catch (const attnsel::model_config_error& e) {
      throw config_failure(e.what());  // bad input naming its key: exit 2
    }
    const auto dtype = q.dtype;
    q = cfg.to_query(q, flags.tensor_parallel);
    if (dtype_given) {
      q.dtype = dtype;
    } else {
      q.dtype = attnsel::auto_dtype(p, cfg.dtype, cfg.model_type);
      if (cfg.dtype && *cfg.dtype != q.dtype)
        print_diagnostic("note", "--dtype auto: the " + std::string(attnsel::to_string(*cfg.dtype)) +
                                     " checkpoint runs in " + std::string(attnsel::to_string(q.dtype)) +
                                     ", as vLLM's --dtype auto runs it on this platform; give --dtype to ask "
                                     "for another");
    }
    if (given(flags.num_kv_heads_option)) {
      // Applied over the config's per-rank count, as --dtype is, when it makes a valid query.
      if (q.mode != attnsel::attention_mode::standard)
        throw usage_error("--num-kv-heads: " + flags.model_config + " is an MLA model, which has one latent KV head");
      if (q.num_heads % flags.query.num_kv_heads != 0)
        throw usage_error("--num-kv-heads: " + std::to_string(flags.query.num_kv_heads) + " does not divide the " +
                          std::to_string(q.num_heads) + " query heads per rank of " + flags.model_config);
      q.num_kv_heads = flags.query.num_kv_heads;
    }
    if (model != nullptr) *model = cfg;
    return q;
  }
  if (flags.dtype_auto) q.dtype = attnsel::auto_dtype(p, std::nullopt);
  if (flags.sparse || flags.mla) {
    const auto mode = flags.sparse ? attnsel::attention_mode::sparse_mla : attnsel::attention_mode::mla;
    if (q.mode != attnsel::attention_mode::standard && q.mode != mode)
      throw usage_error("--mode " + std::string(attnsel::to_string(q.mode)) + " conflicts with " +
                        (flags.sparse ? "--sparse" : "--mla"));
    q.mode = mode;
  }
  return q;
}

void add_features(attnsel::query& q, const query_flags& flags, const attnsel::registry& reg) {
  // Documented features first (their display order), then those the catalog's backends declare.
  std::vector<std::string> known(attnsel::features::known.size());
  std::transform(attnsel::features::known.begin(), attnsel::features::known.end(), known.begin(),
                 [](const auto& f) { return std::string(f.name); });
  std::set<std::string> declared;
  for (const auto& b : reg.backends()) {
    for (const auto& f : b.caps.features) declared.insert(f);
    for (const auto& v : b.variants)
      for (const auto& f : v.features) declared.insert(f);
  }
  for (const auto& f : declared)
    if (std::find(known.begin(), known.end(), f) == known.end()) known.push_back(f);

  for (const auto& name : flags.features) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      const auto hint = attnsel::closest_name(name, known);
      throw usage_error("--feature: " + quoted_value(name) + " is not a feature of this catalog" +
                        (hint.empty() ? std::string() : "; did you mean '" + hint + "'?") +
                        " Known: " + attnsel::detail::join(known, ", "));
    }
    q.required.insert(name);
  }
  add_implied_gqa(q, declared.count(gqa_feature) > 0);
}

void add_implied_gqa(attnsel::query& q, bool catalog_knows_gqa) {
  // A catalog that states GQA as a feature (torch_sdpa: SDPA's enable_gqa) means "fewer KV heads than
  // query heads" by it: head counts that say so imply it, and head counts that say otherwise contradict it.
  if (!catalog_knows_gqa || q.num_heads == 0 || q.num_kv_heads == 0) return;
  const bool grouped = q.num_kv_heads < q.num_heads;
  if (grouped) {
    if (!q.required.contains(gqa_feature)) {
      q.required.insert(gqa_feature);
      print_diagnostic("note", "--num-heads " + std::to_string(q.num_heads) + " with --num-kv-heads " +
                                   std::to_string(q.num_kv_heads) + " is grouped-query attention: --feature " +
                                   std::string(gqa_feature) + " added");
    }
  } else if (q.required.contains(gqa_feature)) {
    throw usage_error("--feature " + std::string(gqa_feature) + " contradicts --num-heads " +
                      std::to_string(q.num_heads) + " with --num-kv-heads " + std::to_string(q.num_kv_heads) +
                      ": grouped-query attention has fewer KV heads than query heads");
  }
}

}  // namespace attnsel_cli

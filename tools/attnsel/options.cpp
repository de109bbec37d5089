// SPDX-License-Identifier: Apache-2.0
// Registers the flags of each subcommand on CLI11; values stay strings until validated.
#include "options.hpp"

namespace attnsel_cli {

const CLI::Validator& non_empty_path() {
  // An empty path is almost always an unset shell variable: refuse it rather than fall back.
  static const CLI::Validator check(
      [](std::string& value) {
        return value.empty() ? std::string("an empty path is not a catalog file") : std::string();
      },
      "", "non-empty path");
  return check;
}

void add_catalog_flags(CLI::App& app, catalog_flags& flags) {
  app.add_option("--catalog", flags.layers,
                 "Built-in catalog name (vllm, torch_sdpa) or a catalog FILE layered on it; "
                 "repeatable, files merge in order (default: vllm)")
      ->type_name("NAME|FILE")
      ->allow_extra_args(false)
      ->check(non_empty_path());
  app.add_option("--catalog-only", flags.only, "Use this catalog FILE alone, without a built-in base")
      ->type_name("FILE")
      ->check(non_empty_path());
  app.add_option("--catalog-name", flags.name,
                 "Built-in catalog to use as the base (see 'attnsel list --catalogs'; default: vllm)")
      ->type_name("NAME");
}

CLI::Option* add_select_flags(CLI::App& app, select_flags& flags) {
  app.add_option("--platform", flags.platform.vendor,
                 "Device vendor: cuda, rocm, xpu or cpu (default: detected on this machine)")
      ->type_name("VENDOR");
  app.add_option("--arch", flags.platform.arch,
                 "CUDA compute capability (9.0, sm_90, sm90) or ROCm gfx target (gfx942) (default: this "
                 "machine's GPU when --platform is not given either)")
      ->type_name("ARCH");
  app.add_option("--component", flags.platform.components,
                 "Installed component NAME or NAME=VERSION (repeatable; comma-separated lists too)")
      ->type_name("NAME[=VER]")
      ->allow_extra_args(false)
      ->delimiter(',');
  app.add_flag("--no-detect", flags.platform.no_detect,
               "Probe nothing: without --platform/--arch the platform is cpu with only --component");
  app.add_option("--library-dir", flags.platform.library_dirs,
                 "Directory searched for cuDNN before the loader's path, e.g. torch's lib directory (repeatable)")
      ->type_name("DIR")
      ->allow_extra_args(false);

  app.add_option("--domain", flags.query.domain, "decoder or encoder (default: decoder)")->type_name("DOMAIN");
  app.add_option("--head-size", flags.query.head_size, "Head size, 1..65536 (default: 128)")->type_name("N");
  app.add_option("--head-size-v", flags.query.head_size_v, "Value head size, 1..65536 (default: the head size)")
      ->type_name("N");
  app.add_option("--dtype", flags.query.dtype, "Compute dtype: float16, bfloat16, float32 (default: bfloat16)")
      ->type_name("DTYPE");
  app.add_option("--kv-cache-dtype", flags.query.kv_cache_dtype,
                 "KV-cache dtype: auto, float16, bfloat16, float32, fp8, fp8_e4m3, fp8_e5m2, ... (default: auto)")
      ->type_name("DTYPE");
  app.add_option("--block-size", flags.query.block_size, "KV-cache block size, 1..1048576 (default: not pinned)")
      ->type_name("N");
  app.add_option("--attn-type", flags.query.attn_type,
                 "decoder, encoder, encoder_only or encoder_decoder (default: decoder)")
      ->type_name("TYPE");
  app.add_flag("--mla", flags.query.mla, "Multi-head latent attention (DeepSeek)");
  app.add_flag("--sparse", flags.query.sparse, "Sparse MLA (DeepSeek V3.2); implies --mla");
  app.add_option("--num-heads", flags.query.num_heads, "Query heads per rank, 1..1048576 (default: unknown)")
      ->type_name("N");
  app.add_option("--feature", flags.query.features,
                 "Required feature (repeatable): sinks, sliding_window, alibi, softcap, mm_prefix, "
                 "per_head_quant_scales, non_causal, kv_connector, dcp, pcp, batch_invariant, or one a "
                 "backend of the catalog declares")
      ->type_name("NAME")
      ->allow_extra_args(false)
      ->delimiter(',');

  add_catalog_flags(app, flags.catalog);
  auto* backend = app.add_option("--backend", flags.backend,
                                 "Override: NAME, auto, A,B, A,auto or -NAME,auto (default: $ATTNSEL_BACKEND for "
                                 "the decoder, $ATTNSEL_ENCODER_BACKEND for the encoder)")
                      ->type_name("SPEC");
  app.add_flag("--prefer", flags.prefer, "When every forced backend is rejected, fall back to automatic selection");
  app.add_flag("--json", flags.json, "Print one JSON report on stdout");
  return backend;
}

void add_doctor_flags(CLI::App& app, doctor_flags& flags) {
  app.add_option("--library-dir", flags.library_dirs,
                 "Directory searched for cuDNN before the loader's path, e.g. torch's lib directory (repeatable)")
      ->type_name("DIR")
      ->allow_extra_args(false);
  app.add_option("--component", flags.components,
                 "A component this machine has that C++ cannot see, NAME or NAME=VERSION (Python packages: "
                 "flashinfer=0.2.5, aiter); repeatable")
      ->type_name("NAME[=VER]")
      ->allow_extra_args(false)
      ->delimiter(',');
  app.add_option("--device", flags.device, "Which visible GPU to describe, 0..1023 (default: 0)")->type_name("N");
  app.add_flag("--json", flags.json, "Print one JSON report on stdout");
}

}  // namespace attnsel_cli

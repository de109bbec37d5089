// SPDX-License-Identifier: Apache-2.0
// JSON catalogs: a strict loader (one precise error, nothing half-loaded) and a dumper that round-trips.
#pragma once

#include <attnsel/catalog/catalog_error.hpp>
#include <attnsel/config.hpp>
#include <attnsel/core/limits.hpp>
#include <attnsel/core/override.hpp>
#include <attnsel/core/registry.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// What a stock install of the catalog's engine brings on one vendor's machines: the components its
/// package pulls in (vLLM's PyPI wheel requires flashinfer-python, and torch's CUDA runtime comes with it),
/// and why, in words for a person ("vllm==0.33.0 requires flashinfer-python==0.7.2.post1 ...").
struct stock_install {
  device_vendor vendor = device_vendor::cuda;
  std::vector<component> components;  ///< sorted by name
  std::string because;

  friend bool operator==(const stock_install& a, const stock_install& b) {
    return a.vendor == b.vendor && a.components == b.components && a.because == b.because;
  }
};

/// An engine's rule for a whole model (catalog key "model_rules", format 2), which plan_model applies:
/// for a model whose config.json names one of `architectures` (and, with `mixed_head_sizes`, whose
/// attention layers differ in head size), on a platform of `platforms` (any when empty) that has the
/// `requires_components`, with no head size over `max_head_size` (any when 0), where nothing forced the
/// attention backend. The first rule that holds is the engine's: `force` becomes every attention layer's
/// override (vLLM's Gemma4Config sets attention_config.backend, SGLang's Gemma 4 override its
/// attention_backend), or, when empty, each layer keeps its own choice.
struct model_rule {
  std::string id;
  std::vector<std::string> architectures;
  bool mixed_head_sizes = true;
  std::vector<platform_constraint> platforms{};
  std::vector<component_requirement> requires_components{};
  std::uint32_t max_head_size = 0;
  std::string force{};
  std::string because{};

  friend bool operator==(const model_rule& a, const model_rule& b) {
    return a.id == b.id && a.architectures == b.architectures && a.mixed_head_sizes == b.mixed_head_sizes &&
           a.platforms == b.platforms && a.requires_components == b.requires_components &&
           a.max_head_size == b.max_head_size && a.force == b.force && a.because == b.because;
  }
};

/// With prefix caching, the tokens a hybrid model's attention block size is also a multiple of where its
/// linear layers are of one of `linear_modes` on a platform of `platforms` (vLLM: the Qwen gated
/// delta-rule layer's FlashInfer prefill checkpoints its state every 64 tokens).
struct checkpoint_alignment {
  std::vector<attention_mode> linear_modes;
  std::vector<platform_constraint> platforms;
  std::uint32_t tokens = 0;

  friend bool operator==(const checkpoint_alignment& a, const checkpoint_alignment& b) {
    return a.linear_modes == b.linear_modes && a.platforms == b.platforms && a.tokens == b.tokens;
  }
};

/// That the engine keeps a hybrid model's linear-layer state in the attention layers' KV-cache pages
/// (catalog key "hybrid_pages", format 2): plan_model raises the attention block size, in steps of the
/// attention backends' smallest block, until one attention page holds one linear layer's state (vLLM
/// 0.33.0 platforms/interface.py `_align_hybrid_block_size`).
struct hybrid_pages {
  std::vector<checkpoint_alignment> checkpoint_alignments;
  std::string because;

  friend bool operator==(const hybrid_pages& a, const hybrid_pages& b) {
    return a.checkpoint_alignments == b.checkpoint_alignments && a.because == b.because;
  }
};

/// Metadata of a catalog document.
struct catalog_info {
  std::string name;
  std::string description;
  std::string source;
  /// Upstream revisions the facts were read at, `owner/repo@commit` (`vllm-project/vllm@00159db1`).
  std::vector<std::string> commits;
  /// A stock install of the engine, at most one per vendor (catalog key "stock", format version 2).
  std::vector<stock_install> stock;
  /// The engine's rules for whole models, in order (model_rule).
  std::vector<model_rule> model_rules{};
  /// How the engine pages a hybrid model's linear state (hybrid_pages); none: it does not.
  std::optional<attnsel::hybrid_pages> hybrid_pages{};

  friend bool operator==(const catalog_info& a, const catalog_info& b) {
    return a.name == b.name && a.description == b.description && a.source == b.source && a.commits == b.commits &&
           a.stock == b.stock && a.model_rules == b.model_rules && a.hybrid_pages == b.hybrid_pages;
  }
};

/// A platform with a stock install's components added, and what was added.
struct stocked_platform {
  attnsel::platform platform;
  std::vector<component> added;  ///< those `p` lacked by name, sorted by name
  std::string because;           ///< the stock install's, "" when nothing was added
};

/// `p` with the components of the catalog's stock install on p's vendor (catalog_info::stock) that it
/// lacks by name; a component `p` has keeps its own version. For a platform a person describes
/// (`--platform cuda --arch 10.0`), where the engine as installed is what they ask about; a detected
/// platform already has what is installed.
[[nodiscard]] stocked_platform with_stock(const catalog_info& info, platform p);

/// The catalog file's "stock" object for `info`: vendor -> {"components": [...], "because": "..."}; {}
/// when it states none.
[[nodiscard]] nlohmann::json stock_json(const catalog_info& info);

/// A loaded catalog: its metadata and the registry it describes.
struct catalog {
  catalog_info info;
  attnsel::registry registry;

  friend bool operator==(const catalog& a, const catalog& b) { return a.info == b.info && a.registry == b.registry; }
};

/// Newest catalog format version this library reads; the writer uses it when a catalog needs it
/// (version 2: the call's shape and phase) and version 1 otherwise.
inline constexpr int catalog_format_version = 2;
/// Oldest catalog format version this library reads (version-1 files load unchanged).
inline constexpr int oldest_catalog_format_version = 1;

/// Parses JSON text strictly: refuses text over `limits.max_bytes`, nesting over `limits.max_depth`,
/// text that is not JSON, and any object key repeated within one object (at the key's JSON pointer).
/// Read query and platform files with it too. Throws catalog_error.
[[nodiscard]] nlohmann::json parse_json_document(std::string_view text, std::string_view origin = "<string>",
                                                 const catalog_limits& limits = {});

/// The text of a JSON document as attnsel writes it (the CLI's `--json`, Python's `to_json`): `indent`
/// spaces a level, or one line for -1. Invalid UTF-8 in a string is written as U+FFFD, never thrown.
[[nodiscard]] std::string json_text(const nlohmann::json& doc, int indent = 2);

/// Builds a catalog from a parsed JSON document. Throws catalog_error naming `origin` and the pointer.
/// A parsed document has already lost repeated keys: read text with `parse_catalog_text`.
[[nodiscard]] catalog parse_catalog(const nlohmann::json& doc, std::string_view origin = "<json>",
                                    const catalog_limits& limits = {});

/// Parses catalog text. Refuses oversized or over-deep input before handing it to the JSON parser.
[[nodiscard]] catalog parse_catalog_text(std::string_view text, std::string_view origin = "<string>",
                                         const catalog_limits& limits = {});

/// Reads a catalog file. Missing files, directories and unreadable files are catalog_errors too.
[[nodiscard]] catalog read_catalog_file(const std::string& path, const catalog_limits& limits = {});

/// Layers the catalog file at `path` onto `reg` (`registry::merge`): its backends add or replace ours
/// by name, its rules go in front. On any error `reg` is unchanged.
void merge_catalog_file(registry& reg, const std::string& path, const catalog_limits& limits = {});

/// The catalog as JSON; `parse_catalog(to_json(c)) == c` for any catalog (custom checks aside).
[[nodiscard]] nlohmann::json to_json(const catalog& c);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/impl/catalog_inl.hpp>
#endif

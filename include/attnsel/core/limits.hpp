// SPDX-License-Identifier: Apache-2.0
// Every bound attnsel enforces on input, declared once: queries, names, catalogs and error text.
#pragma once

#include <attnsel/config.hpp>

#include <cstddef>
#include <cstdint>

ATTNSEL_BEGIN_NAMESPACE

/// The bounds in one place. The query validator, the catalog loader, the JSON readers, the registry's
/// validation and the CLI all read these; docs/reliability.md lists them. Catalog-size bounds are
/// defaults of `catalog_limits` (catalog.hpp), which a caller may tighten or loosen per load.
namespace limits {
/// Largest head size (query, head-size sets and ranges of a descriptor).
inline constexpr std::uint32_t head_size = 1u << 16;
/// Largest KV-cache block size (query, block-size multiples, preferred block size).
inline constexpr std::uint32_t block_size = 1u << 20;
/// Largest number of query heads (query, policy rule head ranges, `--num-heads`).
inline constexpr std::uint32_t num_heads = 1u << 20;
/// Longest sequence length (query and key/value) a query or a catalog range may state.
inline constexpr std::uint32_t seq_len = 1u << 30;
/// Largest batch size a query or a catalog range may state.
inline constexpr std::uint32_t batch_size = 1u << 24;
/// Longest backend, alias or feature name, in characters.
inline constexpr std::size_t name_length = 64;
/// Longest upstream URL an advisory may cite, in characters.
inline constexpr std::size_t url_length = 200;

/// Default largest catalog file, in bytes; larger ones are refused before parsing.
inline constexpr std::size_t catalog_bytes = 16u << 20;
/// Default deepest JSON nesting; catalogs need about 6.
inline constexpr std::size_t catalog_depth = 32;
/// Default largest number of variants one backend may declare.
inline constexpr std::size_t variants_per_backend = 256;
/// Default largest number of elements in one JSON list of a catalog (features, aliases, platforms ...).
inline constexpr std::size_t elements_per_list = 4096;
/// Default largest number of list elements a whole catalog may hold once variants inherit their
/// backend's lists (a shared inherited feature list counts once).
inline constexpr std::size_t total_elements = 1u << 20;

/// Error messages list at most this many alternatives, then say how many more there are.
inline constexpr std::size_t listed_alternatives = 16;
/// Untrusted text echoed in a message is cut (on a character boundary) after this many bytes.
inline constexpr std::size_t echoed_text = 80;
}  // namespace limits

/// Largest head size, block size and head count a query may carry (aliases of `limits::`).
inline constexpr std::uint32_t max_head_size = limits::head_size;
inline constexpr std::uint32_t max_block_size = limits::block_size;
inline constexpr std::uint32_t max_num_heads = limits::num_heads;

ATTNSEL_END_NAMESPACE

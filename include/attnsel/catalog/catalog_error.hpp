// SPDX-License-Identifier: Apache-2.0
// The catalog loader's error type and its input limits, apart from catalog.hpp so readers can share them.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/limits.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

ATTNSEL_BEGIN_NAMESPACE

/// An error at one place of a JSON document: `what()` reads `ORIGIN: POINTER: problem`. The catalog
/// and config.json readers each throw their own type of it (`Base` decides what Python raises).
template <class Base>
class document_error : public Base {
 public:
  document_error(std::string origin, std::string pointer, std::string problem)
      : Base(origin + ": " + (pointer.empty() ? std::string("/") : pointer) + ": " + problem),
        origin_(std::move(origin)),
        pointer_(std::move(pointer)),
        problem_(std::move(problem)) {}
  /// The file name (or `<string>`) the document came from.
  [[nodiscard]] const std::string& origin() const noexcept { return origin_; }
  /// RFC 6901 JSON pointer of the offending value (`/backends/3/head_sizes/min`); empty for the root
  /// or for errors before parsing (missing file, malformed JSON).
  [[nodiscard]] const std::string& pointer() const noexcept { return pointer_; }
  /// What was expected and what was found.
  [[nodiscard]] const std::string& problem() const noexcept { return problem_; }

 private:
  std::string origin_;
  std::string pointer_;
  std::string problem_;
};

/// A catalog file could not be loaded. `what()` reads `FILE: POINTER: expected ..., got ...`.
class catalog_error : public document_error<std::runtime_error> {
 public:
  using document_error::document_error;
};

/// Limits the loader enforces on untrusted input (defaults from limits.hpp; docs/reliability.md).
/// Together they bound the memory and time a load takes whatever the input.
struct catalog_limits {
  std::size_t max_bytes = limits::catalog_bytes;  ///< larger files are refused before parsing
  std::size_t max_depth = limits::catalog_depth;  ///< deeper nesting is refused before parsing (catalogs need ~6)
  std::size_t max_variants_per_backend = limits::variants_per_backend;  ///< variants one backend may declare
  std::size_t max_list_elements = limits::elements_per_list;            ///< elements of one JSON list
  /// List elements the loaded catalog may hold, counting what variants inherit from their backend
  /// (an inherited feature list is shared, so it counts once).
  std::size_t max_total_elements = limits::total_elements;
};

ATTNSEL_END_NAMESPACE

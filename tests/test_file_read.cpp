// SPDX-License-Identifier: Apache-2.0
// The catalog and model-config file reader: one open without blocking, checks on the descriptor, a
// bounded read, and an error that says what went wrong (a symlink loop is not a missing file).
#include "catch.hpp"

#include <attnsel/all.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace attnsel;

namespace {

// A fresh directory under the temporary directory, removed with what the test put in it.
struct temp_dir {
  std::string path;
  temp_dir() {
    std::string tmpl = (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp")) +
                       "/attnsel_file_read_XXXXXX";
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() { (void)std::system(("rm -rf '" + path + "'").c_str()); }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  [[nodiscard]] std::string at(const std::string& name) const { return path + "/" + name; }
};

std::string load_error(const std::string& path, const catalog_limits& limits = {}) {
  try {
    (void)read_catalog_file(path, limits);
  } catch (const catalog_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a symlink loop is reported as a loop, not as a missing file", "[file]") {
  const temp_dir dir;
  REQUIRE(::symlink(dir.at("b.json").c_str(), dir.at("a.json").c_str()) == 0);
  REQUIRE(::symlink(dir.at("a.json").c_str(), dir.at("b.json").c_str()) == 0);
  const auto why = load_error(dir.at("a.json"));
  CHECK_THAT(why, ATTNSEL_CONTAINS("a loop of symbolic links"));
  CHECK_THAT(why, !ATTNSEL_CONTAINS("no such file"));
  CHECK_THAT(load_error(dir.at("missing.json")), ATTNSEL_CONTAINS("no such file"));
  CHECK_THROWS_WITH(read_model_config_file(dir.at("a.json")), ATTNSEL_CONTAINS("a loop of symbolic links"));
}

TEST_CASE("a FIFO is refused on its descriptor without waiting for a writer", "[file][fifo]") {
  const temp_dir dir;
  REQUIRE(::mkfifo(dir.at("pipe.json").c_str(), 0600) == 0);
  CHECK_THAT(load_error(dir.at("pipe.json")), ATTNSEL_CONTAINS("is a FIFO, not a regular file"));
  CHECK_THAT(load_error(dir.path), ATTNSEL_CONTAINS("is a directory"));
}

TEST_CASE("a file is read up to its bound and one byte, however large it turns out to be", "[file]") {
  // /proc files state a size of 0 and hold more: the reader must stop at the bound, not read to EOF
  // and compare afterwards (a file growing while it is read looks the same).
  catalog_limits small;
  small.max_bytes = 64;
  CHECK_THAT(load_error("/proc/self/maps", small), ATTNSEL_CONTAINS("grew past the limit of 64 bytes"));
  const temp_dir dir;
  {
    std::FILE* f = std::fopen(dir.at("big.json").c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(std::string(100, ' ').c_str(), f);
    std::fclose(f);
  }
  CHECK_THAT(load_error(dir.at("big.json"), small), ATTNSEL_CONTAINS("file is 100 bytes; the limit is 64"));
}

// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: catalogs of valid shape built from the fuzzer's bytes (long lists, many variants,
// names that clash, repeated keys), so slow paths and limit bugs are found, not only parse errors.
#include <attnsel/all.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using namespace attnsel;

// Hands out the fuzzer's bytes as small decisions; zeros once they run out.
class choices {
 public:
  choices(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : (static_cast<std::size_t>(byte()) << 8 | byte()) % n; }
  bool chance(unsigned in_256) { return byte() < in_256; }
  // A list length: usually short, sometimes in the thousands (the lists that made loading slow).
  std::size_t length() {
    const auto b = byte();
    if (b < 200) return b % 6;
    if (b < 250) return below(300);
    return below(6000);
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

template <class Item>
std::string array(std::size_t n, Item item) {
  std::string out = "[";
  for (std::size_t i = 0; i < n; ++i) out += (i ? "," : "") + item(i);
  return out + "]";
}

std::string backend_name(choices& in) {
  // A small pool so names and aliases clash; now and then a spelling the loader must refuse.
  const auto k = in.below(48);
  if (in.chance(4)) return "b" + std::to_string(k);
  return "B" + std::to_string(k);
}

std::string feature_list(choices& in) {
  const auto n = in.length();
  const bool descending = in.chance(128);
  return array(n, [&](std::size_t i) { return quoted("f" + std::to_string(descending ? n - i : i)); });
}

std::string platform_list(choices& in) {
  static const char* const vendors[] = {"cuda", "rocm", "xpu", "cpu"};
  return array(1 + in.below(3), [&](std::size_t) {
    const std::string vendor = vendors[in.below(4)];
    std::string out = "{\"vendor\": " + quoted(vendor);
    if (in.chance(96))
      out += ", \"min_capability\": " + quoted(std::to_string(in.below(13)) + "." + std::to_string(in.below(10)));
    if (in.chance(64))
      out += ", \"archs\": " + array(1 + in.below(3), [&](std::size_t) {
               static const char* const archs[] = {"gfx90a", "gfx942", "gfx950", "gfx1100"};
               return quoted(archs[in.below(4)]);
             });
    if (in.chance(32)) out += ", \"families\": [\"gfx9\"]";
    return out + "}";
  });
}

std::string capability_keys(choices& in) {
  std::string out;
  if (in.chance(128)) out += ", \"features\": " + feature_list(in);
  if (in.chance(96))
    out +=
        ", \"head_sizes\": " + array(1 + in.length(), [&](std::size_t) { return std::to_string(1 + in.below(1024)); });
  if (in.chance(64))
    out += ", \"block_size_multiples\": " +
           array(1 + in.length(), [&](std::size_t) { return std::to_string(1 + in.below(256)); });
  if (in.chance(96)) out += ", \"platforms\": " + platform_list(in);
  if (in.chance(32)) out += ", \"requires\": [{\"component\": \"c" + std::to_string(in.below(8)) + "\"}]";
  if (in.chance(8)) out += ", \"features\": []";  // a repeated key
  return out;
}

std::string backend(choices& in) {
  std::string out = "{\"name\": " + quoted(backend_name(in)) + ", \"domains\": [\"decoder\"]";
  if (in.chance(96))
    out += ", \"aliases\": " + array(in.length(), [&](std::size_t i) {
             return quoted(in.chance(200) ? "AL" + std::to_string(in.below(100000)) + "_" + std::to_string(i)
                                          : backend_name(in));
           });
  out += capability_keys(in);
  if (in.chance(96)) {
    const auto n = 1 + (in.chance(32) ? in.below(300) : in.below(4));
    out += ", \"variants\": " + array(n, [&](std::size_t i) {
             return "{\"name\": \"V" + std::to_string(in.chance(8) ? 0 : i) + "\"" + capability_keys(in) + "}";
           });
  }
  return out + "}";
}

std::string document(choices& in) {
  std::string backends =
      array(in.chance(240) ? in.below(12) : in.below(3000), [&](std::size_t) { return backend(in); });
  std::string policies = array(in.below(4), [&](std::size_t) {
    return "{\"domain\": \"decoder\", \"vendor\": \"" + std::string(in.chance(128) ? "cuda" : "rocm") +
           "\", \"order\": " + array(1 + in.length(), [&](std::size_t) { return quoted(backend_name(in)); }) + "}";
  });
  return R"({"format": "attnsel-catalog", "version": 1, "name": "structured", "backends": )" + backends +
         R"(, "policies": )" + policies + "}";
}

[[noreturn]] void violated(const char* what, const std::string& text) {
  std::fprintf(stderr, "fuzz_catalog_structured: invariant violated: %s\n%s\n", what, text.substr(0, 4000).c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  choices in(data, size);
  const auto text = document(in);
  const auto start = std::chrono::steady_clock::now();
  catalog loaded;
  try {
    loaded = parse_catalog_text(text, "structured");
  } catch (const catalog_error& e) {
    if (e.problem().size() > 4096) violated("catalog errors are bounded", e.what());
    return 0;
  }
  // Time per byte: a generated document is at most a few MB, and a load is linear-ish, so seconds mean
  // a super-linear path (libFuzzer's -timeout catches the rest).
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (seconds > 2.0 + 2e-6 * static_cast<double>(text.size())) violated("loading is fast for its size", text);

  const auto doc = to_json(loaded);
  try {
    if (!(parse_catalog(doc, "roundtrip") == loaded)) violated("parse_catalog(to_json(c)) == c", doc.dump());
  } catch (const catalog_error& e) {
    violated("to_json output loads again", std::string(e.what()) + "\n" + doc.dump());
  }
  const auto r = select(loaded.registry, query{}, platform::cuda(9, 0));
  if (!r && r.error().message.size() > 64 * 1024) violated("selection errors are bounded", r.error().message);
  return 0;
}

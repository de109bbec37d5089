// SPDX-License-Identifier: Apache-2.0
// One process, one question: how long at::_fused_sdp_choice and attnsel (free, bound, cached) take to answer.
//
// Usage: torch_side_by_side MAJOR MINOR CUDNN_VERSION [ITERATIONS]
// MAJOR.MINOR is the GPU's compute capability and CUDNN_VERSION torch.backends.cudnn.version() (91900),
// both read by the caller from Python so that this program needs no CUDA headers.
#include <attnsel/core.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

// ns per call of ITERATIONS calls of f.
template <class F>
double ns_per_call(long iterations, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < iterations; ++i) f();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(iterations);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One timed call and its figures: ns per call and, per round, torch's ns over this call's ns.
struct timed {
  const char* name;
  long scale;  // calls per round, as a multiple of torch's iterations (attnsel answers ~100x faster)
  std::function<double(long)> run;  // times that many calls (the loop inside: no indirect call per call)
  std::vector<double> ns;
  std::vector<double> ratio;
};

const char* torch_backend_name(std::int64_t id) {
  switch (id) {
    case 0:
      return "MATH";
    case 1:
      return "FLASH_ATTENTION";
    case 2:
      return "EFFICIENT_ATTENTION";
    case 3:
      return "CUDNN_ATTENTION";
    case 4:
      return "OVERRIDEABLE";
    default:
      return "ERROR";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: torch_side_by_side MAJOR MINOR CUDNN_VERSION [ITERATIONS]\n");
    return 2;
  }
  const auto major = static_cast<std::uint8_t>(std::atoi(argv[1]));
  const auto minor = static_cast<std::uint8_t>(std::atoi(argv[2]));
  const long cudnn = std::atol(argv[3]);
  const long iterations = argc > 4 ? std::atol(argv[4]) : 200000;

  // The question: bf16, 8 heads, head size 128, 128 tokens, no mask, no dropout, not causal.
  const auto options = at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA);
  const auto q = at::randn({1, 8, 128, 128}, options);
  const auto k = at::randn({1, 8, 128, 128}, options);
  const auto v = at::randn({1, 8, 128, 128}, options);
  // The first call may reorder PyTorch's priorities (cuDNN first when preferred): do it before timing.
  const auto torch_choice = at::_fused_sdp_choice(q, k, v, std::nullopt, 0.0, false, std::nullopt, false);

  // The same question to attnsel: the platform as torch sees it (check_prefer_cudnn_attention: cuDNN
  // newer than 9.15.0 on sm9x/sm10x and TORCH_CUDNN_SDPA_DEPRIORITIZED unset).
  auto p = attnsel::platform::cuda(major, minor);
  if (cudnn > 0) {
    const std::string version =
        std::to_string(cudnn / 10000) + "." + std::to_string(cudnn / 100 % 100) + "." + std::to_string(cudnn % 100);
    p.add_component("cudnn", attnsel::parse_component_version(version));
    if (cudnn > 91500 && (major == 9 || major == 10) && std::getenv("TORCH_CUDNN_SDPA_DEPRIORITIZED") == nullptr)
      p.add_component("cudnn_preferred");
  }
  attnsel::query aq;  // with the call's shape (catalog format 2), as attnsel.torch.query_from_sdpa fills it
  aq.head_size = 128;
  aq.dtype = attnsel::data_type::bfloat16;
  aq.attn_type = attnsel::attention_type::encoder_only;  // not causal
  aq.num_heads = 8;
  aq.num_kv_heads = 8;
  aq.seq_len_q = 128;
  aq.seq_len_kv = 128;
  aq.batch_size = 1;
  const auto reg = attnsel::torch_sdpa_registry();
  attnsel::selector_options no_cache;
  no_cache.cache = false;
  const attnsel::selector bound(reg, p, attnsel::override_request{}, no_cache);
  const attnsel::selector cached(reg, p);
  const auto answer = attnsel::select(reg, aq, p);
  (void)cached.select(aq);

  volatile std::int64_t sink = 0;
  // A decode-like stream: every call a new key length (the cache keys lengths by class).
  attnsel::query stream = aq;
  std::uint32_t step = 0;
  std::vector<timed> calls;
  calls.push_back({"at::_fused_sdp_choice", 1, [&](long n) {
                     return ns_per_call(n, [&] {
                       sink = at::_fused_sdp_choice(q, k, v, std::nullopt, 0.0, false, std::nullopt, false);
                     });
                   }});
  calls.push_back({"attnsel::select (free)", 10, [&](long n) {
                     return ns_per_call(n, [&] {
                       const auto r = attnsel::select(reg, aq, p);
                       sink = static_cast<std::int64_t>(r.ok() ? r->rank : 0);
                     });
                   }});
  calls.push_back({"attnsel::selector::select (bound, no cache)", 10, [&](long n) {
                     return ns_per_call(n, [&] {
                       const auto r = bound.select(aq);
                       sink = static_cast<std::int64_t>(r.ok() ? r->rank : 0);
                     });
                   }});
  calls.push_back({"attnsel::selector::select (cache hit)", 10, [&](long n) {
                     return ns_per_call(n, [&] {
                       const auto r = cached.select(aq);
                       sink = static_cast<std::int64_t>(r.ok() ? r->rank : 0);
                     });
                   }});
  calls.push_back({"attnsel::selector::decide (cache hit)", 10, [&](long n) {
                     return ns_per_call(n, [&] {
                       const auto d = cached.decide(aq);
                       sink = static_cast<std::int64_t>(d.rank);
                     });
                   }});
  calls.push_back({"attnsel::selector::select (cached, a new key length each call)", 10, [&](long n) {
                     return ns_per_call(n, [&] {
                       stream.seq_len_kv = 2 + (step++ & 0xffffU);
                       const auto r = cached.select(stream);
                       sink = static_cast<std::int64_t>(r.ok() ? r->rank : 0);
                     });
                   }});
  // Rounds: each times torch, then every attnsel call, back to back, so that a shared host's drift
  // (other tenants, clock changes) moves a round's figures together and its ratios stay fair.
  constexpr int rounds = 9;
  for (int r = 0; r < rounds; ++r) {
    for (auto& c : calls) c.ns.push_back(c.run(iterations * c.scale));
    for (auto& c : calls) c.ratio.push_back(calls[0].ns.back() / c.ns.back());
  }

  std::printf("platform: %s\n", to_string(p).c_str());
  std::printf("torch choice: %s, attnsel choice: %s\n", torch_backend_name(torch_choice),
              answer.ok() ? std::string(answer->name()).c_str() : "error");
  std::printf("%d rounds; per call the median ns, and torch / this as the median of the rounds' ratios (min-max)\n",
              rounds);
  std::printf("| call | ns/call | torch / this | range |\n|---|---:|---:|---:|\n");
  for (const auto& c : calls) {
    const auto [lo, hi] = std::minmax_element(c.ratio.begin(), c.ratio.end());
    std::printf("| %s | %.1f | %.1fx | %.1f-%.1fx |\n", c.name, median(c.ns), median(c.ratio), *lo, *hi);
  }
  std::printf("cache: %llu hits, %llu misses\n", static_cast<unsigned long long>(cached.stats().hits),
              static_cast<unsigned long long>(cached.stats().misses));
  const bool same = answer.ok() && answer->name() == torch_backend_name(torch_choice);
  std::printf("same answer: %s\n", same ? "yes" : "NO");
  return same ? 0 : 1;
}

// SPDX-License-Identifier: Apache-2.0
// Replacement global operator new/delete that count allocations per thread, for the allocs/op counters.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace attnsel_bench {

namespace {
// Per-thread and trivially initialised: counting costs one TLS increment, threads never contend, and
// a benchmark reads only what its own thread allocated between two reads of the counter.
thread_local std::uint64_t allocations = 0;
thread_local std::uint64_t allocated_bytes = 0;

void* counted_alloc(std::size_t size) noexcept {
  ++allocations;
  allocated_bytes += size;
  return std::malloc(size == 0 ? 1 : size);
}

void* counted_aligned_alloc(std::size_t size, std::align_val_t align) noexcept {
  ++allocations;
  allocated_bytes += size;
  const auto a = static_cast<std::size_t>(align);
  void* p = nullptr;
  if (posix_memalign(&p, a < sizeof(void*) ? sizeof(void*) : a, size == 0 ? 1 : size) != 0) return nullptr;
  return p;
}
}  // namespace

/// Operator-new calls made by the calling thread since it started.
std::uint64_t allocation_count() noexcept { return allocations; }
/// Bytes requested through operator new by the calling thread since it started.
std::uint64_t allocation_bytes() noexcept { return allocated_bytes; }

}  // namespace attnsel_bench

void* operator new(std::size_t size) {
  if (void* p = attnsel_bench::counted_alloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = attnsel_bench::counted_alloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return attnsel_bench::counted_alloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return attnsel_bench::counted_alloc(size); }
void* operator new(std::size_t size, std::align_val_t align) {
  if (void* p = attnsel_bench::counted_aligned_alloc(size, align)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) {
  if (void* p = attnsel_bench::counted_aligned_alloc(size, align)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return attnsel_bench::counted_aligned_alloc(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return attnsel_bench::counted_aligned_alloc(size, align);
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

#include "perflow/core/huge_page_allocator.hpp"

#include <cstdint>
#include <cstdlib>
#include <new>

#include <sys/mman.h>

namespace perflow::detail {
namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kThreshold = std::size_t{1} << 20;

std::size_t rounded(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }
}  // namespace

void* allocate_large(std::size_t bytes) {
  if (bytes < kThreshold) return ::operator new(bytes);
  void* p = std::aligned_alloc(kHugePage, rounded(bytes));
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  (void)::madvise(p, rounded(bytes), MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  return p;
}

void deallocate_large(void* p, std::size_t bytes) noexcept {
  if (bytes < kThreshold) {
    ::operator delete(p);
  } else {
    std::free(p);
  }
}

void advise_huge_pages(void* p, std::size_t bytes) noexcept {
#ifdef MADV_HUGEPAGE
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + kHugePage - 1) / kHugePage * kHugePage;
  const std::uintptr_t last = (begin + bytes) / kHugePage * kHugePage;
  if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace perflow::detail

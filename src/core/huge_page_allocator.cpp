#include "perflow/core/huge_page_allocator.hpp"

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

}  // namespace perflow::detail

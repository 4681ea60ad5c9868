#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace perflow {
namespace detail {
/// Large blocks (>= 1 MiB) are 2 MiB-aligned and advised for transparent huge pages, so a
/// million-task graph takes hundreds instead of ~100k page faults; small ones use new.
void* allocate_large(std::size_t bytes);
void deallocate_large(void* p, std::size_t bytes) noexcept;
/// Advises the whole 2 MiB pages inside [p, p + bytes) for transparent huge pages, for large
/// buffers allocated elsewhere (a std::string about to be filled). Advice only: no effect
/// below a few MiB or where the kernel declines.
void advise_huge_pages(void* p, std::size_t bytes) noexcept;
}  // namespace detail

/// Element types a BigVector leaves unwritten when it grows: the trivial ones, and value
/// types whose default is a marker (an invalid id) that opt in by specializing this. A
/// builder fills every element of the arrays it sizes, so writing the marker first would
/// be one more pass over tens of megabytes (a 1M-task graph's ids and adjacency).
template <class T>
struct GrowsUnwritten : std::is_trivially_default_constructible<T> {};

/// A std::allocator for the big arrays of graphs and traces: first touch of fresh memory
/// (page faults) dominated building a 1M-task graph before huge pages.
template <class T>
struct HugePageAllocator {
  using value_type = T;

  HugePageAllocator() = default;
  template <class U>
  constexpr HugePageAllocator(const HugePageAllocator<U>& /*other*/) noexcept {}

  [[nodiscard]] T* allocate(std::size_t n) {
    return static_cast<T*>(detail::allocate_large(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { detail::deallocate_large(p, n * sizeof(T)); }
  /// Default-initializes: resize() and the size constructor leave new elements of trivial
  /// types, and of those that opt in through GrowsUnwritten, unwritten (their pages
  /// untouched until written), since every caller sizes an array to fill it; say a value
  /// (`assign(n, 0)`, `BigVector<TaskId> v(n, TaskId{})`) where one is meant.
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    if constexpr (std::is_trivially_default_constructible_v<U> || !GrowsUnwritten<U>::value) {
      ::new (static_cast<void*>(p)) U;  // for a trivial type: writes nothing
    } else {
      static_assert(std::is_trivially_copyable_v<U> && std::is_trivially_destructible_v<U>);
      // Begins the element's lifetime without writing it: memmove creates objects of
      // implicit-lifetime types in place, and a copy onto itself compiles to nothing.
      std::memmove(static_cast<void*>(p), static_cast<const void*>(p), sizeof(U));
    }
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <class U>
  friend constexpr bool operator==(const HugePageAllocator&, const HugePageAllocator<U>&) {
    return true;
  }
};

/// A vector of possibly millions of elements (tasks, edges).
template <class T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace perflow

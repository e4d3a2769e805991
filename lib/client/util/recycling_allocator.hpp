#pragma once
// An allocator for std::allocate_shared of the objects every lock cycle makes once (an
// acquisition's operation, the state of a held lock): one per lock in flight, made in
// bursts that outrun malloc's per-thread cache (seven blocks of a size), so that their
// malloc and free cost more than a node's command.
// Blocks of one type are kept, up to a bound, on the thread that frees them and handed
// out again by the next allocation on that thread (the loop thread makes and, mostly,
// frees them). Under AddressSanitizer and ThreadSanitizer every block is a plain new and
// delete: they follow each object's life through its allocation, and a use after free
// must still be caught.

#include <cstddef>
#include <memory>
#include <vector>

namespace redlock::detail {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool recycles_blocks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool recycles_blocks = false;
#else
inline constexpr bool recycles_blocks = true;
#endif
#else
inline constexpr bool recycles_blocks = true;
#endif

template <typename T>
class RecyclingAllocator {
 public:
  using value_type = T;

  RecyclingAllocator() noexcept = default;
  // Implicit: allocate_shared rebinds it to its control block's type.
  template <typename U>
  RecyclingAllocator(const RecyclingAllocator<U>& /*other*/) noexcept {}  // NOLINT

  T* allocate(std::size_t n) {
    makes = true;
    if (recycles_blocks && n == 1 && !gone) {
      auto& kept = spares();
      if (!kept.blocks.empty()) {
        void* block = kept.blocks.back();
        kept.blocks.pop_back();
        return static_cast<T*>(block);
      }
    }
    return std::allocator<T>().allocate(n);
  }

  void deallocate(T* block, std::size_t n) noexcept {
    if (recycles_blocks && n == 1 && makes && !gone) {
      auto& kept = spares();
      if (kept.blocks.size() < max_kept) {
        try {
          kept.blocks.push_back(block);
          return;
        } catch (...) {
          // No room to keep it: freed below.
        }
      }
    }
    std::allocator<T>().deallocate(block, n);
  }

  /// How many blocks this thread keeps (for tests).
  static std::size_t kept_on_this_thread() noexcept { return gone ? 0 : spares().blocks.size(); }

  template <typename U>
  bool operator==(const RecyclingAllocator<U>&) const noexcept {
    return true;
  }

 private:
  // A burst of W operations started in step holds W of each at once; beyond this bound
  // the surplus is freed as usual.
  static constexpr std::size_t max_kept = 256;

  // Set once this thread's spares are destroyed (its exit, or the main thread's static
  // destruction): a block freed after that, by a Lock destroyed then, is simply freed.
  // A plain bool, readable after every thread_local object with a destructor is gone.
  static inline thread_local bool gone = false;
  // This thread has made blocks of this type. One that only frees them (a caller's
  // thread destroying the Locks the loop thread made) would keep blocks nobody takes.
  static inline thread_local bool makes = false;

  struct Spares {
    std::vector<void*> blocks;
    ~Spares() {
      gone = true;
      for (void* block : blocks) std::allocator<T>().deallocate(static_cast<T*>(block), 1);
    }
  };

  static Spares& spares() {
    thread_local Spares kept;
    return kept;
  }
};

}  // namespace redlock::detail

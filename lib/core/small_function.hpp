#pragma once
// A move-only std::function with room for larger closures, and moves that cost a copy. A
// round's decision callback captures an engine, a keeper and the caller's callback (70-odd
// bytes), which std::function (16 bytes in place) put on the heap: this keeps closures up to
// `Capacity` bytes in place and larger ones on the heap, as std::function does. And a
// command's reply callbacks, which capture a pointer and an index, are moved five times on
// their way from a round to the connection and back: std::function calls its manager for
// each destruction; a closure that is trivially copyable is moved here as bytes and
// destroyed by nothing.

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace redlock::core {

template <typename Signature, std::size_t Capacity>
class SmallFunction;

template <typename R, typename... Args, std::size_t Capacity>
class SmallFunction<R(Args...), Capacity> {
 public:
  SmallFunction() noexcept = default;
  SmallFunction(std::nullptr_t) noexcept {}  // NOLINT(google-explicit-constructor)

  template <typename F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, SmallFunction> &&
           std::is_invocable_r_v<R, std::decay_t<F>&, Args...>)
      // Implicit, like std::function's: a lambda passes where a SmallFunction is taken.
      SmallFunction(F&& callable) {  // NOLINT(google-explicit-constructor)
    using Callable = std::decay_t<F>;
    if constexpr (in_place<Callable>) {
      ::new (static_cast<void*>(storage_)) Callable(std::forward<F>(callable));
      ops_ = &in_place_ops<Callable>;
    } else {
      *reinterpret_cast<Callable**>(storage_) = new Callable(std::forward<F>(callable));
      ops_ = &on_heap_ops<Callable>;
    }
  }

  /// A move leaves `other` empty (unlike std::function's, this is promised): a callback
  /// moved out of its slot is taken, and cannot run twice.
  SmallFunction(SmallFunction&& other) noexcept { take(other); }
  SmallFunction& operator=(SmallFunction&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  SmallFunction& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  SmallFunction(const SmallFunction&) = delete;
  SmallFunction& operator=(const SmallFunction&) = delete;
  ~SmallFunction() { reset(); }

  explicit operator bool() const noexcept { return ops_ != nullptr; }

  /// Const like std::function's: a closure captured by a lambda that is not mutable is
  /// still called, and may change its own captures.
  R operator()(Args... args) const { return ops_->call(storage_, std::forward<Args>(args)...); }

 private:
  struct Ops {
    R (*call)(void* storage, Args&&... args);
    void (*move)(void* from, void* to) noexcept;  // leaves `from` destroyed
    void (*destroy)(void* storage) noexcept;
    bool trivial = false;  // kept in place, trivially copyable: moved as bytes, never destroyed
  };

  template <typename Callable>
  static constexpr bool in_place = sizeof(Callable) <= Capacity &&
                                   alignof(Callable) <= alignof(std::max_align_t) &&
                                   std::is_nothrow_move_constructible_v<Callable>;

 public:
  /// Whether a closure of type F is kept in place (no allocation), for a static_assert
  /// where a hot path relies on it.
  template <typename F>
  static constexpr bool keeps_in_place = in_place<std::decay_t<F>>;
  /// Whether a closure of type F is moved as bytes and destroyed by nothing.
  template <typename F>
  static constexpr bool moves_as_bytes =
      in_place<std::decay_t<F>>&& std::is_trivially_copyable_v<std::decay_t<F>>;

 private:
  template <typename Callable>
  static constexpr Ops in_place_ops{
      [](void* storage, Args&&... args) -> R {
        return (*std::launder(static_cast<Callable*>(storage)))(std::forward<Args>(args)...);
      },
      [](void* from, void* to) noexcept {
        auto* callable = std::launder(static_cast<Callable*>(from));
        ::new (to) Callable(std::move(*callable));
        callable->~Callable();
      },
      [](void* storage) noexcept { std::launder(static_cast<Callable*>(storage))->~Callable(); },
      std::is_trivially_copyable_v<Callable>};

  template <typename Callable>
  static constexpr Ops on_heap_ops{
      [](void* storage, Args&&... args) -> R {
        return (**static_cast<Callable**>(storage))(std::forward<Args>(args)...);
      },
      [](void* from, void* to) noexcept {
        *static_cast<Callable**>(to) = *static_cast<Callable**>(from);
      },
      [](void* storage) noexcept { delete *static_cast<Callable**>(storage); }, false};

  void take(SmallFunction& other) noexcept {
    if (other.ops_ == nullptr) return;
    if (other.ops_->trivial) {
      std::memcpy(storage_, other.storage_, Capacity);
    } else {
      other.ops_->move(other.storage_, storage_);
    }
    ops_ = std::exchange(other.ops_, nullptr);
  }

  void reset() noexcept {
    if (ops_ == nullptr) return;
    const Ops* ops = std::exchange(ops_, nullptr);
    if (!ops->trivial) ops->destroy(storage_);
  }

  static_assert(Capacity >= sizeof(void*), "room for at least the heap pointer");
  // Zeroed first: a closure moved as bytes is copied whole, padding and the unused rest too.
  alignas(std::max_align_t) mutable unsigned char storage_[Capacity] = {};
  const Ops* ops_ = nullptr;
};

}  // namespace redlock::core

#pragma once
// A move-only std::function with room for larger closures. std::function keeps a closure
// in place only up to 16 bytes (two pointers); a round's decision callback usually
// captures an engine, a keeper and the caller's callback (70-odd bytes), so each round
// paid an allocation and a free for it. This one keeps closures up to `Capacity` bytes in
// place and puts larger ones on the heap, as std::function does.

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace redlock::detail {

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
      [](void* storage) noexcept { std::launder(static_cast<Callable*>(storage))->~Callable(); }};

  template <typename Callable>
  static constexpr Ops on_heap_ops{
      [](void* storage, Args&&... args) -> R {
        return (**static_cast<Callable**>(storage))(std::forward<Args>(args)...);
      },
      [](void* from, void* to) noexcept {
        *static_cast<Callable**>(to) = *static_cast<Callable**>(from);
      },
      [](void* storage) noexcept { delete *static_cast<Callable**>(storage); }};

  void take(SmallFunction& other) noexcept {
    if (other.ops_ == nullptr) return;
    other.ops_->move(other.storage_, storage_);
    ops_ = std::exchange(other.ops_, nullptr);
  }

  void reset() noexcept {
    if (ops_ == nullptr) return;
    std::exchange(ops_, nullptr)->destroy(storage_);
  }

  static_assert(Capacity >= sizeof(void*), "room for at least the heap pointer");
  alignas(std::max_align_t) mutable unsigned char storage_[Capacity];
  const Ops* ops_ = nullptr;
};

}  // namespace redlock::detail

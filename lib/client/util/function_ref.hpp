#pragma once
// A non-owning reference to a callable, for callbacks that are called only before the
// function taking them returns (a round's "send to this node"). Unlike std::function it
// never allocates, however much the callable captures.

#include <memory>
#include <type_traits>
#include <utility>

namespace redlock::detail {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
           std::is_invocable_r_v<R, F&, Args...>)
      // Implicit, like std::function's: a lambda passes where a FunctionRef is taken.
      FunctionRef(F&& callable)
  noexcept  // NOLINT(google-explicit-constructor)
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(callable)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace redlock::detail

#pragma once
// An expected-like type of our own: std::expected needs C++23.

#include <cassert>
#include <optional>
#include <stdexcept>
#include <utility>
#include <variant>

#include <redlock/error.hpp>
#include <redlock/export.hpp>

namespace redlock {

/// Thrown only by Result::value() on an error result (a programmer error: check first).
class REDLOCK_EXPORT BadResultAccess : public std::logic_error {
 public:
  /// The message names the error the result held.
  explicit BadResultAccess(const Error& error)
      : std::logic_error("redlock::Result holds an error: " + error.message()) {}
};

/// Either a T or an Error. `if (r) use(*r); else log(r.error().message());`
template <typename T>
class [[nodiscard]] Result {
 public:
  /// A result holding `value` (implicit, so a function can `return value;`).
  Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}
  /// A result holding `error` (implicit, so a function can `return error;`).
  Result(Error error) : storage_(std::in_place_index<1>, std::move(error)) {}

  /// True when the result holds a value.
  bool has_value() const noexcept { return storage_.index() == 0; }
  /// has_value().
  explicit operator bool() const noexcept { return has_value(); }

  ///@{
  /// The value; only on a result that has one (checked by an assert, not at run time in
  /// a release build: test the result first, or use value()).
  T& operator*() & {
    assert(has_value());
    return std::get<0>(storage_);
  }
  const T& operator*() const& {
    assert(has_value());
    return std::get<0>(storage_);
  }
  T&& operator*() && {
    assert(has_value());
    return std::get<0>(std::move(storage_));
  }
  T* operator->() {
    assert(has_value());
    return &std::get<0>(storage_);
  }
  const T* operator->() const {
    assert(has_value());
    return &std::get<0>(storage_);
  }
  ///@}

  ///@{
  /// The value; throws BadResultAccess when the result holds an error.
  T& value() & {
    check();
    return std::get<0>(storage_);
  }
  T&& value() && {
    check();
    return std::get<0>(std::move(storage_));
  }
  ///@}

  ///@{
  /// The error; only on a result that holds one (checked by an assert).
  const Error& error() const& {
    assert(!has_value());
    return std::get<1>(storage_);
  }
  Error&& error() && {
    assert(!has_value());
    return std::get<1>(std::move(storage_));
  }
  ///@}
  /// The error code, or an empty error_code on success.
  std::error_code code() const noexcept {
    return has_value() ? std::error_code{} : std::get<1>(storage_).code();
  }

 private:
  void check() const {
    if (!has_value()) throw BadResultAccess(std::get<1>(storage_));
  }
  std::variant<T, Error> storage_;
};

/// Success without a value, or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  /// Success.
  Result() = default;
  /// A result holding `error` (implicit, so a function can `return error;`).
  Result(Error error) : error_(std::move(error)) {}

  /// True on success.
  bool has_value() const noexcept { return !error_.has_value(); }
  /// has_value().
  explicit operator bool() const noexcept { return has_value(); }
  ///@{
  /// The error; only on a result that holds one (checked by an assert).
  const Error& error() const& {
    assert(!has_value());
    return *error_;
  }
  Error&& error() && {
    assert(!has_value());
    return std::move(*error_);
  }
  ///@}
  /// The error code, or an empty error_code on success.
  std::error_code code() const noexcept { return error_ ? error_->code() : std::error_code{}; }

 private:
  std::optional<Error> error_;
};

}  // namespace redlock

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
  explicit BadResultAccess(const Error& error)
      : std::logic_error("redlock::Result holds an error: " + error.message()) {}
};

/// Either a T or an Error. `if (r) use(*r); else log(r.error().message());`
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : storage_(std::in_place_index<1>, std::move(error)) {}

  bool has_value() const noexcept { return storage_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

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

  T& value() & {
    check();
    return std::get<0>(storage_);
  }
  T&& value() && {
    check();
    return std::get<0>(std::move(storage_));
  }

  const Error& error() const& {
    assert(!has_value());
    return std::get<1>(storage_);
  }
  Error&& error() && {
    assert(!has_value());
    return std::get<1>(std::move(storage_));
  }
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
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}

  bool has_value() const noexcept { return !error_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  const Error& error() const& {
    assert(!has_value());
    return *error_;
  }
  Error&& error() && {
    assert(!has_value());
    return std::move(*error_);
  }
  std::error_code code() const noexcept { return error_ ? error_->code() : std::error_code{}; }

 private:
  std::optional<Error> error_;
};

}  // namespace redlock

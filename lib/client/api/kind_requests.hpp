#pragma once
// What the arguments of each acquisition make of its kind of lock, or why they are
// refused (errc::invalid_argument naming the call and the field): the key's and the
// options' checks every kind shares, then the kind's own (a semaphore's K and quorum,
// no fencing for readers and permits, a key set's keys).

#include <span>
#include <string>
#include <string_view>

#include <redlock/options.hpp>
#include <redlock/result.hpp>
#include <redlock/semaphore.hpp>

#include "client/kinds/kind.hpp"

namespace redlock::detail {

class Engine;

Result<Kind> exclusive_of(const Engine& engine, std::string_view key, const LockOptions& options);
Result<Kind> permit_of(const Engine& engine, std::string_view key, const SemaphoreOptions& options);
/// A read (`writer` false) or write hold of the read-write lock `key`.
Result<Kind> rw_of(const Engine& engine, std::string_view key, const LockOptions& options,
                   bool writer);
Result<Kind> keys_of(const Engine& engine, std::span<const std::string> keys,
                     const LockOptions& options);
/// The quorum of a semaphore of `permits` (`quorum` 0: the smallest safe one).
Result<int> permit_quorum(const Engine& engine, int permits, int quorum);

}  // namespace redlock::detail

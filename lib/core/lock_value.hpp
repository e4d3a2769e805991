#pragma once
// The value that identifies one holder on every node: 128 bits from OpenSSL's CSPRNG
// (RAND_bytes, seeded by the operating system on every platform OpenSSL supports), so that
// no other client can guess it and release our lock, and two acquisitions never share one.

#include <cstddef>
#include <string>

namespace redlock::core {

/// A source of cryptographically strong bytes with RAND_bytes' contract: fills `size`
/// bytes and returns 1, or returns anything else when it could not.
using EntropySource = int (*)(unsigned char* buffer, int size);

/// Fills `size` bytes from `source` (nullptr: OpenSSL's RAND_bytes). Aborts if the source
/// fails: there is no safe fallback for a lock owner's identity, and a predictable value
/// would let another client release or extend our lock.
void fill_random(void* buffer, std::size_t size, EntropySource source = nullptr);

/// The characters of a lock value.
inline constexpr std::size_t lock_value_size = 32;

/// 32 lowercase hex characters from `source` (nullptr: RAND_bytes, drawn 32 values at a
/// time per thread; a forked child never reuses its parent's); aborts as fill_random.
std::string new_lock_value(EntropySource source = nullptr);
/// new_lock_value() written over `into`, in the storage it already has when that is large
/// enough (a string kept for reuse).
void write_lock_value(std::string& into, EntropySource source = nullptr);

}  // namespace redlock::core

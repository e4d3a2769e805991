#pragma once
// The value that identifies one holder on every node: 128 bits from the operating
// system's CSPRNG, so that no other client can guess it and release our lock, and two
// acquisitions never share one.

#include <cstddef>
#include <string>

namespace redlock::core {

/// Fills `size` bytes from getrandom(2). Aborts if the kernel cannot supply them (there
/// is no safe fallback for a lock owner's identity).
void fill_random(void* buffer, std::size_t size);

/// 32 lowercase hex characters.
std::string new_lock_value();

}  // namespace redlock::core

#pragma once
// REDLOCK_EXPORT marks the public API. The library is compiled with hidden visibility,
// so that a shared libredlock exports these symbols and nothing of lib/; in the static
// archive the attribute changes nothing.

#if defined(__GNUC__) || defined(__clang__)
#define REDLOCK_EXPORT __attribute__((visibility("default")))
#else
#define REDLOCK_EXPORT
#endif

#pragma once
// Switches that exist only so tests can prove a safety step is needed: with the step
// turned off, the test that guards it must fail. Never touched by production code paths
// other than to read them.

#include <atomic>

namespace redlock::detail::test_hooks {

/// Skips step 3 of the fencing design (raising every granted node's counter to the
/// token before the lock is handed out).
extern std::atomic<bool> skip_fencing_write_back;

}  // namespace redlock::detail::test_hooks

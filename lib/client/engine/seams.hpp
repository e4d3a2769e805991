#pragma once
// Steps a test may turn off to prove they are needed: with the step skipped, the test
// that guards it must fail. Given to one engine when it is made (Engine::create, through
// ClientAccess), fixed for its life; a client made by Client::create has every step on.

namespace redlock::detail {

struct Seams {
  /// Skips step 3 of the fencing design (raising every granted node's counter to the
  /// token before the lock is handed out).
  bool skip_fencing_write_back = false;
};

}  // namespace redlock::detail

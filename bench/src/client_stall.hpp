#pragma once
// Fault injection on the client side: the whole bench process stops for a while, as in
// a VM steal, a swap-in or a stop-the-world pause, while the nodes keep answering.
// Replies then wait in the socket buffers; what the client does with them when it runs
// again is what such a run shows.

#include <chrono>

namespace redlock_bench {

/// Stops this process (every thread) with SIGSTOP for `length`, from a forked helper that
/// sends SIGCONT afterwards. Returns at once; the stop begins within microseconds.
void stall_this_process(std::chrono::milliseconds length);

}  // namespace redlock_bench

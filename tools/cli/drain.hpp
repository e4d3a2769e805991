#pragma once
// Before a short-lived process closes its client: let the commands already sent reach
// the nodes.
//
// The library decides a round as soon as the outcome is settled (a quorum released, a
// quorum refused) and sends a failed attempt's clean-up releases without waiting for
// them. Client::close() then drops whatever is still in flight, so a process that exits
// right after such a round can leave its value on a minority of nodes for a whole TTL,
// where it makes the next acquisition need every other node.

#include <string_view>

#include <redlock/client.hpp>

namespace redlock::cli {

/// Returns once every node that is up has answered everything this client sent it so far
/// (each node's commands are answered in order, so one more round that waits for every
/// node is a barrier), or after that round's per-node deadline.
void drain(Client& client, std::string_view key);

}  // namespace redlock::cli

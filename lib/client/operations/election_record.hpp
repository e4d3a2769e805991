#pragma once
// The I/O of leader election (redlock::Election): the leader's record written beside the
// election's key, and both read back from every member (scripts/election_scripts.hpp).
// Deciding who leads from what the members answered is core/election.hpp's.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <redlock/result.hpp>

#include "core/election.hpp"

namespace redlock::detail {

class Engine;

/// The leader's record written on every member where `key` still holds `value`. Succeeds
/// once a quorum wrote it; otherwise the error names each member's answer.
void start_proclaim(const std::shared_ptr<Engine>& engine, std::string key, std::string value,
                    std::string record, std::chrono::milliseconds node_timeout,
                    std::function<void(Result<void>)> done);

/// Each member's holder of `key`, its remaining TTL and leader record, in the order of
/// Options::nodes (waits for all, each up to `node_timeout`). A key of another kind is
/// errc::wrong_kind; fewer than a quorum of answers is errc::quorum_unreachable.
void start_leader_read(const std::shared_ptr<Engine>& engine, std::string key,
                       std::chrono::milliseconds node_timeout,
                       std::function<void(Result<std::vector<core::MemberLeaderView>>)> done);

}  // namespace redlock::detail

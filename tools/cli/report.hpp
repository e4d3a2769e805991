#pragma once
// Everything `redlock` says on stderr: one line per problem, each prefixed "redlock: ",
// so that cron mail and CI logs show which program complained.

#include <string_view>

#include <redlock/error.hpp>

namespace redlock::cli {

/// "redlock: <message>".
void report(std::string_view message);

/// A failed operation: one line naming what failed and how many nodes agreed, then one
/// line per node that did not agree, with its cause. For contention the nodes that
/// merely hold the lock for another owner are summed up rather than listed.
/// `quorum` (0 = unknown) is shown as the number of nodes that had to agree.
void report_failure(std::string_view what, const Error& error, int quorum = 0);

}  // namespace redlock::cli

#pragma once
// The kit's Sentinel group (testing/sentinel_group.hpp), under the tests' spelling.

#include "redis_server.hpp"
#include "testing/sentinel_group.hpp"

namespace redlock::test {

using redlock::testing::detail::SentinelGroup;
using redlock::testing::detail::SentinelGroupOptions;

}  // namespace redlock::test

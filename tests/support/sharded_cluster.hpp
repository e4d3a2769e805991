#pragma once
// The kit's Redis Cluster (testing/sharded_cluster.hpp), under the tests' spelling.

#include "redis_server.hpp"
#include "testing/sharded_cluster.hpp"

namespace redlock::test {

using redlock::testing::detail::ShardedCluster;
using redlock::testing::detail::ShardedClusterOptions;

}  // namespace redlock::test

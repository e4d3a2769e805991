#pragma once
// The project's tests start servers with the kit's own server class (testing/), so that
// the tests, the chaos suite and redlock::testing share one way to start, fault and stop a
// redis-server. These names keep the tests' spelling.

#include <redlock/testing/redis_binary.hpp>

#include "testing/redis_server.hpp"

namespace redlock::test {

using redlock::testing::redis_cli_binary;
using redlock::testing::redis_server_binary;
using redlock::testing::detail::RedisCluster;
using redlock::testing::detail::RedisServer;
using redlock::testing::detail::RedisServerOptions;
using redlock::testing::detail::Reply;
using redlock::testing::detail::test_certificates;
using redlock::testing::detail::TestCertificates;
using redlock::testing::detail::TlsClientAuth;

}  // namespace redlock::test

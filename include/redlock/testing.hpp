#pragma once
/// @file
/// Umbrella header of redlock::testing, the fault kit for tests of code that uses redlock:
/// real redis-server processes on loopback, with faults (pause, kill, restart, network cut,
/// slow replies) applied one member at a time, and, run as root, kernel partitions of
/// members in network namespaces of their own. Link redlock::testing
/// (find_package(redlock COMPONENTS testing), or pkg-config redlock-testing);
/// docs/testing-kit.md has an example.

#include <redlock/testing/eventually.hpp>
#include <redlock/testing/fleet.hpp>
#include <redlock/testing/member.hpp>
#include <redlock/testing/redis_binary.hpp>
#include <redlock/testing/unsupported.hpp>

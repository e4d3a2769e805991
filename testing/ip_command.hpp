#pragma once
// The ip command (iproute2), which makes and breaks a fleet's network namespaces and links.

#include <string>
#include <vector>

#include "child_process.hpp"

namespace redlock::testing::detail {

/// The ip command: the first `ip` on $PATH, else /usr/sbin/ip, /sbin/ip or /bin/ip
/// ($PATH of a user often lacks the sbin directories); "" when there is none.
std::string ip_binary();

/// Runs `ip args...` to its end, throwing nothing.
Finished try_ip(const std::vector<std::string>& args);

/// Runs `lines` (ip commands without the leading "ip", e.g. "link set lo up") in one
/// `ip -batch -`, inside the namespace `ns` (its name; "" for the caller's own), stopping
/// at the first that fails. Throwing nothing.
Finished try_ip_batch(const std::string& ns, const std::vector<std::string>& lines);

}  // namespace redlock::testing::detail

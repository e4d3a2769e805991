#include "address_block.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ip_command.hpp"
#include "netns_guardian.hpp"

namespace redlock::testing::detail {
namespace {

constexpr std::uint32_t block_mask = 0xFFFF0000u;

// An address range in host byte order: first and last address.
using Range = std::pair<std::uint32_t, std::uint32_t>;

Range range_of(std::uint32_t address, std::uint32_t mask) {
  return {address & mask, (address & mask) | ~mask};
}

// Every address of this namespace's interfaces, and every IPv4 route's destination but
// the default route's (/proc/net/route lists the main table, throw routes included).
std::vector<Range> taken() {
  std::vector<Range> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (const ifaddrs* each = list; each != nullptr; each = each->ifa_next) {
      if (each->ifa_addr == nullptr || each->ifa_addr->sa_family != AF_INET) continue;
      const std::uint32_t address =
          ntohl(reinterpret_cast<const sockaddr_in*>(each->ifa_addr)->sin_addr.s_addr);
      out.push_back({address, address});
    }
    ::freeifaddrs(list);
  }
  std::ifstream routes("/proc/net/route");
  std::string line;
  std::getline(routes, line);  // the header
  while (std::getline(routes, line)) {
    std::istringstream fields(line);
    std::string device, destination, gateway, flags, refcnt, use, metric, mask;
    if (!(fields >> device >> destination >> gateway >> flags >> refcnt >> use >> metric >> mask)) {
      continue;
    }
    // The kernel prints each big-endian address as a native integer.
    const auto raw = [](const std::string& hex) {
      return ntohl(static_cast<std::uint32_t>(std::stoul(hex, nullptr, 16)));
    };
    const std::uint32_t route_mask = raw(mask);
    if (route_mask == 0) continue;
    out.push_back(range_of(raw(destination), route_mask));
  }
  return out;
}

bool overlaps(const Range& a, const Range& b) {
  return a.first <= b.second && b.first <= a.second;
}

std::vector<std::uint32_t> candidates() {
  std::vector<std::uint32_t> out;
  for (std::uint32_t second = 200; second <= 254; ++second)
    out.push_back((10u << 24) | (second << 16));
  for (std::uint32_t second = 16; second <= 31; ++second) {
    out.push_back((172u << 24) | (second << 16));
  }
  return out;
}

// Held while a block is chosen and claimed.
class LockFile {
 public:
  LockFile() {
    for (const char* path :
         {"/run/lock/redlock-testing-netns.lock", "/tmp/redlock-testing-netns.lock"}) {
      fd_ = ::open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (fd_ >= 0) break;
    }
    if (fd_ < 0) throw std::runtime_error(std::string("lock file: ") + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~LockFile() { ::close(fd_); }
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

std::string AddressBlock::cidr() const {
  return address(0, 0) + "/16";
}

std::string AddressBlock::address(unsigned third, unsigned fourth) const {
  return std::to_string(base >> 24) + "." + std::to_string((base >> 16) & 0xFF) + "." +
         std::to_string(third) + "." + std::to_string(fourth);
}

AddressBlock claim_address_block(NetnsGuardian& guardian) {
  const LockFile lock;
  const std::vector<Range> used = taken();
  const std::vector<std::uint32_t> blocks = candidates();
  // Processes start their search at blocks of their own: a block another process's fleet
  // left is then seldom the next one's, should its routes still be going.
  const std::size_t start = static_cast<std::size_t>(::getpid()) % blocks.size();
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const AddressBlock block{blocks[(start + i) % blocks.size()]};
    const Range range = range_of(block.base, block_mask);
    bool free = true;
    for (const Range& each : used) free = free && !overlaps(range, each);
    if (!free) continue;
    guardian.undo("route del throw " + block.cidr());
    // Another program may have taken it without our lock: then the next one.
    if (try_ip({"route", "add", "throw", block.cidr()}).ok()) return block;
  }
  throw std::runtime_error(
      "no /16 of 10.200.0.0-10.254.255.255 or 172.16.0.0/12 is free for the fleet's links: "
      "every one overlaps an address or a route of this network namespace");
}

}  // namespace redlock::testing::detail

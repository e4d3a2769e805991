#include "raw_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace redlock::chaos::test {

std::string resp(const std::vector<std::string>& argv) {
  std::string out = "*" + std::to_string(argv.size()) + "\r\n";
  for (const auto& arg : argv) out += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
  return out;
}

RawClient::RawClient(std::uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    ::close(fd_);
    throw std::runtime_error("connect to port " + std::to_string(port) + ": " +
                             std::strerror(error));
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

RawClient::~RawClient() {
  ::close(fd_);
}

void RawClient::send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("send: ") + std::strerror(errno));
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

RawClient::Read RawClient::read(std::size_t size, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  Read result;
  while (result.bytes.size() < size) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return result;
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::recv(fd_, buffer, std::min(sizeof buffer, size - result.bytes.size()), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      result.status = Status::closed;
      return result;
    }
    if (n < 0) {
      result.status = errno == ECONNRESET ? Status::reset : Status::closed;
      return result;
    }
    result.bytes.append(buffer, static_cast<std::size_t>(n));
  }
  result.status = Status::data;
  return result;
}

bool RawClient::round_trip(std::string_view request, std::string_view reply,
                           std::chrono::milliseconds timeout) {
  send(request);
  const Read got = read(reply.size(), timeout);
  return got.status == Status::data && got.bytes == reply;
}

}  // namespace redlock::chaos::test

#include "loopback.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace redlock::testing::detail {
namespace {

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  return address;
}

// A blocking socket that gives up after 2 s: a paused or foreign server must not hang
// the fleet.
class Connection {
 public:
  explicit Connection(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    timeval timeout{2, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    const sockaddr_in address = loopback(port);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool open() const { return fd_ >= 0; }

  bool send(const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // One line without its CRLF; false on EOF, error or timeout.
  bool line(std::string& out) {
    for (;;) {
      if (const auto end = buffer_.find("\r\n"); end != std::string::npos) {
        out = buffer_.substr(0, end);
        buffer_.erase(0, end + 2);
        return true;
      }
      if (!fill()) return false;
    }
  }

  // `size` bytes and the CRLF after them.
  bool bytes(std::size_t size, std::string& out) {
    while (buffer_.size() < size + 2) {
      if (!fill()) return false;
    }
    out = buffer_.substr(0, size);
    buffer_.erase(0, size + 2);
    return true;
  }

 private:
  bool fill() {
    char chunk[4096];
    ssize_t n;
    do {
      n = ::recv(fd_, chunk, sizeof chunk, 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string buffer_;
};

}  // namespace

std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address = loopback(0);
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::runtime_error(std::string("no free loopback port: ") + std::strerror(error));
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

Probe probe(std::uint16_t port, pid_t pid) {
  Connection connection(port);
  // INFO answers while an append-only file loads; PING says LOADING until it is done.
  if (!connection.open() ||
      !connection.send("*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n*1\r\n$4\r\nPING\r\n")) {
    return Probe::silent;
  }
  std::string header;
  if (!connection.line(header) || header.empty() || header[0] != '$') return Probe::silent;
  std::string info;
  if (!connection.bytes(std::stoul(header.substr(1)), info)) return Probe::silent;
  if (info.find("process_id:" + std::to_string(pid) + "\r") == std::string::npos) {
    return Probe::foreign;
  }
  std::string pong;
  return connection.line(pong) && pong == "+PONG" ? Probe::ready : Probe::silent;
}

}  // namespace redlock::testing::detail

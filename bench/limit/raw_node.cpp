#include "raw_node.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace redlock_limit {

namespace {

std::runtime_error failure(const std::string& node, const std::string& what) {
  return std::runtime_error(node + ": " + what);
}

std::string host_and_port(const std::string& address) {
  std::string rest = address;
  if (const auto scheme = rest.find("://"); scheme != std::string::npos) {
    if (rest.substr(0, scheme) != "redis") {
      throw failure(address, "only redis:// or host:port nodes (no TLS, no unix socket)");
    }
    rest = rest.substr(scheme + 3);
  }
  if (const auto slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
  if (rest.find('@') != std::string::npos) {
    throw failure(address, "credentials are not supported: the limit sends no AUTH");
  }
  return rest;
}

}  // namespace

RawNode::RawNode(const std::string& address, std::chrono::milliseconds timeout)
    : name_(host_and_port(address)), buffer_(1 << 16, '\0') {
  const auto colon = name_.rfind(':');
  if (colon == std::string::npos) throw failure(address, "expected host:port");
  std::string host = name_.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string port = name_.substr(colon + 1);

  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int error = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); error != 0) {
    throw failure(name_, ::gai_strerror(error));
  }
  int last_errno = 0;
  for (addrinfo* each = found; each != nullptr && fd_ < 0; each = each->ai_next) {
    fd_ = ::socket(each->ai_family, each->ai_socktype | SOCK_CLOEXEC, each->ai_protocol);
    if (fd_ < 0) continue;
    if (::connect(fd_, each->ai_addr, each->ai_addrlen) != 0) {
      last_errno = errno;
      ::close(fd_);
      fd_ = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd_ < 0) throw failure(name_, std::strerror(last_errno));

  // Commands go out in one write per batch; Nagle would hold the next batch back until
  // the previous one's ACK.
  const int on = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(timeout - seconds);
  timeval limit{static_cast<time_t>(seconds.count()), static_cast<suseconds_t>(micros.count())};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
}

RawNode::~RawNode() {
  if (fd_ >= 0) ::close(fd_);
}

RawNode::RawNode(RawNode&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      name_(std::move(other.name_)),
      buffer_(std::move(other.buffer_)),
      start_(other.start_),
      end_(other.end_) {}

void RawNode::send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) throw failure(name_, "stopped reading");
      throw failure(name_, std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
}

void RawNode::receive() {
  if (start_ > 0 && start_ == end_) start_ = end_ = 0;
  if (end_ == buffer_.size()) {
    // Room for more at the back: move the unconsumed tail to the front, or grow when a
    // single batch of replies is larger than the buffer.
    const std::size_t kept = end_ - start_;
    if (start_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + start_, kept);
    } else {
      buffer_.resize(buffer_.size() * 2);
    }
    start_ = 0;
    end_ = kept;
  }
  for (;;) {
    const ssize_t got = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (got > 0) {
      end_ += static_cast<std::size_t>(got);
      return;
    }
    if (got == 0) throw failure(name_, "closed the connection");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) throw failure(name_, "did not answer in time");
    throw failure(name_, std::strerror(errno));
  }
}

void RawNode::consume(std::size_t count) noexcept {
  start_ += count;
}

}  // namespace redlock_limit

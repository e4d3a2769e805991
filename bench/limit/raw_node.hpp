#pragma once
// One node reached through a bare TCP socket: no client library, no event loop, so what
// a cycle costs here is the least any client pays. The socket blocks, with a timeout in
// both directions: the lockstep polls before it reads, so a read never waits for
// nothing, and a batch of commands fits the socket buffer, so a write waits only for a
// node that stopped reading — which the timeout turns into an error.

#include <chrono>
#include <string>
#include <string_view>

namespace redlock_limit {

class RawNode {
 public:
  /// Connects to "host:port" or "redis://host:port" (no credentials, no TLS: the limit
  /// is measured on plain local nodes). Throws std::runtime_error naming the node.
  RawNode(const std::string& address, std::chrono::milliseconds timeout);
  ~RawNode();
  RawNode(RawNode&& other) noexcept;
  RawNode& operator=(RawNode&&) = delete;
  RawNode(const RawNode&) = delete;
  RawNode& operator=(const RawNode&) = delete;

  int fd() const noexcept { return fd_; }
  /// host:port, for messages and for the side channel that reads INFO.
  const std::string& name() const noexcept { return name_; }

  /// Writes all of `bytes`; throws when the node stops reading for the timeout.
  void send(std::string_view bytes);
  /// Reads what has arrived (waiting up to the timeout when nothing has) and keeps it
  /// after pending(); throws when the node closed the connection or stayed silent.
  void receive();
  std::string_view pending() const noexcept { return {buffer_.data() + start_, end_ - start_}; }
  /// Drops the first `count` bytes of pending(), the replies already taken.
  void consume(std::size_t count) noexcept;

 private:
  int fd_ = -1;
  std::string name_;
  // Pending bytes are buffer_[start_, end_); the space before start_ is reused once the
  // replies in front are consumed, so the buffer is allocated once.
  std::string buffer_;
  std::size_t start_ = 0;
  std::size_t end_ = 0;
};

}  // namespace redlock_limit

#pragma once
// A blocking loopback TCP client with deadlines, for tests that must tell "no reply yet"
// from "connection closed" from "connection reset" (which a Redis client library blurs).

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::chaos::test {

/// RESP encoding of a command, e.g. resp({"SET", "k", "v"}).
std::string resp(const std::vector<std::string>& argv);

class RawClient {
 public:
  enum class Status { data, timeout, closed, reset };
  struct Read {
    Status status = Status::timeout;
    std::string bytes;  ///< whatever arrived, even when the status is not data
  };

  /// Connects to 127.0.0.1:`port`. Throws std::runtime_error on failure.
  explicit RawClient(std::uint16_t port);
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  /// Throws std::runtime_error on failure.
  void send(std::string_view bytes);
  /// Waits until `size` bytes arrived (data), the peer closed or reset the connection, or
  /// `timeout` passed.
  Read read(std::size_t size, std::chrono::milliseconds timeout);
  /// send() then read() of exactly `reply.size()` bytes; true iff they equal `reply`.
  bool round_trip(std::string_view request, std::string_view reply,
                  std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

 private:
  int fd_ = -1;
};

}  // namespace redlock::chaos::test

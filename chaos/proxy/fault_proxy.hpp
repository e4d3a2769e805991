#pragma once
// A TCP proxy in front of one Redis node that injects network faults on demand: the
// chaos suite points clients at proxies instead of nodes, then partitions, slows down or
// resets them. Everything stays on loopback; no iptables, namespaces or netem.
//
// The proxy owns a libuv loop on its own thread. Every public method may be called from
// any other thread and returns once the loop has applied it, so traffic sent after the
// call sees the change. (There are no callbacks, so no method is ever called on the
// loop thread.)

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "proxy/fault_settings.hpp"

namespace redlock::chaos {

class FaultProxy {
 public:
  /// Listens on 127.0.0.1:`listen_port` (0: a port the kernel picks, see port()) and
  /// forwards each accepted connection to `upstream_host`:`upstream_port`, where
  /// `upstream_host` is an IPv4 or IPv6 literal. Starts in ProxyMode::pass with no
  /// latency. Throws std::runtime_error when it cannot listen or the host is not a literal.
  FaultProxy(const std::string& upstream_host, std::uint16_t upstream_port,
             std::uint16_t listen_port = 0);
  /// Closes every connection and joins the loop thread. Connections are closed normally
  /// (FIN), except that the kernel sends an RST for a socket with unread bytes.
  ~FaultProxy();

  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  /// The port clients connect to.
  std::uint16_t port() const { return port_; }

  /// Applies to bytes that arrive from now on and to bytes still waiting in a delay line.
  void set_mode(ProxyMode mode);
  ProxyMode mode() const;
  /// Fixed delay added to every byte travelling in `direction`, preserving order. Bytes
  /// already waiting keep the delay they had when they arrived.
  void set_latency(Direction direction, std::chrono::milliseconds delay);
  std::chrono::milliseconds latency(Direction direction) const;
  /// Closes every open client connection with an RST (and its upstream side normally).
  /// New connections are accepted as before.
  void reset_all();
  /// Sends connections accepted from now on to `host`:`port` (an IP literal) and closes
  /// every open client connection with an RST, as an operator or Sentinel moving a
  /// member's address to a promoted replica would. Throws std::runtime_error when the host
  /// is not a literal.
  void retarget(const std::string& host, std::uint16_t port);
  ProxyStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uint16_t port_ = 0;
};

}  // namespace redlock::chaos

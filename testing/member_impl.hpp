#pragma once
// The state behind a Member, shared by member.cpp (the verbs) and fleet.cpp (which
// makes members).

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <redlock/testing/fleet.hpp>
#include <redlock/testing/member.hpp>

#include "proxy/fault_proxy.hpp"

namespace redlock::testing {

struct Member::Impl {
  /// Starts the server on a free port in `dir` (created here), then its proxy when the
  /// fleet has them. Throws std::runtime_error with the log's tail.
  Impl(std::size_t index, std::string dir, std::string binary, const FleetOptions& options);
  ~Impl();

  /// Starts the server on port_ again; the port may take a moment to be free.
  void restart();
  /// Kills and reaps the server, if it runs.
  void stop();
  /// Whether the process lives (reaping it when it died on its own).
  bool alive();
  /// The proxy, or std::logic_error naming `verb` when the fleet has none.
  chaos::FaultProxy& proxy(const char* verb);
  std::string log_tail(std::size_t lines) const;

  std::size_t index;
  std::string dir;
  std::string binary;
  bool persistence;
  std::vector<std::string> extra_args;
  std::uint16_t port = 0;
  pid_t pid = -1;
  bool paused = false;
  std::unique_ptr<chaos::FaultProxy> fault_proxy;

 private:
  std::vector<std::string> command_line() const;
  /// Spawns on port_ and waits until it answers; false (reaped, `why` said) when not.
  bool start(std::string& why);
};

}  // namespace redlock::testing

// redlock-fault-proxy: one FaultProxy as a process, for shell scenarios and for runners
// that prefer a child process to linking the library.
//
//   redlock-fault-proxy --upstream HOST:PORT [--listen-port N] [--control-port N] [--no-stdin]
//
// Prints "listening PORT" (and "control PORT" with --control-port; 0 picks a free one)
// on stdout once it accepts connections, then reads control commands (see
// control_command.hpp) from stdin and from every connection to the control port. It exits
// on "quit", SIGINT or SIGTERM, and when stdin closes unless a control port is open:
// a runner that dies takes its proxies with it.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/command_line.hpp"
#include "proxy/control_command.hpp"
#include "proxy/fault_proxy.hpp"

namespace {

using redlock::chaos::ControlCommand;
using redlock::chaos::FaultProxy;

struct Args {
  std::string upstream_host;
  std::uint16_t upstream_port = 0;
  std::uint16_t listen_port = 0;
  int control_port = -1;  // -1: no control port
  bool use_stdin = true;
};

// HOST:PORT, the host of an IPv6 address in brackets; false if `text` is not that.
bool parse_upstream(std::string_view text, Args& args) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view port_text = text.substr(colon + 1);
  int port = 0;
  auto [rest, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || rest != port_text.data() + port_text.size() || port < 0 || port > 65535)
    return false;
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) return false;
  args.upstream_host = host;
  args.upstream_port = static_cast<std::uint16_t>(port);
  return true;
}

Args parse_args(int argc, char** argv) {
  Args args;
  CLI::App app{"A TCP proxy in front of one node that injects faults on command.",
               "redlock-fault-proxy"};
  app.add_option_function<std::string>(
         "--upstream", [&args](const std::string& text) { parse_upstream(text, args); },
         "The node to proxy")
      ->type_name("HOST:PORT")
      ->required()
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            Args scratch;
            return parse_upstream(text, scratch) ? "" : "expected HOST:PORT, got " + text;
          },
          ""));
  const CLI::Range port_range(0, 65535);
  app.add_option("--listen-port", args.listen_port, "Port to accept clients on (0: a free one)")
      ->check(port_range)
      ->capture_default_str();
  app.add_option("--control-port", args.control_port,
                 "Also read control commands from connections to this port (0: a free one)")
      ->check(port_range);
  app.add_flag(
      "--no-stdin", [&args](std::int64_t) { args.use_stdin = false; },
      "Take commands from the control port only; keep running when stdin closes");
  app.footer(
      "Prints \"listening PORT\" (and \"control PORT\") once it accepts connections, then runs "
      "control commands read from stdin and the control port. Exits on quit, SIGINT or "
      "SIGTERM, and when stdin closes unless a control port is open.");
  redlock::chaos::parse_or_exit(app, argc, argv);
  return args;
}

int listen_control(int port, std::uint16_t& bound_port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    return -1;
  }
  bound_port = ntohs(address.sin_port);
  return fd;
}

// A reply that cannot be written (the reader went away) is not worth dying for.
void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = fd == STDOUT_FILENO
                          ? ::write(fd, text.data() + done, text.size() - done)
                          : ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// A control channel: stdin (replies on stdout) or one control connection.
struct Channel {
  int in = -1;
  int out = -1;
  std::string pending;  // bytes of an unfinished line
};

// Runs every complete line buffered in `channel`; returns true on "quit".
bool run_lines(FaultProxy& proxy, Channel& channel) {
  std::size_t newline;
  while ((newline = channel.pending.find('\n')) != std::string::npos) {
    const std::string line = channel.pending.substr(0, newline);
    channel.pending.erase(0, newline + 1);
    const auto parsed = redlock::chaos::parse_control_line(line);
    if (std::holds_alternative<std::monostate>(parsed)) continue;
    if (const auto* error = std::get_if<std::string>(&parsed)) {
      write_all(channel.out, "error " + *error + "\n");
      continue;
    }
    const auto& command = std::get<ControlCommand>(parsed);
    write_all(channel.out, redlock::chaos::execute(proxy, command) + "\n");
    if (command.kind == ControlCommand::Kind::quit) return true;
  }
  return false;
}

// Reads what is available; returns false once the channel is closed.
bool read_into(Channel& channel) {
  char buffer[4096];
  ssize_t n;
  do {
    n = ::read(channel.in, buffer, sizeof buffer);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  channel.pending.append(buffer, static_cast<std::size_t>(n));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  ::signal(SIGPIPE, SIG_IGN);
  // Blocked before the proxy's thread starts, so that only the signalfd sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const int signal_fd = ::signalfd(-1, &stop_signals, SFD_CLOEXEC);

  std::unique_ptr<FaultProxy> proxy;
  try {
    proxy = std::make_unique<FaultProxy>(args.upstream_host, args.upstream_port, args.listen_port);
  } catch (const std::exception& error) {
    std::cerr << error.what() << "\n";
    return 1;
  }
  std::uint16_t control_port = 0;
  int control_fd = -1;
  if (args.control_port >= 0) {
    control_fd = listen_control(args.control_port, control_port);
    if (control_fd < 0) {
      std::cerr << "redlock-fault-proxy: cannot listen on control port " << args.control_port
                << ": " << std::strerror(errno) << "\n";
      return 1;
    }
  }
  std::string banner = "listening " + std::to_string(proxy->port()) + "\n";
  if (control_fd >= 0) banner += "control " + std::to_string(control_port) + "\n";
  write_all(STDOUT_FILENO, banner);

  Channel console{args.use_stdin ? STDIN_FILENO : -1, STDOUT_FILENO, {}};
  std::vector<Channel> clients;
  bool quit = false;
  while (!quit) {
    std::vector<pollfd> fds;
    fds.push_back({signal_fd, POLLIN, 0});
    fds.push_back({console.in, POLLIN, 0});  // poll ignores a negative fd
    fds.push_back({control_fd, POLLIN, 0});
    for (const Channel& client : clients) fds.push_back({client.in, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) break;
    if (fds[1].revents) {
      if (read_into(console)) {
        quit = run_lines(*proxy, console);
      } else {
        console.in = -1;
        if (control_fd < 0) break;
      }
    }
    if (fds[2].revents & POLLIN) {
      const int fd = ::accept4(control_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) clients.push_back({fd, fd, {}});
    }
    // Only the clients polled this turn; one accepted just now is polled next turn.
    for (std::size_t i = 3; i < fds.size() && !quit; ++i) {
      if (!fds[i].revents) continue;
      Channel& client = clients[i - 3];
      if (read_into(client)) {
        quit = run_lines(*proxy, client);
      } else {
        ::close(client.in);
        client.in = -1;
      }
    }
    std::erase_if(clients, [](const Channel& c) { return c.in < 0; });
  }
  for (const Channel& client : clients) ::close(client.in);
  if (control_fd >= 0) ::close(control_fd);
  proxy.reset();
  return 0;
}

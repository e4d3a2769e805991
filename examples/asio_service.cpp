// A small Asio TCP service whose handler runs under a distributed lock, written as C++20
// coroutines with redlock/asio.hpp.
//
//   asio-service --nodes redis://127.0.0.1:7101,... [--port 7300]
//
// Each line a client sends names a resource; the service takes "lock:<resource>" (waiting
// up to 2 s), does its "work" (a 200 ms timer) while
// holding it, releases it and answers "done <resource> token <N>", or "busy <resource>:
// <reason>" when it could not get the lock. Try two at once:
//
//   printf 'orders\n' | nc -q1 127.0.0.1 7300 & printf 'orders\n' | nc -q1 127.0.0.1 7300

#include <asio.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <redlock/asio.hpp>
#include <redlock/redlock.hpp>

namespace {

using namespace std::chrono_literals;
using asio::awaitable;
using asio::use_awaitable;
using asio::ip::tcp;

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> parts;
  std::stringstream stream(list);
  for (std::string part; std::getline(stream, part, ',');) parts.push_back(part);
  return parts;
}

awaitable<void> serve(tcp::socket socket, redlock::Client& client) {
  std::string buffer;
  for (;;) {
    std::error_code error;
    const auto size = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer), '\n',
                                                      asio::redirect_error(use_awaitable, error));
    if (error) co_return;  // the peer closed
    const std::string resource = buffer.substr(0, size - 1);
    buffer.erase(0, size);

    std::string reply;
    auto lock = co_await redlock::asio::async_lock(
        client, "lock:" + resource, {.ttl = 5s, .wait = 2s, .fencing = true}, use_awaitable);
    if (!lock) {
      reply = "busy " + resource + ": " + lock.error().message() + "\n";
    } else {
      // The guarded work. Only while lock->validity() > 0 may it act as the owner, and
      // storage it writes should check the fencing token.
      asio::steady_timer work(socket.get_executor(), 200ms);
      co_await work.async_wait(use_awaitable);
      reply = "done " + resource + " token " + std::to_string(*lock->fencing_token()) + "\n";
      (void)co_await redlock::asio::async_unlock(*lock, use_awaitable);
    }
    co_await asio::async_write(socket, asio::buffer(reply),
                               asio::redirect_error(use_awaitable, error));
    if (error) co_return;
  }
}

awaitable<void> listen(tcp::acceptor acceptor, redlock::Client& client) {
  for (;;) {
    auto socket = co_await acceptor.async_accept(use_awaitable);
    asio::co_spawn(acceptor.get_executor(), serve(std::move(socket), client), asio::detached);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc != 3 && argc != 5) || std::strcmp(argv[1], "--nodes") != 0 ||
      (argc == 5 && std::strcmp(argv[3], "--port") != 0)) {
    std::fprintf(stderr, "usage: %s --nodes URL,URL,... [--port PORT]\n", argv[0]);
    return 2;
  }
  try {
    redlock::Options options;
    options.nodes = split(argv[2]);
    auto client = redlock::Client::create(options);
    const auto port = static_cast<unsigned short>(argc == 5 ? std::stoi(argv[4]) : 7300);

    asio::io_context io;
    tcp::acceptor acceptor(io, {asio::ip::address_v4::loopback(), port});
    std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(port));
    asio::co_spawn(io, listen(std::move(acceptor), *client), asio::detached);
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](std::error_code, int) { io.stop(); });
    io.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "asio-service: %s\n", e.what());
    return 1;
  }
}

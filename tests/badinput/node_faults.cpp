#include "node_faults.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "fake_node.hpp"
#include "support/redis_server.hpp"

namespace redlock::badinput {
namespace {

using test::FakeNode;
using test::RedisServer;
using test::RedisServerOptions;

std::string where_of(const RedisServer& server) {
  return "127.0.0.1:" + std::to_string(server.port());
}

void add_server(BadNodes& nodes, std::shared_ptr<RedisServer> server, const std::string& url,
                const std::string& name) {
  nodes.urls.push_back(url);
  nodes.names.push_back(name);
  nodes.where.push_back(where_of(*server));
  nodes.keep.push_back(std::move(server));
}

void add_fake(BadNodes& nodes, std::shared_ptr<FakeNode> fake) {
  nodes.urls.push_back(fake->url());
  nodes.names.push_back(fake->url());
  nodes.where.push_back(fake->where());
  nodes.keep.push_back(std::move(fake));
}

// A loopback port with a socket bound but not listening: connecting is refused, and no
// other process can start listening there while the socket is held.
BadNodes refused(std::size_t count) {
  BadNodes nodes;
  for (std::size_t i = 0; i < count; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      const int error = errno;
      if (fd >= 0) ::close(fd);
      errno = error;
      throw std::runtime_error(std::string("cannot reserve a port: ") + std::strerror(errno));
    }
    const std::string where = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
    nodes.urls.push_back("redis://" + where);
    nodes.names.push_back("redis://" + where);
    nodes.where.push_back(where);
    nodes.keep.push_back(std::shared_ptr<void>(new int(fd), [](void* p) {
      ::close(*static_cast<int*>(p));
      delete static_cast<int*>(p);
    }));
  }
  return nodes;
}

// A DNS label may hold at most 63 bytes, so the resolver refuses these names without
// sending a query: the test fails to resolve on any machine, and never leaves loopback.
// (A name under .invalid would be sent to the configured name server.)
BadNodes unresolvable(std::size_t count) {
  BadNodes nodes;
  for (std::size_t i = 0; i < count; ++i) {
    std::string label = "no-such-node-" + std::to_string(i) + "-";
    label.resize(64, 'x');
    const std::string where = label + ".invalid:6379";
    nodes.urls.push_back("redis://" + where);
    nodes.names.push_back("redis://" + where);
    nodes.where.push_back(where);
  }
  return nodes;
}

BadNodes non_redis(std::size_t count) {
  BadNodes nodes;
  for (std::size_t i = 0; i < count; ++i) {
    add_fake(nodes, FakeNode::speaking("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"));
  }
  return nodes;
}

BadNodes wrong_password(std::size_t count) {
  BadNodes nodes;
  for (std::size_t i = 0; i < count; ++i) {
    auto server = std::make_shared<RedisServer>(RedisServerOptions{.password = "right-password"});
    const std::string where = where_of(*server);
    add_server(nodes, server, "redis://:wrong-password@" + where, "redis://:***@" + where);
  }
  return nodes;
}

BadNodes no_password(std::size_t count) {
  BadNodes nodes;
  for (std::size_t i = 0; i < count; ++i) {
    auto server = std::make_shared<RedisServer>(RedisServerOptions{.password = "right-password"});
    add_server(nodes, server, server->url(), server->url());
  }
  return nodes;
}

// Replicas of a master that is not one of the lock nodes (a replica of a lock node would
// show that node's keys).
BadNodes replicas(std::size_t count) {
  BadNodes nodes;
  auto master = std::make_shared<RedisServer>();
  nodes.keep.push_back(master);
  for (std::size_t i = 0; i < count; ++i) {
    RedisServerOptions options;
    options.extra_args = {"--replicaof", "127.0.0.1", std::to_string(master->port())};
    auto replica = std::make_shared<RedisServer>(options);
    add_server(nodes, replica, replica->url(), replica->url());
  }
  return nodes;
}

BadNodes out_of_memory(std::size_t count) {
  BadNodes nodes;
  for (std::size_t i = 0; i < count; ++i) {
    auto server = std::make_shared<RedisServer>();
    for (const auto& [name, value] :
         {std::pair{"maxmemory-policy", "noeviction"}, std::pair{"maxmemory", "1"}}) {
      auto reply = server->command({"CONFIG", "SET", name, value});
      if (!reply.is_status("OK"))
        throw std::runtime_error("CONFIG SET " + std::string(name) + ": " + reply.str);
    }
    add_server(nodes, server, server->url(), server->url());
  }
  return nodes;
}

BadNodes answering(std::size_t count, std::string bytes) {
  BadNodes nodes;
  for (std::size_t i = 0; i < count; ++i) {
    add_fake(nodes, std::make_shared<FakeNode>(
                        [bytes](const std::vector<std::string>&) { return bytes; }));
  }
  return nodes;
}

}  // namespace

std::vector<NodeFault> node_faults() {
  return {
      {"Refused", refused, errc::connection_error, NodeStatus::connection_error,
       "connection refused (ECONNREFUSED)", true},
      {"UnresolvableName", unresolvable, errc::connection_error, NodeStatus::connection_error,
       "resolve ", true},
      {"NotRedis", non_redis, errc::protocol_error, NodeStatus::redis_error,
       "protocol error: Protocol error, got \"H\" as reply type byte", true},
      {"WrongPassword", wrong_password, errc::auth_error, NodeStatus::connection_error,
       "failed: WRONGPASS", true},
      {"NoAuth", no_password, errc::auth_error, NodeStatus::connection_error,
       "NOAUTH Authentication required", false},
      {"ReadOnlyReplica", replicas, errc::redis_error, NodeStatus::redis_error,
       "READONLY You can't write against a read only replica", false},
      {"OutOfMemory", out_of_memory, errc::redis_error, NodeStatus::redis_error,
       "OOM command not allowed when used memory > 'maxmemory'", false},
      {"ClusterMoved", [](std::size_t n) { return answering(n, "-MOVED 3999 127.0.0.1:6381\r\n"); },
       errc::redis_error, NodeStatus::redis_error, "MOVED 3999 127.0.0.1:6381", false},
      // Found by fuzz_node_replies: the detail was empty, so the message gave no reason.
      {"EmptyErrorReply", [](std::size_t n) { return answering(n, "-\r\n"); }, errc::redis_error,
       NodeStatus::redis_error, "error reply without text", true},
      {"UnexpectedReplyType", [](std::size_t n) { return answering(n, ":7\r\n"); },
       errc::protocol_error, NodeStatus::redis_error,
       "unexpected reply to the acquire script: integer 7", true},
      // Found by fuzz_node_replies: hiredis allocated the announced 454,775,808 slots
      // (3.6 GB) before any element arrived.
      {"HugeArrayHeader", [](std::size_t n) { return answering(n, "*454775808\r\n"); },
       errc::protocol_error, NodeStatus::redis_error, "an array of 454775808 elements", true},
      {"NeverAnswers", [](std::size_t n) { return answering(n, ""); }, errc::timeout,
       NodeStatus::timeout, "no reply within 2000 ms", true},
  };
}

}  // namespace redlock::badinput

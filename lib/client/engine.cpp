#include "client/engine.hpp"

#include <cctype>
#include <future>
#include <stdexcept>

#include "core/validation.hpp"
#include "net/endpoint.hpp"

namespace redlock::detail {

namespace {

std::string identity(const net::Endpoint& endpoint) {
  // Two URLs that reach the same server are one node, however spelled. The database is
  // left out: two databases of one server fail together (a restart without fsync loses
  // both votes at once), so they are not independent masters. Host names compare
  // without case; resolving them here would block, so a name and an address of the
  // same server still count as two (docs/errors.md).
  if (endpoint.scheme == net::Scheme::unix_socket) return "unix:" + endpoint.path;
  std::string host;
  for (char c : endpoint.host) {
    host += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return host + ":" + std::to_string(endpoint.port);
}

}  // namespace

std::shared_ptr<Engine> Engine::create(Options options, NodeFactory factory) {
  std::vector<net::ConnectionOptions> connections;
  std::vector<std::string> identities;
  std::vector<std::string> names;
  for (const auto& url : options.nodes) {
    auto endpoint = net::parse_endpoint(url);
    if (!endpoint) throw std::invalid_argument("nodes: " + endpoint.error().message());
    if (endpoint->password.empty() && !options.password.empty()) {
      endpoint->password = options.password;
      endpoint->username = options.username;
    }
    identities.push_back(identity(*endpoint));
    names.push_back(endpoint->display);
    net::ConnectionOptions connection;
    connection.endpoint = std::move(*endpoint);
    connection.connect_timeout = options.connect_timeout;
    connection.reconnect_min = options.reconnect_min;
    connection.reconnect_max = options.reconnect_max;
    connection.max_pending = options.max_pending_per_node;
    connection.tls = options.tls;
    connections.push_back(std::move(connection));
  }
  if (auto problem = core::check_options(options, identities))
    throw std::invalid_argument(*problem);
  const int quorum = core::effective_quorum(options.quorum, static_cast<int>(options.nodes.size()));
  auto engine = std::make_shared<Engine>(std::move(options), std::move(names), quorum);
  engine->connect(connections, factory);
  return engine;
}

Engine::Engine(Options options, std::vector<std::string> node_names, int quorum)
    : options_(std::move(options)),
      node_names_(std::move(node_names)),
      quorum_(quorum),
      random_(core::system_random()),
      loop_(options_.loop) {}

void Engine::connect(const std::vector<net::ConnectionOptions>& connections,
                     const NodeFactory& factory) {
  connection_options_ = connections;
  auto make_all = [&] {
    for (const auto& connection : connections) nodes_.push_back(factory(loop(), connection));
  };
  if (options_.loop != nullptr) {
    // The caller's loop: constructed on its thread or before it runs (documented).
    make_all();
    return;
  }
  std::promise<void> done;
  loop_.post([&] {
    make_all();
    done.set_value();
  });
  done.get_future().wait();
}

Engine::~Engine() {
  close();
}

std::chrono::milliseconds Engine::node_timeout(std::chrono::milliseconds ttl) const noexcept {
  return core::effective_node_timeout(options_.node_timeout, ttl);
}

void Engine::track(const std::shared_ptr<Cancellable>& operation) {
  if (nodes_closed_) {
    operation->cancel();
    return;
  }
  waiting_.emplace(operation.get(), operation);
}

ReleaseNotifier& Engine::notifier() {
  if (!notifier_) {
    // A SUBSCRIBE is answered at once by a live node; a generous deadline keeps a slow
    // one in the quorum of confirmations.
    const auto timeout = std::max(options_.node_timeout, std::chrono::milliseconds(250));
    notifier_ = std::make_unique<ReleaseNotifier>(loop(), connection_options_, quorum_, timeout);
    if (nodes_closed_) notifier_->close();
  }
  return *notifier_;
}

void Engine::untrack(const Cancellable* operation) {
  waiting_.erase(operation);
}

NodeCallback Engine::count_release(NodeCallback done) {
  ++releases_in_flight_;
  return [this, done = std::move(done)](NodeReply reply) {
    // The engine outlives its nodes' callbacks: they all run before close() returns.
    if (--releases_in_flight_ == 0 && on_releases_landed_) {
      auto landed = std::move(on_releases_landed_);
      on_releases_landed_ = nullptr;
      landed();
    }
    done(std::move(reply));
  };
}

void Engine::close() {
  if (closed_.exchange(true)) {
    loop_.stop(nullptr);  // waits for a stop begun on another thread
    return;
  }
  if (!loop_.on_loop_thread()) {
    // Releases still on the wire get at most one node deadline to land before the
    // connections close under them. Nothing waits when none is outstanding.
    auto landed = std::make_shared<std::promise<void>>();
    auto future = landed->get_future();
    const bool posted = loop_.post([this, landed] {
      if (releases_in_flight_ == 0 || nodes_closed_) return landed->set_value();
      on_releases_landed_ = [landed] { landed->set_value(); };
    });
    const auto limit = (options_.node_timeout.count() > 0 ? options_.node_timeout
                                                          : std::chrono::milliseconds(50)) +
                       std::chrono::milliseconds(50);
    if (posted) future.wait_for(limit);
  }
  loop_.stop([this] {
    on_releases_landed_ = nullptr;
    nodes_closed_ = true;
    // Cancelling may complete user callbacks that drop the last reference to an
    // operation, so the registry is emptied first.
    auto waiting = std::move(waiting_);
    waiting_.clear();
    for (auto& [raw, operation] : waiting) operation->cancel();
    for (auto& node : nodes_) node->close();
    if (notifier_) notifier_->close();
  });
}

}  // namespace redlock::detail

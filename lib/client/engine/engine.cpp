#include "client/engine/engine.hpp"

#include <algorithm>
#include <cctype>
#include <future>
#include <stdexcept>

#include "client/loop/relayed_events.hpp"
#include "client/util/messages.hpp"
#include "core/validation.hpp"
#include "member/member_checks.hpp"
#include "member/member_events.hpp"
#include "net/endpoint.hpp"
#include "net/timer.hpp"

namespace redlock::detail {

std::shared_ptr<Engine> Engine::create(Options options, NodeFactory factory, Seams seams) {
  std::vector<net::ConnectionOptions> connections;
  std::vector<std::string> identities;
  std::vector<std::string> names;
  std::vector<net::Endpoint> endpoints;
  for (const auto& url : options.nodes) {
    auto endpoint = net::parse_endpoint(url);
    if (!endpoint) throw std::invalid_argument("nodes: " + endpoint.error().message());
    if (endpoint->password.empty() && !options.password.empty()) {
      endpoint->password = options.password;
      endpoint->username = options.username;
    }
    endpoint->sentinel_username = options.sentinel_username;
    endpoint->sentinel_password = options.sentinel_password;
    identities.push_back(member_identity(*endpoint));
    names.push_back(endpoint->display);
    endpoints.push_back(*endpoint);
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
  if (auto problem = member_kind_problem(endpoints, options, quorum)) {
    throw std::invalid_argument(*problem);
  }
  auto engine = std::make_shared<Engine>(std::move(options), std::move(names), quorum, seams);
  engine->key_placement_ = KeyPlacement(endpoints);
  engine->connect(connections, factory);
  return engine;
}

Engine::Engine(Options options, std::vector<std::string> node_names, int quorum, Seams seams)
    : options_(relay_events(std::move(options))),
      node_names_(std::move(node_names)),
      quorum_(quorum),
      seams_(seams),
      random_(core::system_random()),
      guard_bound_(std::make_shared<std::atomic<long long>>(
          options_.member_guard.longest_ttl.count() > 0 ? options_.member_guard.longest_ttl.count()
                                                        : LockOptions{}.ttl.count())),
      loop_(options_.loop, options_.sync_calls == SyncCalls::lead) {}

std::optional<std::string> Engine::check_lock_key(std::string_view key) const {
  if (auto problem = core::check_key(key, options_.max_key_bytes)) return problem;
  if (auto problem = key_placement_.problem(key)) return "key " + quote_key(key) + " " + *problem;
  return std::nullopt;
}

std::optional<std::string> Engine::check_extend_ttl(std::chrono::milliseconds ttl) const {
  if (auto problem = core::check_ttl(ttl, options_.node_timeout)) return problem;
  return check_guard_bound(ttl);
}

std::optional<std::string> Engine::check_guard_bound(std::chrono::milliseconds ttl) const {
  const auto& guard = options_.member_guard;
  if (!guard.observed_restarts && !guard.young_on_first_contact) return std::nullopt;
  if (guard.longest_ttl.count() > 0) {
    if (ttl <= guard.longest_ttl) return std::nullopt;
    return "ttl: " + std::to_string(ttl.count()) + " ms is longer than member_guard.longest_ttl (" +
           std::to_string(guard.longest_ttl.count()) +
           " ms), the longest ttl the fleet declared: a member that lost its keys is guarded "
           "only that long";
  }
  auto known = guard_bound_->load(std::memory_order_relaxed);
  while (ttl.count() > known &&
         !guard_bound_->compare_exchange_weak(known, ttl.count(), std::memory_order_relaxed)) {
  }
  return std::nullopt;
}

void Engine::connect(const std::vector<net::ConnectionOptions>& connections,
                     const NodeFactory& factory) {
  connection_options_ = connections;
  // The client's one random source paces its connections' reconnects too: no generator
  // of their own to seed.
  for (auto& connection : connection_options_) {
    if (!connection.random) connection.random = random_;
  }
  auto make_all = [&] {
    // One for the client: two members that reach one server do not both count.
    auto registry = std::make_shared<core::ServerRegistry>();
    int member = 0;
    for (const auto& connection : connection_options_) {
      state_->nodes.push_back(factory(loop(), observe_connection(connection, options_)));
      core::MemberLife::Rules rules;
      rules.observed = options_.member_guard.observed_restarts;
      rules.first_contact = options_.member_guard.young_on_first_contact;
      rules.bound = guard_bound_;
      rules.on_guarded = observe_guard(connection.endpoint.display, options_);
      rules.on_misconfigured = observe_misconfiguration(connection.endpoint.display, options_);
      rules.registry = registry;
      rules.member = member++;
      rules.url = connection.endpoint.display;
      // Before any lock command: the first INFO's answer precedes their replies.
      if (rules.any()) state_->nodes.back()->watch_start(std::move(rules));
      if (options_.member_guard.replicas_to_ack > 0) {
        state_->nodes.back()->require_replica_acks(options_.member_guard.replicas_to_ack);
      }
    }
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
  // In a forked child the nodes are the parent's connections: their destructors would
  // close its handles. They are left behind with the loop (LoopThread's destructor).
  if (forked()) ForkGuard::leak(std::move(state_));
}

std::chrono::milliseconds Engine::node_timeout(std::chrono::milliseconds ttl) const noexcept {
  return core::effective_node_timeout(options_.node_timeout, ttl);
}

void Engine::track(const std::shared_ptr<Cancellable>& operation) {
  if (state_->closing) {
    operation->cancel();
    return;
  }
  state_->waiting.emplace(operation.get(), operation);
}

ReleaseNotifier& Engine::notifier() {
  if (!state_->notifier) {
    // A SUBSCRIBE is answered at once by a live node; a generous deadline keeps a slow
    // one in the quorum of confirmations.
    const auto timeout = std::max(options_.node_timeout, std::chrono::milliseconds(250));
    std::vector<ReleaseNotifier::Refused> refused;
    for (const auto& node : connection_options_) {
      refused.push_back(observe_misconfiguration(node.endpoint.display, options_));
    }
    state_->notifier = std::make_unique<ReleaseNotifier>(loop(), connection_options_, quorum_,
                                                         timeout, std::move(refused));
    if (state_->nodes_closed) state_->notifier->close();
  }
  return *state_->notifier;
}

void Engine::untrack(const Cancellable* operation) {
  state_->waiting.erase(operation);
}

NodeCallback Engine::count_release(NodeCallback done) {
  // The state, not the engine: a release may land after the engine is gone.
  return [tally = count_releases(1), done = std::move(done)](NodeReply reply) {
    tally.landed();
    done(std::move(reply));
  };
}

Engine::ReleaseTally Engine::count_releases(int count) {
  state_->releases_in_flight += count;
  return ReleaseTally(state_);
}

void Engine::ReleaseTally::landed(int count) const {
  if (count <= 0) return;
  if ((state_->releases_in_flight -= count) == 0 && state_->on_releases_landed) {
    std::exchange(state_->on_releases_landed, nullptr)();
  }
}

void Engine::shut_down(const std::shared_ptr<LoopState>& state, uv_loop_s* loop,
                       std::chrono::milliseconds grace, std::function<void()> done) {
  state->closing = true;
  // Cancelling may complete user callbacks that drop the last reference to an operation,
  // so the registry is emptied first.
  auto waiting = std::move(state->waiting);
  state->waiting.clear();
  for (auto& [raw, operation] : waiting) operation->cancel();

  // Releases already sent (an unlock just before close(), in the same callback or from
  // another thread) get up to one node deadline to land before the connections close
  // under them, and commands not written yet (a member still connecting, or resolving
  // its master) as long to be written: a lock left held on purpose (`redlock acquire`)
  // then reaches every member that answers, not only the first majority. Nothing waits
  // when neither is outstanding.
  auto timer = std::make_shared<net::TimerPtr>();
  auto close_nodes = [state, timer, done = std::move(done)] {
    if (state->nodes_closed) return;
    state->nodes_closed = true;
    state->on_releases_landed = nullptr;
    timer->reset();
    for (auto& node : state->nodes) node->close();
    if (state->notifier) state->notifier->close();
    done();
  };
  // Written commands have no event of their own: a millisecond's poll, only while
  // something is left, and at most `grace`.
  struct Check {
    std::shared_ptr<LoopState> state;
    std::shared_ptr<net::TimerPtr> timer;
    core::Clock::time_point deadline;
    std::function<void()> close_nodes;

    bool done() const {
      if (state->releases_in_flight > 0) return false;
      return std::none_of(state->nodes.begin(), state->nodes.end(),
                          [](const auto& node) { return node->has_unwritten(); });
    }
    void operator()() const {
      if (state->nodes_closed) return;
      if (done() || core::Clock::now() >= deadline) return close_nodes();
      if (*timer) (*timer)->start(std::chrono::milliseconds(1), *this);
    }
  };
  Check check{state, timer, core::Clock::now() + grace, std::move(close_nodes)};
  if (check.done()) return check.close_nodes();
  *timer = net::Timer::create(loop);
  (*timer)->start(std::chrono::milliseconds(1), check);
  // The last release lands inside its node's reply callback, where the node must not be
  // closed: the check runs on the next loop turn.
  state->on_releases_landed = [timer, check] {
    if (*timer) (*timer)->start(std::chrono::milliseconds(0), check);
  };
}

void Engine::close() {
  // Nothing to shut down in a forked child: the loop and its connections are the
  // parent's, and its thread, which would do it, is not there.
  if (forked()) return;
  const auto grace =
      (options_.node_timeout.count() > 0 ? options_.node_timeout : std::chrono::milliseconds(50)) +
      std::chrono::milliseconds(50);
  if (!closed_.exchange(true)) {
    loop_.stop([state = state_, loop = loop(), grace](std::function<void()> closed) {
      shut_down(state, loop, grace, std::move(closed));
    });
  }
  // Every caller on another thread returns only once the shutdown is complete, however
  // many call at once; the loop thread and a caller's loop never wait (see the header).
  loop_.wait_finished();
}

}  // namespace redlock::detail

// Election and Leadership: a campaign is one lock() of the election's key (fencing,
// auto_extend), followed by the leader record written beside it; leader() reads the key
// and the record from every member and lets core/election.hpp decide.

#include "core/election.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <utility>

#include <redlock/election.hpp>

#include "client/api/client_access.hpp"
#include "client/calls/sync_call.hpp"
#include "client/engine/engine.hpp"
#include "client/loop/user_callback.hpp"
#include "client/operations/election_record.hpp"
#include "client/operations/operations.hpp"
#include "core/backoff.hpp"

namespace redlock {

using std::chrono::milliseconds;

struct Leadership::State {
  Lock lock;
  std::string identity;
  std::string key;
  std::uint64_t term = 0;
  // Shared with the watchdog's on_lost, which may run on the loop thread after this
  // leadership is gone.
  std::shared_ptr<std::stop_source> ended;
};

Leadership::Leadership(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}
Leadership::Leadership(Leadership&&) noexcept = default;

Leadership& Leadership::operator=(Leadership&& other) noexcept {
  if (this != &other) {
    if (state_) state_->ended->request_stop();
    state_ = std::move(other.state_);  // the old state's Lock releases as it goes
  }
  return *this;
}

Leadership::~Leadership() {
  // The stop comes first: work guarded by the token stops before the key is let go.
  if (state_) state_->ended->request_stop();
}

std::uint64_t Leadership::term() const noexcept {
  return state_ ? state_->term : 0;
}

const std::string& Leadership::identity() const noexcept {
  static const std::string none;
  return state_ ? state_->identity : none;
}

const std::string& Leadership::key() const noexcept {
  static const std::string none;
  return state_ ? state_->key : none;
}

milliseconds Leadership::validity() const noexcept {
  return state_ ? state_->lock.validity() : milliseconds(0);
}

std::stop_token Leadership::stop_token() const noexcept {
  return state_ ? state_->ended->get_token() : std::stop_token();
}

bool Leadership::lost() const noexcept {
  return state_ && state_->lock.lost();
}

Result<void> Leadership::resign() {
  if (!state_) return Error(make_error_code(errc::not_held), "resign: no leadership");
  state_->ended->request_stop();
  return state_->lock.unlock();
}

const Lock& Leadership::lock() const noexcept {
  static const Lock none;
  return state_ ? state_->lock : none;
}

namespace {

const std::shared_ptr<detail::Engine>& engine_of(const std::shared_ptr<Client>& client) {
  return detail::ClientAccess::engine(*client);
}

LockOptions campaign_options(milliseconds ttl, milliseconds wait, std::stop_token stop,
                             const std::shared_ptr<std::stop_source>& ended) {
  LockOptions options;
  options.ttl = ttl;
  options.wait = wait;
  options.fencing = true;
  options.auto_extend = true;
  options.stop = std::move(stop);
  // Holds the source, not the leadership: the watchdog may outlive it.
  options.on_lost = [ended](const Error&) { ended->request_stop(); };
  return options;
}

std::string record_of(const Lock& lock, const std::string& identity) {
  return core::format_leader_record({lock.value(), lock.fencing_token().value_or(0), identity});
}

}  // namespace

Election::Election(std::shared_ptr<Client> client, std::string key, std::string identity,
                   milliseconds ttl)
    : client_(std::move(client)), key_(std::move(key)), identity_(std::move(identity)), ttl_(ttl) {
  if (!client_) throw std::invalid_argument("Election: client must not be null");
  if (key_.empty()) throw std::invalid_argument("Election: key must not be empty");
  if (identity_.empty()) throw std::invalid_argument("Election: identity must not be empty");
  if (identity_.find_first_of("\r\n") != std::string::npos) {
    throw std::invalid_argument("Election: identity must not contain a line break");
  }
}

Result<Leadership> Election::campaign(std::stop_token stop, milliseconds wait) {
  auto ended = std::make_shared<std::stop_source>();
  auto lock = client_->lock(key_, campaign_options(ttl_, wait, std::move(stop), ended));
  if (!lock) return std::move(lock).error();
  const auto& engine = engine_of(client_);
  auto proclaimed = detail::call_sync<void>(
      *engine, {"campaign", key_},
      [engine, key = key_, value = lock->value(), record = record_of(*lock, identity_),
       timeout = engine->node_timeout(ttl_)](auto deliver) mutable {
        detail::start_proclaim(engine, std::move(key), std::move(value), std::move(record), timeout,
                               std::move(deliver));
      });
  if (!proclaimed) {
    (void)lock->unlock();
    return std::move(proclaimed).error();
  }
  auto state = std::make_unique<Leadership::State>(
      Leadership::State{std::move(*lock), identity_, key_, 0, std::move(ended)});
  state->term = state->lock.fencing_token().value_or(0);
  return Leadership(std::move(state));
}

void Election::campaign_async(std::stop_token stop, milliseconds wait,
                              std::function<void(Result<Leadership>)> done) {
  // An acquisition: with an empty callback nobody would hold the leadership (the edge
  // rules, calls/edges.hpp).
  if (!done) return;
  auto ended = std::make_shared<std::stop_source>();
  client_->lock_async(
      key_, campaign_options(ttl_, wait, std::move(stop), ended),
      [engine = engine_of(client_), key = key_, identity = identity_, ttl = ttl_, ended,
       done = std::move(done)](Result<Lock> lock) mutable {
        // Here in the application's context (lock_async's callback): at once on the calling
        // thread after close(), else on the loop thread.
        if (!lock)
          return detail::call_user_here("campaign_async", done,
                                        Result<Leadership>(std::move(lock).error()));
        auto value = lock->value();
        auto record = record_of(*lock, identity);
        // Kept by the callback until the record is written: the Lock moves in there.
        auto held = std::make_shared<Lock>(std::move(*lock));
        detail::start_proclaim(
            engine, key, std::move(value), std::move(record), engine->node_timeout(ttl),
            [held, key, identity, ended, done = std::move(done)](Result<void> proclaimed) mutable {
              // On the loop, from whoever runs it: the answer goes through call_user.
              if (!proclaimed) {
                held->unlock_async({});
                return detail::call_user("campaign_async", done,
                                         Result<Leadership>(std::move(proclaimed).error()));
              }
              auto state = std::make_unique<Leadership::State>(
                  Leadership::State{std::move(*held), identity, key, 0, ended});
              state->term = state->lock.fencing_token().value_or(0);
              detail::call_user("campaign_async", done,
                                Result<Leadership>(Leadership(std::move(state))));
            });
      });
}

Result<std::optional<Leader>> Election::leader() const {
  const auto& engine = engine_of(client_);
  const auto start = core::Clock::now();
  auto members = detail::call_sync<std::vector<core::MemberLeaderView>>(
      *engine, {"leader", key_},
      [engine, key = key_, timeout = detail::diagnostic_timeout(*engine)](auto deliver) mutable {
        detail::start_leader_read(engine, std::move(key), timeout, std::move(deliver));
      });
  if (!members) return std::move(members).error();
  const auto elapsed = std::chrono::ceil<milliseconds>(core::Clock::now() - start);
  auto view = core::decide_leader(*members, engine->quorum(), elapsed, engine->drift());
  if (!view) return std::optional<Leader>();
  return std::optional<Leader>(
      Leader{std::move(view->identity), view->term, view->validity, std::move(view->value)});
}

namespace {

// Where the loop thread tells an observer, waiting on its own thread, that the key was
// released or has a new leader.
struct ReleaseHeard {
  std::mutex mutex;
  std::condition_variable_any changed;
  bool released = false;  // guarded by mutex
  bool elected = false;   // guarded by mutex
  std::atomic<std::uint64_t> listener{0};
};

// The first follow-up read after a release: the next leader usually wins within a round
// trip or two; the reads double their spacing until it shows or `every` is reached.
constexpr milliseconds first_follow_up{5};

}  // namespace

Result<void> Election::observe(std::stop_token stop,
                               const std::function<void(const std::optional<Leader>&)>& on_change,
                               milliseconds every) const {
  if (every <= milliseconds(0)) every = std::min(ttl_ / 3, milliseconds(1000));
  every = std::max(every, milliseconds(1));
  const auto& engine = engine_of(client_);
  // Refused as every synchronous call is (calls/edges.hpp): on the loop thread it would
  // wait for itself, after close() nothing is left to observe.
  if (auto refused = detail::sync_refusal(*engine, {"observe", key_})) return *std::move(refused);
  auto release = std::make_shared<ReleaseHeard>();
  // Listens on the loop thread to the key's release announcements (those of every client
  // that releases it, and this client's own resignations at once).
  (void)engine->post([engine, key = key_, release] {
    if (!engine->accepting()) return;
    release->listener = engine->notifier().listen(key, [release](bool elected) {
      std::lock_guard<std::mutex> hold(release->mutex);
      (elected ? release->elected : release->released) = true;
      release->changed.notify_all();
    });
  });
  core::LeaderReports reports;
  // The reads after a release double their spacing from first_follow_up; once it reaches
  // `every`, none is due and the next read comes after `every`.
  const core::Backoff follow_ups{first_follow_up, every, core::Jitter::none, {}, {}};
  int follow_up = 0;  // reads since the release without a successor; 0: none due
  std::uint64_t term_at_release = 0;
  Result<void> ended;
  while (!stop.stop_requested()) {
    auto seen = leader();
    if (!seen && seen.error() == errc::cancelled) {
      ended = std::move(seen).error();
      break;
    }
    if (seen) {
      std::optional<core::LeaderView> view;
      if (*seen) view = core::LeaderView{(*seen)->identity, (*seen)->term, (*seen)->value, {}};
      if (reports.should_report(view)) on_change(*seen);
      if (follow_up > 0) {
        const bool successor = *seen && (*seen)->term > term_at_release;
        follow_up = successor ? 0 : core::next_streak(follow_up);
        if (follow_ups.span(follow_up) >= every) follow_up = 0;
      }
    }
    std::unique_lock<std::mutex> hold(release->mutex);
    release->changed.wait_for(hold, stop, follow_up > 0 ? follow_ups.delay(follow_up, 0) : every,
                              [&] { return release->released || release->elected; });
    // A new leader's announcement comes once its record is written on the member that
    // sent it: the next read (at once) finds it. A release is followed by reads until the
    // successor shows.
    release->elected = false;
    if (release->released) {
      release->released = false;
      follow_up = 1;
      term_at_release = reports.highest_term();
    }
  }
  (void)engine->post([engine, release] {
    if (engine->open() && release->listener != 0) engine->notifier().unlisten(release->listener);
  });
  return ended;
}

}  // namespace redlock

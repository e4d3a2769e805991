#include "client/loop/relayed_events.hpp"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <redlock/observer.hpp>

#include "client/loop/leader_followers.hpp"

namespace redlock::detail {

namespace {

// The events as the background thread tells them later: each owns what the original
// pointed to, and is told as the original would have been.
struct KeptAttempt {
  explicit KeptAttempt(const AttemptEvent& event)
      : key(event.key),
        attempt(event.attempt),
        outcome(event.outcome),
        latency(event.latency),
        since_start(event.since_start),
        granted(event.granted),
        quorum(event.quorum),
        nodes(event.nodes) {}
  void tell(Observer& observer) const {
    observer.on_attempt({key, attempt, outcome, latency, since_start, granted, quorum, nodes});
  }
  std::string key;
  int attempt;
  AttemptOutcome outcome;
  std::chrono::microseconds latency;
  std::chrono::microseconds since_start;
  int granted;
  int quorum;
  std::vector<NodeOutcome> nodes;
};

struct KeptAcquire {
  explicit KeptAcquire(const AcquireEvent& event)
      : key(event.key),
        outcome(event.outcome),
        attempts(event.attempts),
        duration(event.duration) {}
  void tell(Observer& observer) const { observer.on_acquire({key, outcome, attempts, duration}); }
  std::string key;
  AttemptOutcome outcome;
  int attempts;
  std::chrono::microseconds duration;
};

struct KeptWake {
  explicit KeptWake(const WakeEvent& event)
      : key(event.key), cause(event.cause), since_start(event.since_start) {}
  void tell(Observer& observer) const { observer.on_wake({key, cause, since_start}); }
  std::string key;
  WakeCause cause;
  std::chrono::microseconds since_start;
};

struct KeptLock {
  explicit KeptLock(const LockEvent& event)
      : key(event.key),
        operation(event.operation),
        confirmed(event.confirmed),
        latency(event.latency),
        confirmed_nodes(event.confirmed_nodes),
        nodes(event.nodes) {}
  void tell(Observer& observer) const {
    observer.on_lock({key, operation, confirmed, latency, confirmed_nodes, nodes});
  }
  std::string key;
  LockOperation operation;
  bool confirmed;
  std::chrono::microseconds latency;
  int confirmed_nodes;
  std::vector<NodeOutcome> nodes;
};

struct KeptWatchdog {
  explicit KeptWatchdog(const WatchdogEvent& event)
      : key(event.key), lost(event.lost), validity(event.validity) {
    if (event.error != nullptr) error = *event.error;
  }
  void tell(Observer& observer) const {
    observer.on_watchdog({key, lost, error ? &*error : nullptr, validity});
  }
  std::string key;
  bool lost;
  std::optional<Error> error;
  std::chrono::milliseconds validity;
};

struct KeptNode {
  explicit KeptNode(const NodeEvent& event)
      : node(event.node),
        kind(event.kind),
        error(event.error),
        detail(event.detail),
        guarded_for(event.guarded_for) {}
  void tell(Observer& observer) const {
    observer.on_node({node, kind, error, detail, guarded_for});
  }
  std::string node;
  NodeEventKind kind;
  std::error_code error;
  std::string detail;
  std::chrono::milliseconds guarded_for;
};

class RelayingObserver final : public Observer {
 public:
  explicit RelayingObserver(std::shared_ptr<Observer> observer) : observer_(std::move(observer)) {}

  void on_attempt(const AttemptEvent& event) override {
    tell<KeptAttempt>(event, &Observer::on_attempt);
  }
  void on_acquire(const AcquireEvent& event) override {
    tell<KeptAcquire>(event, &Observer::on_acquire);
  }
  void on_wake(const WakeEvent& event) override { tell<KeptWake>(event, &Observer::on_wake); }
  void on_lock(const LockEvent& event) override { tell<KeptLock>(event, &Observer::on_lock); }
  void on_watchdog(const WatchdogEvent& event) override {
    tell<KeptWatchdog>(event, &Observer::on_watchdog);
  }
  void on_node(const NodeEvent& event) override { tell<KeptNode>(event, &Observer::on_node); }

 private:
  // Heard on the client's own thread: told at once, uncopied. Heard by a leading caller:
  // copied and relayed.
  template <typename Kept, typename Event>
  void tell(const Event& event, void (Observer::*method)(const Event&)) {
    if (!LeaderFollowers::caller_leads()) return ((*observer_).*method)(event);
    LeaderFollowers::relay_to_background(
        [observer = observer_, kept = Kept(event)] { kept.tell(*observer); });
  }

  std::shared_ptr<Observer> observer_;
};

}  // namespace

Options relay_events(Options options) {
  if (options.observer) {
    options.observer = std::make_shared<RelayingObserver>(std::move(options.observer));
  }
  if (options.log) {
    options.log = [log = std::make_shared<LogSink>(std::move(options.log))](LogLevel level,
                                                                            std::string_view line) {
      if (!LeaderFollowers::caller_leads()) return (*log)(level, line);
      LeaderFollowers::relay_to_background(
          [log, level, kept = std::string(line)] { (*log)(level, kept); });
    };
  }
  return options;
}

}  // namespace redlock::detail

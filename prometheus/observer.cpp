#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>

#include <array>
#include <chrono>
#include <string>

#include <redlock/prometheus.hpp>

namespace redlock::prometheus {

namespace {

using ::prometheus::Counter;
using ::prometheus::Family;
using ::prometheus::Gauge;
using ::prometheus::Histogram;
using ::prometheus::Labels;

constexpr std::array outcomes = {AttemptOutcome::acquired, AttemptOutcome::conflict,
                                 AttemptOutcome::unreachable, AttemptOutcome::expired,
                                 AttemptOutcome::cancelled};

Labels with(Labels labels, const std::string& name, const std::string& value) {
  labels.emplace(name, value);
  return labels;
}

double seconds(std::chrono::microseconds duration) {
  return std::chrono::duration<double>(duration).count();
}

class Metrics final : public Observer {
 public:
  Metrics(::prometheus::Registry& registry, const Labels& labels)
      : labels_(labels),
        duration_family_(::prometheus::BuildHistogram()
                             .Name("redlock_acquire_duration_seconds")
                             .Help("lock() and try_lock() calls, from the call to its result")
                             .Register(registry)),
        acquisitions_family_(::prometheus::BuildCounter()
                                 .Name("redlock_acquisitions_total")
                                 .Help("lock() and try_lock() calls by outcome")
                                 .Register(registry)),
        attempts_family_(::prometheus::BuildCounter()
                             .Name("redlock_attempts_total")
                             .Help("Acquire attempts (one fan-out to every node) by outcome")
                             .Register(registry)),
        wakes_family_(::prometheus::BuildCounter()
                          .Name("redlock_wakes_total")
                          .Help("Waiting lock() calls woken for another attempt, by cause")
                          .Register(registry)),
        operations_family_(::prometheus::BuildCounter()
                               .Name("redlock_operations_total")
                               .Help("Extend and release rounds, confirmed by a quorum or not")
                               .Register(registry)),
        node_up_family_(::prometheus::BuildGauge()
                            .Name("redlock_node_up")
                            .Help("1 while the connection to the node is up")
                            .Register(registry)),
        node_reconnects_family_(::prometheus::BuildCounter()
                                    .Name("redlock_node_reconnects_total")
                                    .Help("Times the node came back after being down")
                                    .Register(registry)),
        node_events_family_(::prometheus::BuildCounter()
                                .Name("redlock_node_events_total")
                                .Help("Node connection events: down, connect_failed, "
                                      "script_reloaded, overloaded, guarded, master_changed, "
                                      "moved, ask, slot_map_read, misconfigured")
                                .Register(registry)),
        member_guarded_until_family_(
            ::prometheus::BuildGauge()
                .Name("redlock_member_guarded_until_seconds")
                .Help("Unix time until which the member's grants do not count (it restarted "
                      "or failed over and may have lost keys); guarded while above time()")
                .Register(registry)),
        held_(::prometheus::BuildGauge()
                  .Name("redlock_locks_held")
                  .Help("Locks acquired and not yet released or lost")
                  .Register(registry)
                  .Add(labels)),
        waiters_(::prometheus::BuildGauge()
                     .Name("redlock_waiters")
                     .Help("lock() calls whose first attempt failed and that have not ended")
                     .Register(registry)
                     .Add(labels)),
        watchdog_extensions_(::prometheus::BuildCounter()
                                 .Name("redlock_watchdog_extensions_total")
                                 .Help("Extensions made by the watchdog (auto_extend)")
                                 .Register(registry)
                                 .Add(labels)),
        lost_(::prometheus::BuildCounter()
                  .Name("redlock_locks_lost_total")
                  .Help("Locks the watchdog could not keep")
                  .Register(registry)
                  .Add(labels)) {
    // Every series of a fixed label set exists from the start (at 0), and the hot path
    // only increments.
    const Histogram::BucketBoundaries buckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                 0.1,    0.25,  0.5,    1,     2.5,  5,     10};
    for (const auto outcome : outcomes) {
      const auto index = static_cast<std::size_t>(outcome);
      const auto l = with(labels, "outcome", to_string(outcome));
      durations_[index] = &duration_family_.Add(l, buckets);
      acquisitions_[index] = &acquisitions_family_.Add(l);
      attempts_[index] = &attempts_family_.Add(l);
    }
    for (const auto cause : {WakeCause::announcement, WakeCause::timer}) {
      wakes_[static_cast<std::size_t>(cause)] =
          &wakes_family_.Add(with(labels, "cause", to_string(cause)));
    }
    for (const auto operation : {LockOperation::extend, LockOperation::release}) {
      for (const bool confirmed : {false, true}) {
        operations_[static_cast<std::size_t>(operation)][confirmed] =
            &operations_family_.Add(with(with(labels, "operation", to_string(operation)), "result",
                                         confirmed ? "confirmed" : "failed"));
      }
    }
  }

  void on_attempt(const AttemptEvent& event) override {
    attempts_[static_cast<std::size_t>(event.outcome)]->Increment();
    if (event.outcome == AttemptOutcome::acquired) held_.Increment();
    if (event.attempt == 1 && event.outcome != AttemptOutcome::acquired) waiters_.Increment();
  }

  void on_acquire(const AcquireEvent& event) override {
    const auto index = static_cast<std::size_t>(event.outcome);
    durations_[index]->Observe(seconds(event.duration));
    acquisitions_[index]->Increment();
    // It waited iff its first attempt failed: then on_attempt counted it.
    if (event.attempts > 1 || (event.attempts == 1 && event.outcome != AttemptOutcome::acquired)) {
      waiters_.Decrement();
    }
  }

  void on_wake(const WakeEvent& event) override {
    wakes_[static_cast<std::size_t>(event.cause)]->Increment();
  }

  void on_lock(const LockEvent& event) override {
    operations_[static_cast<std::size_t>(event.operation)][event.confirmed]->Increment();
    if (event.operation == LockOperation::release) held_.Decrement();
  }

  void on_watchdog(const WatchdogEvent& event) override {
    if (!event.lost) return watchdog_extensions_.Increment();
    // max_hold or max_extensions: the watchdog stopped as asked, the lock is still held.
    if (event.error != nullptr && *event.error == errc::hold_limit_reached) return;
    lost_.Increment();
    held_.Decrement();
  }

  void on_node(const NodeEvent& event) override {
    const auto node = with(labels_, "node", std::string(event.node));
    switch (event.kind) {
      case NodeEventKind::connected:
        node_up_family_.Add(node).Set(1);
        return;
      case NodeEventKind::reconnected:
        node_up_family_.Add(node).Set(1);
        node_reconnects_family_.Add(node).Increment();
        return;
      case NodeEventKind::down:
      case NodeEventKind::connect_failed:
        node_up_family_.Add(node).Set(0);
        break;
      case NodeEventKind::guarded: {
        const auto until = std::chrono::system_clock::now() + event.guarded_for;
        member_guarded_until_family_.Add(node).Set(
            std::chrono::duration<double>(until.time_since_epoch()).count());
        break;
      }
      case NodeEventKind::script_reloaded:
      case NodeEventKind::overloaded:
      case NodeEventKind::master_changed:
      case NodeEventKind::moved:
      case NodeEventKind::ask:
      case NodeEventKind::slot_map_read:
      case NodeEventKind::misconfigured:
        break;
    }
    node_events_family_.Add(with(node, "event", to_string(event.kind))).Increment();
  }

 private:
  const Labels labels_;
  Family<Histogram>& duration_family_;
  Family<Counter>& acquisitions_family_;
  Family<Counter>& attempts_family_;
  Family<Counter>& wakes_family_;
  Family<Counter>& operations_family_;
  Family<Gauge>& node_up_family_;
  Family<Counter>& node_reconnects_family_;
  Family<Counter>& node_events_family_;
  Family<Gauge>& member_guarded_until_family_;
  Gauge& held_;
  Gauge& waiters_;
  Counter& watchdog_extensions_;
  Counter& lost_;
  std::array<Histogram*, outcomes.size()> durations_{};
  std::array<Counter*, outcomes.size()> acquisitions_{};
  std::array<Counter*, outcomes.size()> attempts_{};
  std::array<Counter*, 2> wakes_{};
  std::array<std::array<Counter*, 2>, 2> operations_{};
};

}  // namespace

std::shared_ptr<Observer> make_observer(::prometheus::Registry& registry, const Labels& labels) {
  return std::make_shared<Metrics>(registry, labels);
}

}  // namespace redlock::prometheus

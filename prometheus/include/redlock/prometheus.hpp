#pragma once
// redlock::prometheus: an Observer that turns a Client's events into Prometheus metrics
// (prometheus-cpp), registered on the application's own registry. Built when
// prometheus-cpp is found (Debian: prometheus-cpp-dev); link redlock::prometheus.
//
// A long-running service exposes the registry as it exposes its other metrics, e.g.
// with prometheus-cpp's pull exposer:
//   auto registry = std::make_shared<prometheus::Registry>();
//   prometheus::Exposer exposer{"0.0.0.0:9464"};
//   exposer.RegisterCollectable(registry);
//   options.observer = redlock::prometheus::make_observer(*registry);
// The redlock CLI exposes nothing: its processes are too short-lived to be scraped.

#include <prometheus/labels.h>
#include <prometheus/registry.h>

#include <memory>

#include <redlock/observer.hpp>

namespace redlock::prometheus {

/// Registers these families on `registry` (each with `labels` added, e.g. a client name,
/// so that several clients can share one registry) and returns the observer that updates
/// them; set it on Options::observer. `registry` must outlive the observer and its
/// clients. Calling it twice with the same labels returns observers that share the
/// metrics.
///
///   redlock_acquire_duration_seconds{outcome}  histogram: lock()/try_lock() calls, from
///                                              the call to its result (waits included)
///   redlock_acquisitions_total{outcome}        counter: those calls by outcome (acquired,
///                                              conflict, unreachable, expired, cancelled)
///   redlock_attempts_total{outcome}            counter: acquire attempts (fan-outs)
///   redlock_wakes_total{cause}                 counter: waiters woken (announcement, timer)
///   redlock_locks_held                         gauge: acquired minus released or lost
///   redlock_waiters                            gauge: lock() calls whose first attempt
///                                              failed and that have not ended yet
///   redlock_operations_total{operation,result} counter: extend/release, confirmed/failed
///   redlock_watchdog_extensions_total          counter
///   redlock_locks_lost_total                   counter: locks the watchdog lost
///   redlock_node_up{node}                      gauge: 1 while the node's connection is up
///   redlock_node_reconnects_total{node}        counter: the node came back after down
///                                              (a reconnect that a killed node's listen
///                                              backlog accepted counts, and is followed
///                                              by one more down: NodeEventKind)
///   redlock_node_events_total{node,event}      counter: down, connect_failed,
///                                              script_reloaded, overloaded, guarded,
///                                              master_changed (a Sentinel failover followed),
///                                              moved, ask (a Redis Cluster member's
///                                              redirections), slot_map_read (its slot map
///                                              read, at the start and at each refresh),
///                                              misconfigured (a member the guard cannot
///                                              judge: its server refuses INFO, or
///                                              another member names it too)
///   redlock_member_guarded_until_seconds{node} gauge: Unix time until which the member's
///                                              grants do not count (Options::member_guard);
///                                              alert on it being above time()
///
/// Thread-safety: the observer is called on the client's loop thread; the registry may be
/// collected (scraped) from any thread meanwhile.
std::shared_ptr<Observer> make_observer(::prometheus::Registry& registry,
                                        const ::prometheus::Labels& labels = {});

}  // namespace redlock::prometheus

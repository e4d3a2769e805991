#pragma once
// A Connection to a Redis Cluster (an Endpoint with cluster_seeds): one net::Connection per
// shard master, each command sent to the master of its key's slot. The rules of slots and
// redirections are data (net/cluster_slot.hpp, net/cluster_map.hpp); this is the shell
// that carries them out. Created by Connection::create for a cluster endpoint; users see
// only the Connection interface, whose contract it keeps (net/connection.hpp).
//
// The slot map is asked of every seed at once and the first map read is taken, so a seed
// that is down, or accepts connections and never answers (a paused server, a host gone
// without a reset), costs nothing while another answers.
//
// Routing: a command's key is its second word (SET, GET, PTTL, TYPE, ...; SSUBSCRIBE's and
// SUNSUBSCRIBE's is their shard channel), an EVALSHA's its first key. Commands without a
// key (HELLO, INFO, PING, ROLE, SUBSCRIBE, UNSUBSCRIBE, CLUSTER, ASKING) and scripts
// without keys go to the home connection: the first seed.
//
// A subscriber (ConnectionOptions::on_message set) subscribes to shard channels: every
// shard's connection hears its pushes and runs on_ready, and as a subscribed connection
// refuses every other command, the slot map is asked of the seeds on connections of their
// own that never subscribe.
//
// Commands for a key wait for the first slot map (or its failure) before they are sent,
// each within its own deadline, so that two commands for one key (an acquire and its
// release) reach its owner in the order they were made; so do they when the slot's owner
// changes while some are in flight (in_order). A MOVED
// reply updates the slot's owner at once and starts a fresh CLUSTER SHARDS (CLUSTER SLOTS
// where SHARDS is unknown), then the command is sent once more to the new owner, within
// its own deadline; an ASK sends ASKING and the command once to the named server, without
// changing the map. A second redirection for one command is its answer: redis_error,
// "<shard>: MOVED <slot> <host>:<port> (a second redirection; the slot map is being
// refreshed)". The map is also asked again whenever a shard's connection fails (it may be
// failing over) or comes back after a loss. A command re-sent
// after a redirection is sent as EVAL (never EVALSHA): ASKING must directly precede it.
//
// Every master that owns slots is connected to as soon as a slot map names it, and each
// shard master's connection is told to ConnectionOptions::on_shard when it is made, each
// time it becomes ready, and when its server stops or starts again owning slots
// (ShardEvent): the member guard watches every master's start
// (member/shard_watch.hpp), not only the home seed's.
//
// Error details name the shard (its host:port) as a Connection's do.

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "net/cluster_map.hpp"
#include "net/connection.hpp"

namespace redlock::net {

class ClusterRouter final : public Connection {
 public:
  ClusterRouter(uv_loop_s* loop, ConnectionOptions options);

  void start();
  void shutdown();

  void submit_command(std::span<const std::string_view> argv, std::chrono::milliseconds timeout,
                      ReplyCallback&& callback, SharedCommand* shared);
  void submit_eval(const scripts::Script& script, std::span<const std::string_view> keys,
                   std::span<const std::string_view> args, std::chrono::milliseconds timeout,
                   ReplyCallback&& callback, SharedCommand* shared);

  const Endpoint& endpoint() const noexcept { return options_.endpoint; }
  /// The shards' masters once the slot map is known ("shards 127.0.0.1:7000,
  /// 127.0.0.1:7001, 127.0.0.1:7002"); the cluster's URL (password masked) before.
  const std::string& where() const noexcept { return where_; }
  /// The home connection's state.
  ConnectionState state() const noexcept;
  std::size_t pending() const noexcept;
  /// A command waits for the slot map or is not written on its shard's connection yet.
  bool has_unwritten() const noexcept;
  /// Summed over the shards' connections.
  const ConnectionStats& stats() const noexcept;

 private:
  struct Shard {
    std::string host;
    std::uint16_t port = 0;
    std::string address;  // host:port as error details name it
    bool ready_before = false;
    // In the last slot map, or made since (before the first map: not known otherwise).
    bool owns = true;
    ConnectionPtr connection;  // last: closed first
  };
  struct Request;
  struct RouterTimer;

  Shard& shard(const std::string& host, std::uint16_t port);
  Shard& home() { return *shards_.front(); }
  // The shard of `key`'s slot; the slot is kept in `shared` (when given) for the other
  // members of the round, and in `routed_slot` (when given) when the map named it.
  Shard& route(std::string_view key, bool keyed, SharedCommand* shared,
               std::int32_t* routed_slot = nullptr);
  // A slot's commands reach its owner in the order they were made, also when the owner
  // changes with some in flight: a command whose slot has one in flight to the old owner
  // (stale) is sent there too, to be redirected behind it, rather than to the new owner
  // ahead of it (a release would otherwise find nothing, and the acquire re-sent after it
  // would keep the key for its whole TTL). Costs nothing while no command is stale.
  Shard& in_order(Shard& target, Request* request);
  void track(Request* request);
  void untrack(Request* request);
  // After the map changed: commands in flight to a server that no longer owns their slot.
  void mark_stale();
  Shard& master_shard(const ShardMaster& master);
  // ConnectionOptions::on_shard.
  void tell(Shard& shard, ShardEvent event);
  // Connects to every master of the map just read and tells which servers own slots again
  // or no longer.
  void meet_masters();
  // Sends the request's argv to `target` with what is left of its deadline (after ASKING
  // when `asking`), or answers it errc::timeout with `late` when nothing is left.
  void resend(Request* request, Shard& target, bool asking, const std::string& late);
  RouterTimer* make_timer();
  // refresh_map() on the next timers' turn, for hooks that may not send commands.
  void refresh_soon();
  // What a keyed command may wait beyond its timeout while the router meets the cluster:
  // the seeds' connect and the first slot map are not the node's round trip
  // (ConnectionImpl's first-contact allowance, for the map). connect_timeout bounds it.
  std::chrono::milliseconds first_map_allowance(bool keyed) const noexcept {
    return keyed && first_map_pending_ ? options_.connect_timeout : std::chrono::milliseconds(0);
  }
  void wait_for_map(Request* request);
  void expire_waiting();
  void flush_waiting();
  void on_reply(Request* request, const ReplyView& view);
  void follow(Request* request, const Redirect& redirect, const std::string& answered_by);
  void refresh_map();
  void ask_for_map(std::size_t seed, bool shards_command, std::uint64_t round);
  // An answer of round `round` (refresh_map's count): the first map read ends the round.
  void read_map(const ReplyView& view, std::size_t seed, bool shards_command, std::uint64_t round);
  // One server of the cluster, with the member's credentials and TLS.
  Endpoint server_endpoint(const std::string& host, std::uint16_t port) const;
  ConnectionOptions shard_options(const std::string& host, std::uint16_t port, bool home);
  // A connection to seed `seed` for the slot map alone, made when first asked: a
  // subscriber's for every seed, any router's for the seeds after the first.
  Connection& map_link(std::size_t seed);
  void answer_closed(ReplyCallback callback);

  uv_loop_s* loop_;
  ConnectionOptions options_;
  std::string where_;
  SlotMap map_;
  // By index into map_.masters(): the master's shard once a command was routed to it, so
  // that routing a command compares no addresses. Cleared whenever map_ changes.
  std::vector<Shard*> owner_shards_;
  bool map_known_ = false;
  bool first_map_pending_ = true;
  bool first_map_read_ = false;  // shards made after it are ShardEvent::appeared
  // A request for a command, reused from spare_; answer() hands its reply to the caller
  // and puts it back. Each command's callback runs exactly once (net/connection.hpp), so
  // a request in flight is owned by that callback.
  Request* take_request();
  void answer(Request* request, const ReplyView& view);
  std::vector<Request*> waiting_;         // keyed commands made before the map
  Request* in_flight_ = nullptr;          // keyed commands routed and not answered yet
  std::size_t stale_ = 0;                 // of those, sent to a former owner
  RouterTimer* timer_ = nullptr;          // their deadlines; closed in shutdown
  RouterTimer* refresh_timer_ = nullptr;  // refresh_soon(); closed in shutdown
  bool refreshing_ = false;
  std::uint64_t map_round_ = 0;       // refresh_map() calls; older answers are ignored
  std::size_t seeds_unanswered_ = 0;  // of this round, that read no map yet
  std::string map_source_;            // the seeds asked for the slot map last
  std::string map_refused_;           // a seed's refusal of CLUSTER SLOTS, the last one
  bool map_refusal_told_ = false;     // on_misconfigured, once
  bool closed_ = false;
  mutable ConnectionStats stats_;
  bool subscriber_ = false;
  std::vector<ConnectionPtr> map_links_;         // by seed (map_link)
  std::vector<std::unique_ptr<Shard>> shards_;   // [0]: home, the first seed
  std::vector<std::unique_ptr<Request>> spare_;  // requests answered, for reuse
};

}  // namespace redlock::net

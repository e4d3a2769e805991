#include "net/cluster_router.hpp"

#include <hiredis/hiredis.h>
#include <uv.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <memory>
#include <string>
#include <utility>

#include "net/closing.hpp"
#include "net/cluster_slot.hpp"
#include "net/command_encoder.hpp"
#include "net/errors.hpp"
#include "net/pipeline.hpp"
#include "net/sentinel_resolution.hpp"
#include "scripts/script.hpp"

namespace redlock::net {

namespace {

using Clock = std::chrono::steady_clock;

bool has_key(std::string_view command) {
  static constexpr std::array<std::string_view, 8> keyless{
      "HELLO", "INFO", "PING", "ROLE", "SUBSCRIBE", "UNSUBSCRIBE", "CLUSTER", "ASKING"};
  return std::none_of(keyless.begin(), keyless.end(), [&](std::string_view name) {
    return name.size() == command.size() &&
           std::equal(name.begin(), name.end(), command.begin(), [](char a, char b) {
             return a == (b >= 'a' && b <= 'z' ? static_cast<char>(b - 'a' + 'A') : b);
           });
  });
}

}  // namespace

// A command as the cluster may need to hear it again after a redirection. Requests are
// reused (ClusterRouter::spare_), their strings keeping their capacity: a lock cycle sends
// a few commands per member, and allocating each one's copy was the largest cost a
// cluster member added to the client's cycle (callgrind).
struct ClusterRouter::Request {
  // The words as RESP bulk strings, from `bulks` on. Copied in one piece from a round's
  // encoding (SharedCommand), which the shard's connection has made or reused by the
  // time the router copies it, or encoded here (no round, or a script's first EVAL on
  // that connection). Copying word by word cost 2.4k of a cluster member's 40k
  // instructions per cycle (callgrind).
  std::string encoded;
  std::size_t bulks = 0;
  // A script's: the words are numkeys, keys and args, and a resend is EVAL <source> words.
  const scripts::Script* script = nullptr;
  bool keyed = false;  // then word 1 is the key (a script's first key after numkeys)
  Clock::time_point deadline;
  std::chrono::milliseconds timeout{0};  // the caller's, which restarts when the first map comes
  ReplyCallback done;
  bool redirected = false;
  Shard* sent_to = nullptr;  // whose answer is awaited: it names the shard in details
  std::int32_t slot = -1;    // a keyed command's, once routed by the map
  // Keyed commands in flight, linked through the router (in_flight_), so that a command
  // made after its slot's owner changed does not overtake one made before (in_order).
  Request* previous = nullptr;
  Request* next = nullptr;
  bool tracked = false;
  // Sent to a server the map no longer names as its slot's owner: it will come back
  // redirected, and the slot's later commands follow it there.
  bool stale = false;
  // The refusal of the ASKING sent ahead of a resend (an ACL user without +asking): the
  // command then answers MOVED back to the owner, which names nothing of the cause. Shared
  // with ASKING's callback, which may outlive the request.
  std::shared_ptr<std::string> asking_refused;

  void keep(std::span<const std::string_view> argv, const SharedCommand* shared) {
    if (shared != nullptr && !shared->bytes.empty()) {
      encoded.assign(shared->bytes);
      bulks = array_header_size(argv.size());
      return;
    }
    encoded.clear();
    append_command(encoded, argv);
    bulks = array_header_size(argv.size());
  }
  void keep_script(std::string_view numkeys, std::span<const std::string_view> keys,
                   std::span<const std::string_view> args, const SharedCommand* shared) {
    // The round's encoding is an EVALSHA's: its words from eval_tail on.
    if (shared != nullptr && !shared->bytes.empty()) {
      encoded.assign(shared->bytes, shared->eval_tail);
      bulks = 0;
      return;
    }
    encoded.clear();
    const std::array<std::string_view, 1> head{numkeys};
    append_command(encoded, {head, keys, args});
    bulks = array_header_size(1 + keys.size() + args.size());
  }
  // Read back from the bulks "$<size>\r\n<bytes>\r\n" kept above.
  void words(std::vector<std::string_view>& out) const {
    const std::string_view text(encoded);
    std::size_t at = bulks;
    while (at < text.size()) {
      const std::size_t line_end = text.find('\r', at);
      std::size_t size = 0;
      std::from_chars(text.data() + at + 1, text.data() + line_end, size);
      out.push_back(text.substr(line_end + 2, size));
      at = line_end + 2 + size + 2;
    }
  }
  std::string_view key() const {
    std::vector<std::string_view> all;
    words(all);
    return all.size() > 1 ? all[1] : std::string_view();
  }
};

// A timer of the router's: the deadlines of the commands waiting for the first slot map,
// or a refresh of the map out of a connection's failure hook.
struct ClusterRouter::RouterTimer {
  uv_timer_t handle{};
  ClusterRouter* owner = nullptr;

  void close() {
    uv_timer_stop(&handle);
    close_and_free<RouterTimer>(&handle);
  }
};

ClusterRouter::ClusterRouter(uv_loop_s* loop, ConnectionOptions options)
    : loop_(loop),
      options_(std::move(options)),
      where_(options_.endpoint.display),
      subscriber_(static_cast<bool>(options_.on_message)) {
  routes_ = true;
}

void ClusterRouter::start() {
  const auto& seed = options_.endpoint.cluster_seeds.front();
  shard(seed.host, seed.port);
  refresh_map();
}

void ClusterRouter::shutdown() {
  if (closed_) return;
  closed_ = true;
  if (timer_ != nullptr) std::exchange(timer_, nullptr)->close();
  if (refresh_timer_ != nullptr) std::exchange(refresh_timer_, nullptr)->close();
  // Each connection answers its commands cancelled, synchronously, as it closes; so are
  // the commands still waiting for the map, in the order they were made.
  for (auto& shard : shards_) shard->connection.reset();
  map_links_.clear();
  auto waiting = std::exchange(waiting_, {});
  const auto now = Clock::now();
  for (Request* request : waiting) {
    // The map is here: what a command may wait now is its own round trip.
    request->deadline = std::min(request->deadline, now + request->timeout);
    const std::string detail = where_ + ": connection closed";
    answer(request, ReplyView{make_error_code(errc::cancelled), detail, nullptr});
  }
  run_next_turn(loop_, [this] { delete this; });
}

Endpoint ClusterRouter::server_endpoint(const std::string& host, std::uint16_t port) const {
  Endpoint endpoint = options_.endpoint;
  endpoint.cluster_seeds.clear();
  endpoint.host = host;
  endpoint.port = port;
  endpoint.db = 0;
  endpoint.display = describe_address(host, port);
  return endpoint;
}

ConnectionOptions ClusterRouter::shard_options(const std::string& host, std::uint16_t port,
                                               bool is_home) {
  ConnectionOptions options = options_;
  options.endpoint = server_endpoint(host, port);
  options.on_shard = nullptr;
  options.on_misconfigured = nullptr;
  options.on_redirected = nullptr;
  options.on_slot_map = nullptr;
  // A subscriber's shard channels live on the shards that own them: each shard's
  // connection hears its pushes and tells when it is ready to be subscribed again.
  if (!is_home && !subscriber_) {
    options.on_message = nullptr;
    options.on_ready = nullptr;
  }
  // A shard that comes back after a loss may have lost or handed over slots meanwhile.
  options.on_ready = [this, address = options.endpoint.display,
                      observed = std::move(options.on_ready)] {
    for (auto& shard : shards_) {
      if (shard->address != address) continue;
      if (shard->ready_before) refresh_map();
      shard->ready_before = true;
      tell(*shard, ShardEvent::ready);
    }
    if (observed) observed();
  };
  // A shard that fails may be failing over: the map names its replacement once the
  // cluster promoted it. A seed's failure is a reason too: the map it would have given may
  // be the one missing. Asked from a timer: the hook may not send commands (the failing
  // connection may be a seed asked).
  options.on_failed = [this, observed = std::move(options.on_failed)](std::error_code error,
                                                                      std::string_view detail) {
    if (observed) observed(error, detail);
    refresh_soon();
  };
  return options;
}

ClusterRouter::Shard& ClusterRouter::shard(const std::string& host, std::uint16_t port) {
  for (auto& known : shards_) {
    if (known->host == host && known->port == port) return *known;
  }
  auto created = std::make_unique<Shard>();
  created->host = host;
  created->port = port;
  created->address = describe_address(host, port);
  created->connection.reset(
      Connection::create(loop_, shard_options(host, port, /*is_home=*/shards_.empty())));
  shards_.push_back(std::move(created));
  // Told before any command is sent on it: who the server is may be asked first.
  tell(*shards_.back(), first_map_read_ ? ShardEvent::appeared : ShardEvent::met);
  return *shards_.back();
}

ClusterRouter::Shard& ClusterRouter::master_shard(const ShardMaster& master) {
  const bool tls = options_.endpoint.scheme == Scheme::rediss && master.tls_port != 0;
  // A master whose endpoint the cluster does not know is the server the map came from.
  return shard(master.host.empty() ? home().host : master.host,
               tls ? master.tls_port : master.port);
}

void ClusterRouter::tell(Shard& shard, ShardEvent event) {
  if (options_.on_shard && !closed_) options_.on_shard(*shard.connection, shard.address, event);
}

ClusterRouter::Shard& ClusterRouter::route(std::string_view key, bool keyed, SharedCommand* shared,
                                           std::int32_t* routed_slot) {
  if (!keyed || !map_known_) return home();
  std::uint16_t slot = 0;
  if (shared == nullptr) {
    slot = key_slot(key);
  } else {
    if (shared->slot < 0) shared->slot = key_slot(key);
    slot = static_cast<std::uint16_t>(shared->slot);
  }
  if (routed_slot != nullptr) *routed_slot = slot;
  const std::int32_t owner = map_.owner_index(slot);
  if (owner < 0) return home();
  const auto index = static_cast<std::size_t>(owner);
  if (owner_shards_.size() <= index) owner_shards_.resize(map_.masters().size(), nullptr);
  Shard*& cached = owner_shards_[index];
  if (cached == nullptr) cached = &master_shard(map_.masters()[index]);
  return *cached;
}

void ClusterRouter::submit_command(std::span<const std::string_view> argv,
                                   std::chrono::milliseconds timeout, ReplyCallback&& callback,
                                   SharedCommand* shared) {
  if (closed_) return answer_closed(std::move(callback));
  Request* request = take_request();
  request->keyed = argv.size() > 1 && has_key(argv[0]);
  request->deadline = Clock::now() + timeout + first_map_allowance(request->keyed);
  request->timeout = timeout;
  request->done = std::move(callback);
  if (request->keyed && first_map_pending_) {
    request->keep(argv, nullptr);
    return wait_for_map(request);
  }
  Shard& target = in_order(
      route(request->keyed ? argv[1] : std::string_view(), request->keyed, shared, &request->slot),
      request);
  request->sent_to = &target;
  track(request);
  target.connection->command(
      argv, timeout, [this, request](const ReplyView& view) { on_reply(request, view); }, shared);
  // After the connection took it, so that the round's encoding exists: the callback runs
  // on a later turn, never inside command().
  request->keep(argv, shared);
}

void ClusterRouter::submit_eval(const scripts::Script& script,
                                std::span<const std::string_view> keys,
                                std::span<const std::string_view> args,
                                std::chrono::milliseconds timeout, ReplyCallback&& callback,
                                SharedCommand* shared) {
  if (closed_) return answer_closed(std::move(callback));
  Request* request = take_request();
  request->script = &script;
  char digits[24];
  const auto digits_end = std::to_chars(digits, digits + sizeof digits, keys.size()).ptr;
  const std::string_view numkeys(digits, static_cast<std::size_t>(digits_end - digits));
  request->keyed = !keys.empty();
  request->deadline = Clock::now() + timeout + first_map_allowance(request->keyed);
  request->timeout = timeout;
  request->done = std::move(callback);
  if (request->keyed && first_map_pending_) {
    request->keep_script(numkeys, keys, args, nullptr);
    return wait_for_map(request);
  }
  Shard& target = in_order(route(request->keyed ? keys.front() : std::string_view(), request->keyed,
                                 shared, &request->slot),
                           request);
  request->sent_to = &target;
  track(request);
  target.connection->eval(
      script, keys, args, timeout,
      [this, request](const ReplyView& view) { on_reply(request, view); }, shared);
  request->keep_script(numkeys, keys, args, shared);  // after eval(), as in submit_command
}

void ClusterRouter::track(Request* request) {
  if (request->tracked || request->slot < 0) return;
  request->tracked = true;
  request->previous = nullptr;
  request->next = in_flight_;
  if (in_flight_ != nullptr) in_flight_->previous = request;
  in_flight_ = request;
}

void ClusterRouter::untrack(Request* request) {
  if (request->stale) {
    request->stale = false;
    --stale_;
  }
  if (!request->tracked) return;
  request->tracked = false;
  if (request->previous != nullptr) request->previous->next = request->next;
  if (request->next != nullptr) request->next->previous = request->previous;
  if (in_flight_ == request) in_flight_ = request->next;
  request->previous = request->next = nullptr;
}

ClusterRouter::Shard& ClusterRouter::in_order(Shard& target, Request* request) {
  if (stale_ == 0 || request->slot < 0) return target;
  for (Request* earlier = in_flight_; earlier != nullptr; earlier = earlier->next) {
    if (!earlier->stale || earlier->slot != request->slot) continue;
    // Behind it on the same connection: redirected after it, so re-sent after it.
    request->stale = true;
    ++stale_;
    return *earlier->sent_to;
  }
  return target;
}

void ClusterRouter::mark_stale() {
  for (Request* request = in_flight_; request != nullptr; request = request->next) {
    // A redirected command went where the cluster said; ASK does not change the map.
    if (request->stale || request->redirected) continue;
    const std::int32_t owner = map_.owner_index(static_cast<std::uint16_t>(request->slot));
    if (owner < 0) continue;
    if (&master_shard(map_.masters()[static_cast<std::size_t>(owner)]) == request->sent_to) {
      continue;
    }
    request->stale = true;
    ++stale_;
  }
}

ClusterRouter::Request* ClusterRouter::take_request() {
  if (spare_.empty()) return new Request;
  Request* request = spare_.back().release();
  spare_.pop_back();
  return request;
}

void ClusterRouter::answer(Request* request, const ReplyView& view) {
  ReplyView answered = view;
  if (request->sent_to != nullptr) answered.server = request->sent_to->connection.get();
  untrack(request);
  ReplyCallback done = std::move(request->done);
  request->done = nullptr;
  request->script = nullptr;
  request->redirected = false;
  request->sent_to = nullptr;
  request->slot = -1;
  request->asking_refused.reset();
  // Put back first: the callback may submit the next command, which takes it again.
  spare_.emplace_back(request);
  done(answered);
}

void ClusterRouter::on_reply(Request* request, const ReplyView& view) {
  // Most replies are no error at all: answered without looking for a redirection.
  if (!view.error || closed_ || view.error != errc::redis_error) return answer(request, view);
  const std::optional<Redirect> redirect = parse_redirect(view.detail);
  if (!redirect) return answer(request, view);
  const std::string address = request->sent_to->address;
  if (!request->redirected && options_.on_redirected) {
    options_.on_redirected(redirect->kind == Redirect::Kind::moved,
                           address + ": " + std::string(view.detail));
  }
  if (request->redirected) {
    if (request->asking_refused && !request->asking_refused->empty()) {
      return answer(request,
                    ReplyView{view.error, address + ": ASKING refused: " + *request->asking_refused,
                              view.reply});
    }
    const std::string detail = address + ": " + std::string(view.detail) +
                               " (a second redirection; the slot map is being refreshed)";
    refresh_map();
    return answer(request, ReplyView{view.error, detail, view.reply});
  }
  follow(request, *redirect, address);
}

void ClusterRouter::follow(Request* request, const Redirect& redirect,
                           const std::string& answered_by) {
  request->redirected = true;
  std::string host = redirect.host;
  if (host.empty()) {
    // The cluster does not know the owner's endpoint: it is the server that answered.
    for (const auto& known : shards_) {
      if (known->address == answered_by) host = known->host;
    }
  }
  if (redirect.kind == Redirect::Kind::moved) {
    map_.move(redirect.slot, ShardMaster{host, redirect.port, 0, {}});
    owner_shards_.clear();
    map_known_ = true;
    mark_stale();
    refresh_map();
  }
  Shard& target = shard(host, redirect.port);
  const bool moved = redirect.kind == Redirect::Kind::moved;
  resend(request, target, !moved,
         target.address + ": no time left to follow " + (moved ? "MOVED" : "ASK") + " from " +
             answered_by);
}

void ClusterRouter::resend(Request* request, Shard& target, bool asking, const std::string& late) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(request->deadline - Clock::now());
  if (left.count() <= 0) {
    return answer(request, ReplyView{make_error_code(errc::timeout), late, nullptr});
  }
  std::vector<std::string_view> argv;
  if (request->script != nullptr) {
    argv.emplace_back("EVAL");
    argv.push_back(request->script->source);
  }
  request->words(argv);
  if (asking) {
    const std::array<std::string_view, 1> asking_command{"ASKING"};
    auto refused = std::make_shared<std::string>();
    request->asking_refused = refused;
    target.connection->command(asking_command, left, [refused](const ReplyView& view) {
      if (view.error == errc::redis_error) refused->assign(view.detail);
    });
  }
  request->sent_to = &target;
  if (request->stale) {
    request->stale = false;
    --stale_;
  }
  track(request);
  target.connection->command(argv, left,
                             [this, request](const ReplyView& view) { on_reply(request, view); });
}

ClusterRouter::RouterTimer* ClusterRouter::make_timer() {
  auto* timer = new RouterTimer;
  timer->owner = this;
  timer->handle.data = timer;
  uv_timer_init(loop_, &timer->handle);
  return timer;
}

void ClusterRouter::refresh_soon() {
  if (closed_) return;
  if (refresh_timer_ == nullptr) refresh_timer_ = make_timer();
  uv_timer_start(
      &refresh_timer_->handle,
      [](uv_timer_t* handle) { static_cast<RouterTimer*>(handle->data)->owner->refresh_map(); }, 0,
      0);
}

void ClusterRouter::wait_for_map(Request* request) {
  if (timer_ == nullptr) timer_ = make_timer();
  waiting_.push_back(request);
  auto first = waiting_.front()->deadline;
  for (const auto& one : waiting_) first = std::min(first, one->deadline);
  const auto due = std::chrono::ceil<std::chrono::milliseconds>(first - Clock::now());
  uv_timer_start(
      &timer_->handle,
      [](uv_timer_t* handle) { static_cast<RouterTimer*>(handle->data)->owner->expire_waiting(); },
      static_cast<std::uint64_t>(std::max<long long>(due.count(), 0)), 0);
}

void ClusterRouter::expire_waiting() {
  const auto now = Clock::now();
  std::vector<Request*> late;
  std::vector<Request*> kept;
  for (Request* request : waiting_) (request->deadline <= now ? late : kept).push_back(request);
  waiting_ = std::move(kept);
  if (!waiting_.empty()) {
    // Re-armed for the next deadline: wait_for_map computes it.
    Request* next = waiting_.back();
    waiting_.pop_back();
    wait_for_map(next);
  }
  for (Request* request : late) {
    const std::string detail = where_ + ": no slot map from the cluster within the command's " +
                               "deadline (asked of " + map_source_ + ")";
    answer(request, ReplyView{make_error_code(errc::timeout), detail, nullptr});
  }
}

void ClusterRouter::flush_waiting() {
  first_map_pending_ = false;
  if (timer_ != nullptr) uv_timer_stop(&timer_->handle);
  auto waiting = std::exchange(waiting_, {});
  const auto now = Clock::now();
  for (Request* request : waiting) {
    // The map is here: what a command may wait now is its own round trip.
    request->deadline = std::min(request->deadline, now + request->timeout);
    resend(request, route(request->key(), true, nullptr, &request->slot), false,
           where_ + ": no time left after the slot map came");
  }
}

void ClusterRouter::refresh_map() {
  if (refreshing_ || closed_) return;
  refreshing_ = true;
  const std::uint64_t round = ++map_round_;
  const auto& seeds = options_.endpoint.cluster_seeds;
  seeds_unanswered_ = seeds.size();
  map_source_.clear();
  for (const auto& seed : seeds) {
    if (!map_source_.empty()) map_source_ += ", ";
    map_source_ += describe_address(seed.host, seed.port);
  }
  for (std::size_t seed = 0; seed < seeds.size(); ++seed) ask_for_map(seed, true, round);
}

void ClusterRouter::ask_for_map(std::size_t seed, bool shards_command, std::uint64_t round) {
  const auto& address = options_.endpoint.cluster_seeds[seed];
  const std::array<std::string_view, 2> command{"CLUSTER", shards_command ? "SHARDS" : "SLOTS"};
  // The home connection asks for the first seed; any other seed is asked on a link of its
  // own, so that a seed which is a replica is not met as a shard before it is a master.
  Connection& source =
      subscriber_ || seed > 0 ? map_link(seed) : *shard(address.host, address.port).connection;
  source.command(command, options_.connect_timeout,
                 [this, seed, shards_command, round](const ReplyView& view) {
                   read_map(view, seed, shards_command, round);
                 });
}

Connection& ClusterRouter::map_link(std::size_t seed) {
  if (map_links_.size() <= seed) map_links_.resize(seed + 1);
  if (!map_links_[seed]) {
    const auto& address = options_.endpoint.cluster_seeds[seed];
    ConnectionOptions options;  // none of the member's hooks: it only asks for maps
    options.endpoint = server_endpoint(address.host, address.port);
    options.connect_timeout = options_.connect_timeout;
    options.tls = options_.tls;
    options.random = options_.random;
    map_links_[seed].reset(Connection::create(loop_, std::move(options)));
  }
  return *map_links_[seed];
}

void ClusterRouter::read_map(const ReplyView& view, std::size_t seed, bool shards_command,
                             std::uint64_t round) {
  // A round another seed's map already ended, or one a later refresh replaced.
  if (closed_ || !refreshing_ || round != map_round_) return;
  // Before Redis 7.0: CLUSTER SLOTS says the same for a client that only routes.
  if (shards_command && view.error == errc::redis_error) return ask_for_map(seed, false, round);
  if (!shards_command && view.error == errc::redis_error) map_refused_.assign(view.detail);
  std::string problem;
  std::optional<SlotMap> map;
  if (!view.error) {
    map = shards_command ? SlotMap::from_shards(view.reply, problem)
                         : SlotMap::from_slots(view.reply, problem);
  }
  if (!map && --seeds_unanswered_ > 0) return;  // another seed may still answer
  refreshing_ = false;
  // Without a map (no seed answered, or each answered nonsense), waiting commands go home:
  // its MOVED corrects them, and the next redirection, failure or reconnect asks again.
  if (!map) {
    if (!map_refused_.empty() && !map_refusal_told_ && options_.on_misconfigured) {
      map_refusal_told_ = true;
      options_.on_misconfigured(
          "CLUSTER SHARDS and CLUSTER SLOTS refused (" + map_refused_ +
          "): keys are routed by following MOVED, and only the masters it names are met, so "
          "the member guard watches no other (grant the user +cluster|shards or "
          "+cluster|slots, docs/security.md)");
    }
    return flush_waiting();
  }
  map_ = std::move(*map);
  owner_shards_.clear();
  map_known_ = true;
  mark_stale();
  std::string shards;
  for (const auto& master : map_.masters()) {
    shards += (shards.empty() ? "" : ", ") + describe_address(master.host, master.port);
  }
  where_ = "shards " + shards;
  if (options_.on_slot_map) options_.on_slot_map(where_);
  meet_masters();
  flush_waiting();
}

void ClusterRouter::meet_masters() {
  // Every master that owns slots is connected to at once, not when a key first needs it:
  // its start is learnt while this client meets the cluster, so a master that restarts or
  // is replaced later is seen (ShardEvent). A server that owned no slot in the last map and
  // owns some now is asked again (its connection may have stayed open while it was a
  // replica); one that owns none now is told so (it may be down for good).
  std::vector<Shard*> owners;
  // Slot-less masters hold no keys: a cluster just formed lists its replicas-to-be so.
  for (const auto& master : map_.owners()) owners.push_back(&master_shard(master));
  for (const auto& shard : shards_) {
    const bool owns = std::find(owners.begin(), owners.end(), shard.get()) != owners.end();
    if (owns == shard->owns) continue;
    shard->owns = owns;
    tell(*shard, owns ? ShardEvent::regained : ShardEvent::left);
  }
  first_map_read_ = true;
}

void ClusterRouter::answer_closed(ReplyCallback callback) {
  run_next_turn(loop_, [callback = std::move(callback), where = options_.endpoint.display] {
    const std::string detail = where + ": connection closed";
    callback(ReplyView{make_error_code(errc::cancelled), detail, nullptr});
  });
}

ConnectionState ClusterRouter::state() const noexcept {
  if (closed_ || shards_.empty() || !shards_.front()->connection) return ConnectionState::closed;
  return shards_.front()->connection->state();
}

std::size_t ClusterRouter::pending() const noexcept {
  std::size_t total = 0;
  for (const auto& shard : shards_) {
    if (shard->connection) total += shard->connection->pending();
  }
  return total;
}

bool ClusterRouter::has_unwritten() const noexcept {
  if (closed_) return false;
  if (!waiting_.empty()) return true;
  for (const auto& shard : shards_) {
    if (shard->connection && shard->connection->has_unwritten()) return true;
  }
  return false;
}

const ConnectionStats& ClusterRouter::stats() const noexcept {
  stats_ = {};
  for (const auto& shard : shards_) {
    if (!shard->connection) continue;
    const ConnectionStats& one = shard->connection->stats();
    stats_.commands += one.commands;
    stats_.writes += one.writes;
    stats_.reads += one.reads;
    stats_.connects += one.connects;
    stats_.disconnects += one.disconnects;
    stats_.late_replies += one.late_replies;
  }
  return stats_;
}

}  // namespace redlock::net

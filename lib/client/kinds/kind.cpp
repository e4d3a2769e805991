#include "client/kinds/kind.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <utility>

#include "client/engine/engine.hpp"
#include "client/rounds/round.hpp"
#include "client/util/messages.hpp"
#include "member/acquire_reply.hpp"
#include "scripts/kind_scripts.hpp"
#include "scripts/lock_scripts.hpp"

namespace redlock::detail {

using std::chrono::milliseconds;

namespace {

// A number's decimal text, on the stack: the calls format a TTL or a token per member.
class Decimal {
 public:
  explicit Decimal(long long value)
      : length_(static_cast<std::size_t>(
            std::to_chars(text_.data(), text_.data() + text_.size(), value).ptr - text_.data())) {}
  Decimal(const Decimal&) = delete;
  Decimal& operator=(const Decimal&) = delete;
  operator std::string_view() const noexcept { return {text_.data(), length_}; }

 private:
  std::array<char, 24> text_{};
  std::size_t length_;
};

const char* flag(bool on) {
  return on ? "1" : "0";
}

Command command_of(const scripts::Script& script, std::span<const std::string_view> keys,
                   std::span<const std::string_view> args, ReplyReader read) {
  Command command;
  command.script = &script;
  command.keys = keys;
  command.args = args;
  command.read = read;
  return command;
}

// --- replies -----------------------------------------------------------------------------

bool is_integer(const redisReply* reply) {
  return reply->type == REDIS_REPLY_INTEGER;
}

std::string_view text_of(const redisReply* reply) {
  return {reply->str, reply->len};
}

// The exclusive lock's release, extend and fence scripts: 1 done, 0 not ours. One named
// result on every path, so that it is built in the caller's storage (NRVO) rather than moved
// there: a reply is built for each node twice a cycle.
NodeReply owner_checked(const redisReply* reply, std::string_view where, const char* script) {
  NodeReply result;
  if (is_integer(reply) && reply->integer == 1) {
    result.status = NodeStatus::granted;
  } else if (is_integer(reply) && reply->integer == 0) {
    result.status = NodeStatus::not_held;
  } else {
    result = unexpected_reply_to(script, reply, where);
  }
  return result;
}

NodeReply read_release(const redisReply* reply, std::string_view where) {
  return owner_checked(reply, where, "the release script");
}

NodeReply read_extend(const redisReply* reply, std::string_view where) {
  return owner_checked(reply, where, "the extend script");
}

NodeReply read_fence(const redisReply* reply, std::string_view where) {
  return owner_checked(reply, where, "the fence script");
}

// --- the exclusive lock (scripts/lock_scripts.hpp) ---------------------------------------

std::string describe_exclusive(const Kind& kind) {
  return "lock " + quote_key(kind.key());
}

// Without fencing a member whose server takes it sends SET NX PX GET instead of the
// script (Command::by_set_nx_get), and the script, where it is sent, leaves the counter
// alone: it is not named then (no string made for it per member on the hot path). Fencing
// needs the counter's INCR in the same atomic step as the SET: the script.
void exclusive_acquire(const Kind& kind, Node& node, const Kind::Attempt& attempt,
                       milliseconds timeout, NodeCallback&& done) {
  const std::array<std::string_view, 3> args{attempt.value, attempt.ttl_ms(),
                                             flag(attempt.fencing)};
  if (!attempt.fencing) {
    const std::array<std::string_view, 1> keys{kind.key()};
    Command command = command_of(scripts::acquire(), keys, args, interpret_acquire_script);
    command.by_set_nx_get = true;
    command.holder_ttl = attempt.holder_ttl;
    return node.run(command, timeout, std::move(done));
  }
  const std::string fence_key = node.fence_key(kind.key());
  const std::array<std::string_view, 2> keys{kind.key(), fence_key};
  node.run(command_of(scripts::acquire(), keys, args, interpret_acquire_script), timeout,
           std::move(done));
}

void exclusive_extend(const Kind& kind, Node& node, std::string_view value, milliseconds ttl,
                      milliseconds timeout, NodeCallback&& done) {
  const Decimal ttl_ms(ttl.count());
  const std::array<std::string_view, 1> keys{kind.key()};
  const std::array<std::string_view, 2> args{value, ttl_ms};
  Command command = command_of(scripts::extend(), keys, args, read_extend);
  command.same_for_every_member = true;
  node.run(command, timeout, std::move(done));
}

void exclusive_fence(const Kind& kind, Node& node, std::string_view value,
                     const RoundResult& acquired, milliseconds timeout, NodeCallback&& done) {
  const std::string fence_key = node.fence_key(kind.key());
  const Decimal token(static_cast<long long>(acquired.max_token));
  const std::array<std::string_view, 2> keys{kind.key(), fence_key};
  const std::array<std::string_view, 2> args{value, token};
  node.run(command_of(scripts::fence(), keys, args, read_fence), timeout, std::move(done));
}

// Three scripts rather than one with an announce argument (lock_scripts.cpp): the quiet
// one, the one that PUBLISHes on "<key>:released", and the one for a member that names
// the channel itself (Node::release_channel), which SPUBLISHes there.
void exclusive_release(const Kind& kind, Node& node, std::string_view value, Announce announce,
                       milliseconds timeout, NodeCallback&& done, bool) {
  const std::array<std::string_view, 1> keys{kind.key()};
  std::array<std::string_view, 2> args{value, {}};
  const auto channel =
      announce == Announce::yes ? node.release_channel(kind.key()) : std::string_view();
  args[1] = channel;
  const auto& script = !channel.empty()            ? scripts::shard_release()
                       : announce == Announce::yes ? scripts::release()
                                                   : scripts::quiet_release();
  Command command =
      command_of(script, keys, std::span(args).first(channel.empty() ? 1 : 2), read_release);
  command.same_for_every_member = true;
  node.release(command, timeout, std::move(done));
}

// --- the semaphore's permit (scripts/kind_scripts.hpp) ------------------------------------

std::string describe_permit(const Kind& kind) {
  return "semaphore " + quote_key(kind.key()) + " (" + std::to_string(kind.permits()) + " permits)";
}

void permit_acquire(const Kind& kind, Node& node, const Kind::Attempt& attempt,
                    milliseconds timeout, NodeCallback&& done) {
  const Decimal permits(kind.permits());
  const std::array<std::string_view, 1> keys{kind.key()};
  const std::array<std::string_view, 3> args{attempt.value, attempt.ttl_ms(), permits};
  node.run(command_of(scripts::semaphore_acquire(), keys, args, read_kind_reply), timeout,
           std::move(done));
}

void permit_extend(const Kind& kind, Node& node, std::string_view value, milliseconds ttl,
                   milliseconds timeout, NodeCallback&& done) {
  const Decimal ttl_ms(ttl.count());
  const std::array<std::string_view, 1> keys{kind.key()};
  const std::array<std::string_view, 2> args{value, ttl_ms};
  node.run(command_of(scripts::semaphore_extend(), keys, args, read_kind_reply), timeout,
           std::move(done));
}

void permit_release(const Kind& kind, Node& node, std::string_view value, Announce announce,
                    milliseconds timeout, NodeCallback&& done, bool) {
  const std::array<std::string_view, 1> keys{kind.key()};
  const std::array<std::string_view, 2> args{value, node.announce_argument(announce)};
  node.release(command_of(scripts::semaphore_release(), keys, args, read_kind_reply), timeout,
               std::move(done));
}

// --- the read-write lock's reader and writer (scripts/kind_scripts.hpp) -------------------

std::string describe_reader(const Kind& kind) {
  return "read lock " + quote_key(kind.key());
}

std::string describe_writer(const Kind& kind) {
  return "write lock " + quote_key(kind.key());
}

// `mode`: "r" or "w". A reader has no intent: its id "" and TTL 0.
void rw_acquire(const char* mode, const Kind& kind, Node& node, const Kind::Attempt& attempt,
                milliseconds timeout, NodeCallback&& done) {
  const Decimal intent_ms(kind.intent_ttl().count());
  const std::string fence_key = node.fence_key(kind.key());
  const std::array<std::string_view, 2> keys{kind.key(), fence_key};
  const std::array<std::string_view, 6> args{
      attempt.value, attempt.ttl_ms(), mode, kind.intent(), intent_ms, flag(attempt.fencing)};
  node.run(command_of(scripts::rw_acquire(), keys, args, read_kind_reply), timeout,
           std::move(done));
}

void rw_extend(const char* mode, const Kind& kind, Node& node, std::string_view value,
               milliseconds ttl, milliseconds timeout, NodeCallback&& done) {
  const Decimal ttl_ms(ttl.count());
  const std::array<std::string_view, 1> keys{kind.key()};
  const std::array<std::string_view, 3> args{value, ttl_ms, mode};
  node.run(command_of(scripts::rw_extend(), keys, args, read_kind_reply), timeout, std::move(done));
}

// A writer's release withdraws its intent too unless `keep_intent`.
void rw_release(const char* mode, const Kind& kind, Node& node, std::string_view value,
                Announce announce, milliseconds timeout, NodeCallback&& done, bool keep_intent) {
  const std::array<std::string_view, 1> keys{kind.key()};
  const std::array<std::string_view, 4> args{value, node.announce_argument(announce), mode,
                                             keep_intent ? std::string_view() : kind.intent()};
  node.release(command_of(scripts::rw_release(), keys, args, read_kind_reply), timeout,
               std::move(done));
}

void reader_acquire(const Kind& kind, Node& node, const Kind::Attempt& attempt,
                    milliseconds timeout, NodeCallback&& done) {
  rw_acquire("r", kind, node, attempt, timeout, std::move(done));
}

void writer_acquire(const Kind& kind, Node& node, const Kind::Attempt& attempt,
                    milliseconds timeout, NodeCallback&& done) {
  rw_acquire("w", kind, node, attempt, timeout, std::move(done));
}

void reader_extend(const Kind& kind, Node& node, std::string_view value, milliseconds ttl,
                   milliseconds timeout, NodeCallback&& done) {
  rw_extend("r", kind, node, value, ttl, timeout, std::move(done));
}

void writer_extend(const Kind& kind, Node& node, std::string_view value, milliseconds ttl,
                   milliseconds timeout, NodeCallback&& done) {
  rw_extend("w", kind, node, value, ttl, timeout, std::move(done));
}

void reader_release(const Kind& kind, Node& node, std::string_view value, Announce announce,
                    milliseconds timeout, NodeCallback&& done, bool keep_intent) {
  rw_release("r", kind, node, value, announce, timeout, std::move(done), keep_intent);
}

void writer_release(const Kind& kind, Node& node, std::string_view value, Announce announce,
                    milliseconds timeout, NodeCallback&& done, bool keep_intent) {
  rw_release("w", kind, node, value, announce, timeout, std::move(done), keep_intent);
}

// Writer with fencing: raises the node's counter to the token if `value` still writes.
void writer_fence(const Kind& kind, Node& node, std::string_view value, const RoundResult& acquired,
                  milliseconds timeout, NodeCallback&& done) {
  const std::string fence_key = node.fence_key(kind.key());
  const Decimal token(static_cast<long long>(acquired.max_token));
  const std::array<std::string_view, 2> keys{kind.key(), fence_key};
  const std::array<std::string_view, 2> args{value, token};
  node.run(command_of(scripts::rw_fence(), keys, args, read_kind_reply), timeout, std::move(done));
}

// --- the key set (scripts/kind_scripts.hpp), run in parts where the member must ----------

std::string describe_key_set(const Kind& kind) {
  const auto keys = kind.keys();
  std::string text = "lock of keys {";
  for (std::size_t i = 0; i < keys.size() && i < 8; ++i) {
    text += (i > 0 ? ", " : "") + quote_key(keys[i]);
  }
  return text + (keys.size() > 8 ? ", ...}" : "}");
}

// The set's keys at `positions`, in that order.
void add_keys(std::span<const std::string> keys, std::span<const std::size_t> positions,
              ScriptCall& out) {
  for (const auto at : positions) out.keys.emplace_back(keys[at]);
}

// With fencing, the keys' fence counters follow them in the same order.
void add_fence_keys(const Node& node, std::span<const std::string> keys,
                    std::span<const std::size_t> positions, ScriptCall& out) {
  for (const auto at : positions) out.keys.push_back(out.own(node.fence_key(keys[at])));
}

void key_set_acquire(const Kind& kind, Node& node, const Kind::Attempt& attempt,
                     milliseconds timeout, NodeCallback&& done) {
  const auto keys = kind.keys();
  const auto part = [&](std::span<const std::size_t> positions, ScriptCall& out) {
    add_keys(keys, positions, out);
    if (attempt.fencing) add_fence_keys(node, keys, positions, out);
    out.args = {attempt.value, attempt.ttl_ms(), flag(attempt.fencing)};
  };
  const auto undo = [&](std::span<const std::size_t> positions, ScriptCall& out) {
    add_keys(keys, positions, out);
    out.args = {attempt.value, node.announce_argument(Announce::no)};
  };
  node.run_key_set(
      keys, {KeySetCall::acquire, &scripts::multi_acquire(), part, &scripts::multi_release(), undo},
      timeout, read_kind_reply, std::move(done));
}

void key_set_extend(const Kind& kind, Node& node, std::string_view value, milliseconds ttl,
                    milliseconds timeout, NodeCallback&& done) {
  const Decimal ttl_ms(ttl.count());
  const auto keys = kind.keys();
  const auto part = [&](std::span<const std::size_t> positions, ScriptCall& out) {
    add_keys(keys, positions, out);
    out.args = {value, ttl_ms};
  };
  node.run_key_set(keys, {KeySetCall::extend, &scripts::multi_extend(), part}, timeout,
                   read_kind_reply, std::move(done));
}

// Raises each key's counter to its token (in the order of the set's keys) if `value`
// still holds every key on the node.
void key_set_fence(const Kind& kind, Node& node, std::string_view value,
                   const RoundResult& acquired, milliseconds timeout, NodeCallback&& done) {
  const auto keys = kind.keys();
  const auto& tokens = acquired.max_tokens;
  std::vector<std::string> token_texts;
  token_texts.reserve(keys.size());
  for (std::size_t at = 0; at < keys.size(); ++at) {
    token_texts.push_back(std::to_string(at < tokens.size() ? tokens[at] : 0));
  }
  const auto part = [&](std::span<const std::size_t> positions, ScriptCall& out) {
    add_keys(keys, positions, out);
    add_fence_keys(node, keys, positions, out);
    out.args = {value};
    for (const auto at : positions) out.args.emplace_back(token_texts[at]);
  };
  node.run_key_set(keys, {KeySetCall::fence, &scripts::multi_fence(), part}, timeout,
                   read_kind_reply, std::move(done));
}

void key_set_release(const Kind& kind, Node& node, std::string_view value, Announce announce,
                     milliseconds timeout, NodeCallback&& done, bool) {
  const auto keys = kind.keys();
  const auto part = [&](std::span<const std::size_t> positions, ScriptCall& out) {
    add_keys(keys, positions, out);
    // Only the part with the set's first key announces: waiters listen on its channel.
    const bool first = !positions.empty() && positions.front() == 0;
    out.args = {value, node.announce_argument(first ? announce : Announce::no)};
  };
  node.run_key_set(keys, {KeySetCall::release, &scripts::multi_release(), part}, timeout,
                   read_kind_reply, std::move(done));
}

// --- the table ----------------------------------------------------------------------------

constexpr Kind::Entry exclusive_entry{describe_exclusive,
                                      exclusive_acquire,
                                      exclusive_extend,
                                      exclusive_fence,
                                      exclusive_release,
                                      /*one_holder=*/true,
                                      /*sleeps_on_holder=*/true,
                                      /*keeps_wake=*/true,
                                      /*queues_behind_waiters=*/true,
                                      /*has_intent=*/false,
                                      /*token_per_key=*/false};
constexpr Kind::Entry permit_entry{describe_permit,
                                   permit_acquire,
                                   permit_extend,
                                   nullptr,
                                   permit_release,
                                   /*one_holder=*/false,
                                   /*sleeps_on_holder=*/true,
                                   /*keeps_wake=*/true,
                                   /*queues_behind_waiters=*/false,
                                   /*has_intent=*/false,
                                   /*token_per_key=*/false};
constexpr Kind::Entry reader_entry{describe_reader,
                                   reader_acquire,
                                   reader_extend,
                                   nullptr,
                                   reader_release,
                                   /*one_holder=*/false,
                                   /*sleeps_on_holder=*/true,
                                   /*keeps_wake=*/false,
                                   /*queues_behind_waiters=*/true,
                                   /*has_intent=*/false,
                                   /*token_per_key=*/false};
constexpr Kind::Entry writer_entry{describe_writer,
                                   writer_acquire,
                                   writer_extend,
                                   writer_fence,
                                   writer_release,
                                   /*one_holder=*/false,
                                   /*sleeps_on_holder=*/true,
                                   /*keeps_wake=*/true,
                                   /*queues_behind_waiters=*/true,
                                   /*has_intent=*/true,
                                   /*token_per_key=*/false};
constexpr Kind::Entry key_set_entry{describe_key_set,
                                    key_set_acquire,
                                    key_set_extend,
                                    key_set_fence,
                                    key_set_release,
                                    /*one_holder=*/false,
                                    /*sleeps_on_holder=*/false,
                                    /*keeps_wake=*/true,
                                    /*queues_behind_waiters=*/true,
                                    /*has_intent=*/false,
                                    /*token_per_key=*/true};

}  // namespace

// Every path returns `result`, so that it is built in the caller's storage (NRVO) instead of
// moved there: a reply is read for each node twice a cycle.
NodeReply read_kind_reply(const redisReply* reply, std::string_view where) {
  NodeReply result;
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0 || !is_integer(reply->element[0])) {
    result = unexpected_reply_to("a lock script", reply, where);
    return result;
  }
  const auto code = reply->element[0]->integer;
  if (code == 1) {
    result.status = NodeStatus::granted;
    if (reply->elements == 2 && is_integer(reply->element[1]) && reply->element[1]->integer > 0) {
      result.token = static_cast<std::uint64_t>(reply->element[1]->integer);
    }
    // A key set with fencing: {1, 0, one token per key}.
    for (std::size_t i = 2; i < reply->elements; ++i) {
      if (!is_integer(reply->element[i]) || reply->element[i]->integer <= 0) {
        result = unexpected_reply_to("a lock script", reply, where);
        return result;
      }
      result.tokens.push_back(static_cast<std::uint64_t>(reply->element[i]->integer));
    }
    return result;
  }
  if (code == 0 && reply->elements == 1) {
    result.status = NodeStatus::not_held;
    return result;
  }
  if (code == 0 && reply->elements == 4 && is_integer(reply->element[1]) &&
      reply->element[2]->type == REDIS_REPLY_STRING &&
      reply->element[3]->type == REDIS_REPLY_STRING) {
    result.status = NodeStatus::held;
    result.remaining_ttl = milliseconds(reply->element[1]->integer);
    result.holder = std::string(text_of(reply->element[2]));
    result.detail = std::string(text_of(reply->element[3]));
    return result;
  }
  if (code == 0 && reply->elements == 5 && is_integer(reply->element[1]) &&
      reply->element[2]->type == REDIS_REPLY_STRING &&
      reply->element[4]->type == REDIS_REPLY_STRING) {
    result.status = NodeStatus::held;
    result.remaining_ttl = milliseconds(reply->element[1]->integer);
    result.holder = std::string(text_of(reply->element[2]));
    result.detail = "key " + quote_key(text_of(reply->element[4])) + " held by " + result.holder;
    return result;
  }
  if (code == -1 && reply->elements >= 2 && reply->element[1]->type == REDIS_REPLY_STRING) {
    result = wrong_kind_reply(text_of(reply->element[1]));
    if (reply->elements == 3 && reply->element[2]->type == REDIS_REPLY_STRING) {
      result.detail = "key " + quote_key(text_of(reply->element[2])) + ": " + result.detail;
    }
    return result;
  }
  result = unexpected_reply_to("a lock script", reply, where);
  return result;
}

// --- Kind -----------------------------------------------------------------------------------

Kind::Kind() : entry_(&exclusive_entry) {}

Kind Kind::exclusive(std::string key) {
  Kind kind(exclusive_entry);
  kind.key_ = std::move(key);
  return kind;
}

Kind Kind::permit(std::string key, int permits, int quorum) {
  Kind kind(permit_entry);
  kind.key_ = std::move(key);
  kind.permits_ = permits;
  kind.quorum_ = quorum;
  return kind;
}

Kind Kind::reader(std::string key, int quorum) {
  Kind kind(reader_entry);
  kind.key_ = std::move(key);
  kind.quorum_ = quorum;
  return kind;
}

Kind Kind::writer(std::string key, int quorum, std::string intent, milliseconds intent_ttl) {
  Kind kind(writer_entry);
  kind.key_ = std::move(key);
  kind.quorum_ = quorum;
  kind.extra_ = std::make_shared<const Extra>(Extra{{}, std::move(intent), intent_ttl});
  return kind;
}

Kind Kind::key_set(std::vector<std::string> keys, int quorum) {
  Kind kind(key_set_entry);
  kind.key_ = keys.front();
  kind.quorum_ = quorum;
  kind.extra_ = std::make_shared<const Extra>(Extra{std::move(keys), {}, milliseconds(0)});
  return kind;
}

std::span<const std::string> Kind::keys() const noexcept {
  if (entry_->token_per_key) return extra_->keys;
  return {&key_, 1};
}

const std::string& Kind::intent() const noexcept {
  static const std::string none;
  return extra_ ? extra_->intent : none;
}

milliseconds Kind::intent_ttl() const noexcept {
  return extra_ ? extra_->intent_ttl : milliseconds(0);
}

Kind::Attempt::Attempt(std::string_view value, milliseconds ttl, bool fencing,
                       HolderTtl holder_ttl) noexcept
    : value(value), fencing(fencing), holder_ttl(holder_ttl) {
  // The text of the TTL last formatted on this thread, made again only when the TTL
  // changes: a client's locks mostly share one TTL.
  thread_local struct {
    milliseconds::rep ttl = -1;
    char text[24];
    std::size_t length = 0;
  } last;
  if (last.ttl != ttl.count()) {
    last.length = static_cast<std::size_t>(
        std::to_chars(last.text, last.text + sizeof last.text, ttl.count()).ptr - last.text);
    last.ttl = ttl.count();
  }
  std::memcpy(ttl_text_, last.text, last.length);
  ttl_length_ = last.length;
}

std::string Kind::describe() const {
  return entry_->describe(*this);
}

bool Kind::fences() const noexcept {
  return entry_->write_back != nullptr;
}

bool Kind::sleeps_on_holder() const noexcept {
  return entry_->sleeps_on_holder;
}

std::optional<milliseconds> Kind::refresh_within() const noexcept {
  if (!entry_->has_intent) return std::nullopt;
  return std::max(intent_ttl() / 2, milliseconds(1));
}

bool Kind::keeps_wake() const noexcept {
  return entry_->keeps_wake;
}

bool Kind::queues_behind_waiters() const noexcept {
  return entry_->queues_behind_waiters;
}

void Kind::withdraw_intent(Engine& engine, milliseconds timeout) const {
  if (!entry_->has_intent || !engine.open()) return;
  for (auto& node : engine.nodes()) {
    // The value is the intent's own id: no lock entry has it, so only the intent goes.
    send_release(*node, intent(), Announce::no, timeout, engine.count_release([](NodeReply) {}));
  }
}

bool Kind::token_count_mismatch(const RoundResult& acquired) const {
  return entry_->token_per_key && acquired.max_tokens.size() != extra_->keys.size();
}

void Kind::tokens_of(const RoundResult& acquired, std::optional<std::uint64_t>& token,
                     std::vector<std::uint64_t>& tokens) const {
  if (entry_->token_per_key) {
    tokens = acquired.max_tokens;
  } else if (fences()) {
    token = acquired.max_token;
  }
}

std::optional<std::uint64_t> Kind::token_of(std::string_view key,
                                            std::optional<std::uint64_t> token,
                                            const std::vector<std::uint64_t>& tokens) const {
  if (!entry_->token_per_key) return key == key_ ? token : std::nullopt;
  const auto& keys = extra_->keys;
  for (std::size_t i = 0; i < keys.size() && i < tokens.size(); ++i) {
    if (keys[i] == key) return tokens[i];
  }
  return std::nullopt;
}

Kind::Holder Kind::holder_on_quorum(const RoundResult& refused) const {
  const auto& outcomes = refused.outcomes;
  // The exclusive lock has one holder: the value that refused on the most nodes. Another
  // contender's leftover on a node it does not hold is no holder, and refusals by
  // several values with none on a quorum are a split vote. A semaphore's or read-write
  // lock's refusals may name several holders that all hold; a key set's name the holder
  // of one of its keys each: every refusal counts.
  const bool one_holder = entry_->one_holder;
  const std::string* most = nullptr;
  int most_count = 0;
  int held = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].status != NodeStatus::held) continue;
    ++held;
    if (!one_holder || outcomes[i].holder.empty()) continue;
    int same = 0;
    for (std::size_t j = i; j < outcomes.size(); ++j) {
      if (outcomes[j].status == NodeStatus::held && outcomes[j].holder == outcomes[i].holder) {
        ++same;
      }
    }
    if (same > most_count) most = &outcomes[i].holder, most_count = same;
  }
  Holder holder;
  const int counted = one_holder ? most_count : held;
  holder.on_quorum = counted >= refused.quorum && counted > 0;
  if (!holder.on_quorum) return holder;
  for (const auto& outcome : outcomes) {
    if (outcome.status != NodeStatus::held) continue;
    if (most != nullptr && outcome.holder != *most) continue;
    if (holder.value.empty() && !outcome.holder.empty()) holder.value = outcome.holder;
    if (outcome.remaining_ttl.count() >= 0 &&
        (!holder.expires_in || outcome.remaining_ttl < *holder.expires_in)) {
      holder.expires_in = outcome.remaining_ttl;
    }
  }
  return holder;
}

}  // namespace redlock::detail

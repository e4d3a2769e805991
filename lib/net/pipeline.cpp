#include "net/pipeline.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <deque>
#include <utility>

#include "net/command_encoder.hpp"
#include "net/reply_reader.hpp"
#include "net/simple_reply.hpp"
#include "scripts/script.hpp"

namespace redlock::net {
namespace {

constexpr std::uint64_t ns_per_ms = 1'000'000;

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > no_deadline - b ? no_deadline : a + b;
}

}  // namespace

void Completion::run() {
  if (!callback) return;
  ReplyCallback call = std::move(callback);  // leaves it empty
  call(ReplyView{error, detail, reply, unsent});
}

void ReplyDeleter::operator()(redisReply* reply) const noexcept {
  if (in_place) return;
  if (cache != nullptr) {
    cache->free(reply);
  } else {
    freeReplyObject(reply);
  }
}

struct Pipeline::ServerDigests {
  struct Digest {
    const scripts::Script* script = nullptr;
    std::string sha1;      // set once, by the first answer; SentScript views it
    bool asked = false;    // a SCRIPT LOAD is on its way
    bool loaded = false;   // this connection's server has it, by that SCRIPT LOAD
    bool refused = false;  // the server refused it (an ACL user without +script|load)
  };
  std::deque<Digest> digests;  // a deque: SentScript views the strings of its elements

  Digest& of(const scripts::Script& script) {
    for (Digest& digest : digests) {
      if (digest.script == &script) return digest;
    }
    return digests.emplace_back(Digest{&script});
  }
};

Pipeline::Pipeline(PipelineOptions options)
    : options_(std::move(options)),
      reader_(create_reply_reader(&reply_cache_)),
      in_place_(new redisReply{}),
      server_digests_(std::make_shared<ServerDigests>()) {}

Pipeline::~Pipeline() {
  if (reader_) free_reply_reader(reader_);
  delete in_place_;
}

// --- commands in ----------------------------------------------------------------------

Completion Pipeline::failure(ReplyCallback callback, std::error_code error,
                             std::string detail) const {
  return Completion{std::move(callback), error, std::move(detail), nullptr};
}

// Only for a command admissible() turned away: building the refusal is kept off the
// path every command takes.
Completion Pipeline::refusal(ReplyCallback& callback, std::chrono::milliseconds timeout) const {
  Completion refused = timeout.count() <= 0
                           ? failure(std::move(callback), make_error_code(errc::timeout),
                                     options_.where + ": no time left for the command (timeout " +
                                         std::to_string(timeout.count()) + " ms)")
                           : failure(std::move(callback), make_error_code(errc::overloaded),
                                     options_.where + ": " + std::to_string(entries_.size()) +
                                         " commands already pending (max_pending)");
  refused.unsent = true;
  return refused;
}

std::optional<Completion> Pipeline::command(std::span<const std::string_view> argv,
                                            std::chrono::milliseconds timeout,
                                            ReplyCallback&& callback, std::uint64_t now,
                                            SharedCommand* shared) {
  if (argv.empty()) {
    return failure(std::move(callback), make_error_code(errc::invalid_argument),
                   options_.where + ": empty command");
  }
  if (!admissible(timeout)) [[unlikely]]
    return refusal(callback, timeout);
  const std::size_t begin = out_.size();
  if (shared != nullptr && !shared->bytes.empty()) {
    out_.append(shared->bytes);
  } else {
    append_command(out_, argv);
    if (shared != nullptr) shared->bytes.assign(out_, begin, std::string::npos);
  }
  Entry& entry = enqueue(std::move(callback), timeout, out_.size() - begin, now);
  entry.script = nullptr;
  entry.command.assign(argv[0]);
  if (argv[0] == "SUNSUBSCRIBE") entry.channel.assign(argv.size() == 2 ? argv[1] : "");
  entry.script_name = {};
  return std::nullopt;
}

bool Pipeline::awaits_sunsubscribe(std::string_view channel) const noexcept {
  if (written_ == 0) return false;
  const Entry& entry = entries_[0];
  return entry.command.view() == "SUNSUBSCRIBE" && entry.channel == channel;
}

std::optional<Completion> Pipeline::eval(const scripts::Script& script,
                                         std::span<const std::string_view> keys,
                                         std::span<const std::string_view> args,
                                         std::chrono::milliseconds timeout,
                                         ReplyCallback&& callback, std::uint64_t now,
                                         SharedCommand* shared) {
  if (!admissible(timeout)) [[unlikely]]
    return refusal(callback, timeout);
  char numkeys[24];
  const auto numkeys_end = std::to_chars(numkeys, numkeys + sizeof numkeys, keys.size()).ptr;
  const std::size_t argc = 3 + keys.size() + args.size();
  const std::size_t begin = out_.size();
  // The first use of a script on a connection sends its source: the server may lack it
  // (a fresh or restarted node), and an EVALSHA refused with NOSCRIPT would be overtaken
  // by the commands written behind it, a release the node has cached among them, which
  // would then run before its acquire. EVAL caches the script for the EVALSHAs after it.
  auto sent = std::find_if(scripts_sent_.begin(), scripts_sent_.end(),
                           [&](const SentScript& each) { return each.script == &script; });
  if (sent == scripts_sent_.end() && script.sha1.empty()) sent = loaded_by_server(script);
  const bool first_use = sent == scripts_sent_.end();
  const std::string_view head[] = {
      first_use ? "EVAL" : "EVALSHA", first_use ? script.source : sent->sha1,
      std::string_view(numkeys, static_cast<std::size_t>(numkeys_end - numkeys))};
  // EVAL differs from EVALSHA only in its first two arguments, so the encoded rest
  // ("numkeys key... arg...") is kept to re-send the script on NOSCRIPT.
  std::size_t tail = 0;
  if (!first_use && shared != nullptr && !shared->bytes.empty()) {
    out_.append(shared->bytes);
    tail = begin + shared->eval_tail;
  } else {
    append_command(out_, {head, keys, args});
    tail = begin + array_header_size(argc) + bulk_size(head[0]) + bulk_size(head[1]);
    if (!first_use && shared != nullptr) {
      shared->bytes.assign(out_, begin, std::string::npos);
      shared->eval_tail = tail - begin;
    }
  }
  Entry& entry = enqueue(std::move(callback), timeout, out_.size() - begin, now);
  entry.script = first_use ? nullptr : &script;  // EVAL cannot answer NOSCRIPT
  entry.command.assign_literal(first_use ? "EVAL" : "EVALSHA");
  entry.script_name = script.name;
  entry.argc = argc;
  if (!first_use) entry.eval_tail.assign(out_, tail, std::string::npos);
  if (first_use) note_sent(script, timeout, now);  // last: it may queue a command behind
  return std::nullopt;
}

// A script without a digest of its own that a SCRIPT LOAD on this connection cached on
// the server, and whose digest it answered, goes out as EVALSHA from now on.
std::vector<Pipeline::SentScript>::iterator Pipeline::loaded_by_server(
    const scripts::Script& script) {
  const ServerDigests::Digest& digest = server_digests_->of(script);
  if (!digest.loaded) return scripts_sent_.end();
  scripts_sent_.push_back({&script, digest.sha1});
  return scripts_sent_.end() - 1;
}

// A script's first EVAL on this connection went out: its next use is an EVALSHA, when its
// digest is known. Where this process could not compute one, the server is asked: SCRIPT
// LOAD answers the digest and nothing else, and is asked once (per connection, until the
// answer), not with every call; the script meanwhile goes out as EVAL. Called only for an
// EVAL, so scripts with a digest of their own cost nothing more per command.
void Pipeline::note_sent(const scripts::Script& script, std::chrono::milliseconds timeout,
                         std::uint64_t now) {
  if (!script.sha1.empty()) {
    scripts_sent_.push_back({&script, script.sha1});
    return;
  }
  ServerDigests::Digest& digest = server_digests_->of(script);
  if (!digest.sha1.empty()) {
    scripts_sent_.push_back({&script, digest.sha1});
    return;
  }
  if (digest.asked || digest.refused) return;
  digest.asked = true;
  // The callback holds the digests, not the pipeline: it may run after the connection
  // closed (with an error, which changes nothing but `asked`).
  ReplyCallback learn = [digests = server_digests_, &digest](const ReplyView& view) {
    digest.asked = false;
    if (view.reply == nullptr) return;  // no answer (a timeout, a lost connection): ask again
    constexpr std::size_t sha1_hex_size = 40;
    if (!view.error && view.reply->type == REDIS_REPLY_STRING && view.reply->len == sha1_hex_size) {
      if (digest.sha1.empty()) digest.sha1.assign(view.reply->str, view.reply->len);
      digest.loaded = true;
    } else {
      digest.refused = true;  // the script keeps going out as EVAL on this connection
    }
  };
  const std::string_view argv[] = {"SCRIPT", "LOAD", script.source};
  if (command(argv, timeout, std::move(learn), now)) digest.asked = false;  // max_pending
}

// The command's `length` bytes were just appended to out_ by the caller.
Pipeline::Entry& Pipeline::enqueue(ReplyCallback&& callback, std::chrono::milliseconds timeout,
                                   std::size_t length, std::uint64_t now) {
  const std::uint64_t deadline = saturating_add(now, std::uint64_t(timeout.count()) * ns_per_ms);
  if (entries_.empty()) earliest_ns_ = no_deadline;
  Entry& entry = entries_.push_back();
  entry.callback = std::move(callback);
  entry.deadline_ns = deadline;
  entry.timeout_ms = std::uint64_t(timeout.count());
  entry.bytes = length;
  entry.abandoned = false;
  entry.sequence = commands_++;
  earliest_ns_ = std::min(earliest_ns_, deadline);
  return entry;
}

void Pipeline::start_timeouts(std::uint64_t now) noexcept {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    Entry& entry = entries_[i];
    if (entry.abandoned) continue;
    const std::uint64_t from_now = saturating_add(now, entry.timeout_ms * ns_per_ms);
    if (entry.deadline_ns > from_now) entry.deadline_ns = from_now;
    earliest_ns_ = std::min(earliest_ns_, entry.deadline_ns);
  }
}

void Pipeline::discard_unread() {
  free_reply_reader(reader_);
  reader_ = create_reply_reader(&reply_cache_);
  unread_ = {};
  reader_holds_bytes_ = false;
}

// --- bytes out ------------------------------------------------------------------------

std::string& Pipeline::take_unsent() noexcept {
  written_ = entries_.size();
  return out_;
}

// --- bytes in -------------------------------------------------------------------------

ReplyPtr Pipeline::read(NetError& error) {
  if (!unread_.empty() && !reader_holds_bytes_) {
    if (const std::size_t used = read_simple_reply(unread_, *in_place_); used != 0) {
      unread_.remove_prefix(used);
      return ReplyPtr(in_place_, ReplyDeleter{nullptr, true});
    }
  }
  if (!unread_.empty()) {
    const std::string_view bytes = std::exchange(unread_, {});
    if (redisReaderFeed(reader_, bytes.data(), bytes.size()) != REDIS_OK) {
      error = from_reader(options_.where, reader_->errstr);
      return nullptr;
    }
    reader_holds_bytes_ = true;
  }
  if (!reader_holds_bytes_) return nullptr;
  void* object = nullptr;
  if (redisReaderGetReply(reader_, &object) != REDIS_OK) {
    const std::string oversized = oversized_reply_error(reader_);
    error = from_reader(options_.where, oversized.empty() ? reader_->errstr : oversized);
    return nullptr;
  }
  // A reply read whole ends a task; hiredis holds nothing more when its bytes ended there.
  // Without a reply it holds part of one.
  if (object != nullptr) reader_holds_bytes_ = reader_->pos < reader_->len;
  return ReplyPtr(static_cast<redisReply*>(object), ReplyDeleter{&reply_cache_});
}

bool Pipeline::match(const redisReply* reply, Completion& out, NetError& error) {
  if (written_ == 0) {
    error = from_reader(options_.where, "unexpected reply with no command in flight");
    return false;
  }
  Entry& entry = entries_.front();
  const bool is_error = reply->type == REDIS_REPLY_ERROR;
  const std::string_view text = is_error ? std::string_view(reply->str, reply->len) : "";
  if (is_error && entry.script != nullptr && is_noscript(text)) {
    out.reloaded_script = entry.script->name;
    resend_as_eval();
    return true;
  }
  if (entry.abandoned) ++late_replies_;
  out.callback = std::move(entry.callback);  // leaves it empty
  entry.script = nullptr;
  out.reply = reply;
  if (is_error && out.callback) {
    out.error = classify_error_reply(text);
    if (is_permission_error(text)) {
      // ACLs differ from node to node, so a denial says where, and what was denied.
      out.detail = denial_detail(text, entry);
    } else if (text.empty()) {
      // "-\r\n" gives no reason, yet every error detail must say what happened and where.
      out.detail = options_.where + ": error reply without text";
    } else {
      out.detail.assign(text);
    }
  }
  entries_.pop_front();
  --written_;
  return true;
}

// "<Redis' text> (EVALSHA of the acquire script on 127.0.0.1:7101)": Redis' own words
// first, so that a reader that matches on them still does.
std::string Pipeline::denial_detail(std::string_view text, const Entry& entry) const {
  std::string detail(text);
  detail.append(" (").append(entry.command.view());
  if (!entry.script_name.empty()) {
    detail.append(" of the ").append(entry.script_name).append(" script");
  }
  detail.append(" on ").append(options_.where).append(")");
  return detail;
}

// The server lost the script (SCRIPT FLUSH, restart, failover): send its source with
// EVAL, keeping deadline and callback. The retry takes its place in submission order
// among the commands not written yet, ahead of every one submitted after it, so that it
// runs on the node before them: a release submitted after its acquire must never run
// first and leave the acquire's value behind for a whole TTL. (Commands written after
// the EVALSHA ran already; if theirs were scripts too they meet NOSCRIPT as well and
// their retries line up behind this one.)
void Pipeline::resend_as_eval() {
  Entry& old_entry = entries_.front();
  ReplyCallback callback = std::exchange(old_entry.callback, nullptr);
  const std::uint64_t deadline = old_entry.deadline_ns;
  const std::uint64_t timeout_ms = old_entry.timeout_ms;
  const scripts::Script* script = std::exchange(old_entry.script, nullptr);
  const std::size_t argc = old_entry.argc;
  const std::uint64_t sequence = old_entry.sequence;
  const std::string_view script_name = old_entry.script_name;
  std::string tail;
  tail.swap(old_entry.eval_tail);
  entries_.pop_front();
  --written_;

  std::string eval;
  append_array_header(eval, argc);
  append_bulk(eval, "EVAL");
  append_bulk(eval, script->source);
  eval.append(tail);
  std::size_t position = written_;
  std::size_t offset = 0;
  while (position < entries_.size() && entries_[position].sequence < sequence) {
    offset += entries_[position].bytes;
    ++position;
  }
  out_.insert(offset, eval);

  Entry& entry = entries_.insert(position);
  entry.sequence = sequence;
  entry.callback = std::move(callback);
  entry.deadline_ns = deadline;
  entry.timeout_ms = timeout_ms;
  entry.bytes = eval.size();
  entry.script = nullptr;  // EVAL cannot answer NOSCRIPT
  entry.command.assign_literal("EVAL");
  entry.script_name = script_name;
  entry.argc = argc;
  entry.eval_tail.swap(tail);
  entry.abandoned = false;
}

// --- the time in ----------------------------------------------------------------------

std::uint64_t Pipeline::next_deadline() const noexcept {
  return entries_.empty() ? no_deadline : earliest_ns_;
}

// How long past its deadline an unanswered command makes the node count as dead.
// Clamped so that no product overflows, whatever the timeout and options.
std::uint64_t Pipeline::dead_node_ns(std::uint64_t timeout_ms) const {
  constexpr std::uint64_t max_ms = no_deadline / ns_per_ms;
  const std::uint64_t factor = options_.dead_node_factor;
  const std::uint64_t scaled_ms =
      std::min(timeout_ms, max_ms / std::max<std::uint64_t>(factor, 1)) * factor;
  const std::uint64_t min_ms =
      std::uint64_t(std::max<std::int64_t>(options_.dead_node_min.count(), 0));
  return std::min(std::max(min_ms, scaled_ms), max_ms) * ns_per_ms;
}

std::uint64_t Pipeline::dead_at(const Entry& entry) const {
  return saturating_add(entry.deadline_ns, dead_node_ns(entry.timeout_ms));
}

std::optional<NetError> Pipeline::expire(std::uint64_t now, bool connecting,
                                         std::vector<Completion>& out) {
  // Replies come in order, so an unanswered command this late means the node answers
  // nothing at all: only then is the connection worth dropping.
  for (std::size_t i = 0; i < written_; ++i) {
    const Entry& entry = entries_[i];
    if (dead_at(entry) <= now) {
      const std::uint64_t waited_ms = (dead_at(entry) - entry.deadline_ns) / ns_per_ms;
      return NetError{make_error_code(errc::connection_error),
                      options_.where + ": connection dropped: a command got no reply within " +
                          std::to_string(entry.timeout_ms + waited_ms) + " ms"};
    }
  }
  abandon_late(now, out);
  expire_queued(now, connecting, out);
  earliest_ns_ = no_deadline;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const Entry& entry = entries_[i];
    earliest_ns_ = std::min(earliest_ns_, entry.abandoned ? dead_at(entry) : entry.deadline_ns);
  }
  return std::nullopt;
}

// Commands in flight that ran out of time fail alone; their entries stay, abandoned, to
// take their replies when these come.
void Pipeline::abandon_late(std::uint64_t now, std::vector<Completion>& out) {
  for (std::size_t i = 0; i < written_; ++i) {
    Entry& entry = entries_[i];
    if (entry.abandoned || entry.deadline_ns > now) continue;
    out.push_back(failure(std::exchange(entry.callback, nullptr), make_error_code(errc::timeout),
                          no_reply_detail(entry.timeout_ms)));
    entry.script = nullptr;  // a NOSCRIPT reply is discarded like any other
    entry.abandoned = true;
  }
}

// Commands not written yet (waiting for the connection) that ran out of time are removed
// with their bytes; the connection itself is not at fault.
void Pipeline::expire_queued(std::uint64_t now, bool connecting, std::vector<Completion>& out) {
  const std::size_t before = out.size();
  std::size_t keep = written_;
  std::size_t read_at = 0;
  std::size_t write_at = 0;
  for (std::size_t i = written_; i < entries_.size(); ++i) {
    Entry& entry = entries_[i];
    const std::size_t bytes = entry.bytes;
    if (entry.deadline_ns <= now) {
      out.push_back(failure(
          std::exchange(entry.callback, nullptr), make_error_code(errc::timeout),
          no_reply_detail(entry.timeout_ms) + (connecting ? " (not sent: still connecting)" : "")));
      entry.script = nullptr;
    } else {
      if (write_at != read_at) std::memmove(out_.data() + write_at, out_.data() + read_at, bytes);
      write_at += bytes;
      if (keep != i) std::swap(entries_[keep], entry);
      ++keep;
    }
    read_at += bytes;
  }
  if (out.size() == before) return;
  out_.resize(write_at);
  entries_.truncate(keep);
}

void Pipeline::fail_all(std::error_code error, std::string_view detail, std::uint64_t expired_at,
                        std::vector<Completion>& out) {
  discard_unread();
  written_ = 0;
  out_.clear();
  scripts_sent_.clear();  // the next connection may reach a server without them
  // ... or one whose ACL allows SCRIPT LOAD (a Sentinel group's failover).
  for (ServerDigests::Digest& digest : server_digests_->digests) {
    digest.refused = false;
    digest.loaded = false;
  }
  while (!entries_.empty()) {
    Entry& entry = entries_.front();
    ReplyCallback callback = std::exchange(entry.callback, nullptr);
    entry.script = nullptr;
    const bool expired = entry.deadline_ns <= expired_at;
    const std::uint64_t timeout_ms = entry.timeout_ms;
    entries_.pop_front();
    if (!callback) continue;
    if (expired) {
      out.push_back(failure(std::move(callback), make_error_code(errc::timeout),
                            no_reply_detail(timeout_ms)));
    } else {
      out.push_back(failure(std::move(callback), error, std::string(detail)));
    }
  }
}

std::string Pipeline::no_reply_detail(std::uint64_t timeout_ms) const {
  return options_.where + ": no reply within " + std::to_string(timeout_ms) + " ms";
}

}  // namespace redlock::net

#pragma once
// The rules of one Redis connection's pipeline, without I/O: commands in, bytes out;
// bytes and the time in, the callbacks to run out.
//
// It owns the queue of commands (in flight first, then not yet written), their encoded
// bytes, the reply reader, and every rule about matching replies to commands: deadlines
// that fail one command and keep its slot, the dead-node bound, max_pending, and the
// EVALSHA -> EVAL resend on NOSCRIPT, and the digest asked of the server (SCRIPT LOAD)
// for a script that has none of its own. It never touches a socket, a timer or a clock:
// the connection around it (net/connection.cpp) writes the bytes it hands out, feeds it
// what the socket read, asks it when to look again, and runs the Completions it returns.
// So every rule is unit-tested with scripted reply bytes and a manual clock.
//
// Times are nanoseconds on any monotonic clock (the connection uses uv_hrtime()).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "net/errors.hpp"
#include "net/reply.hpp"
#include "net/reply_reader.hpp"
#include "net/ring.hpp"

struct redisReader;
struct redisReply;

namespace redlock::scripts {
struct Script;
}

namespace redlock::net {

inline constexpr std::uint64_t no_deadline = std::numeric_limits<std::uint64_t>::max();

struct PipelineOptions {
  std::string where;  ///< host:port or socket path: names the node in every detail
  /// See ConnectionOptions (net/connection.hpp) for these three.
  std::size_t max_pending = 4096;
  std::chrono::milliseconds dead_node_min{1000};
  std::uint32_t dead_node_factor = 10;
};

/// A callback taken out of its slot, with what it is to receive. Running it is the
/// caller's job, so that the pipeline is never inside a callback.
struct Completion {
  ReplyCallback callback;  ///< empty when there is nothing to run
  std::error_code error;
  std::string detail;
  const redisReply* reply = nullptr;  ///< owned by whoever read it; valid while it runs
  /// Set by match() when the reply was NOSCRIPT and the script was queued again as EVAL
  /// (there is no callback then): the script's name, for the observer.
  std::string_view reloaded_script;
  /// See ReplyView::unsent.
  bool unsent = false;

  /// Calls the callback, if any, once: it is taken out before it runs.
  void run();
};

/// One command's encoding, made by the first pipeline that sends it and copied by the
/// others: a lock round sends the same command to every node, and encoding it once per
/// node was a sixth of the client's instructions per cycle. Whoever passes one to
/// several commands vouches that they are the same command (the same arguments, byte for
/// byte); clear() it before another.
struct SharedCommand {
  std::string bytes;          ///< empty until a pipeline encoded the command
  std::size_t eval_tail = 0;  ///< an EVALSHA's: where "numkeys key... arg..." starts
  /// The key's cluster slot, once a cluster's router computed it (net/cluster_router.hpp);
  /// -1 before. The same key for every member of a round: hashed once, not per member.
  std::int32_t slot = -1;
  /// uv_hrtime() when the first node sent it: the others' timeouts start then too.
  std::uint64_t sent_at_ns = 0;

  void clear() noexcept {
    bytes.clear();
    slot = -1;
    sent_at_ns = 0;
  }
};

/// Frees a reply read by Pipeline::read(), into the pipeline's cache of reply objects;
/// one read in place (net/simple_reply.hpp) is the pipeline's own and frees nothing.
struct ReplyDeleter {
  ReplyCache* cache = nullptr;  ///< the pipeline's; it outlives every reply read from it
  bool in_place = false;
  void operator()(redisReply* reply) const noexcept;
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

class Pipeline {
 public:
  explicit Pipeline(PipelineOptions options);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // --- commands in --------------------------------------------------------------------

  /// Queues argv with a deadline `timeout` after `now` (when its timeout starts: a
  /// connection not up yet may start it later, see start_timeouts). A command that cannot be queued
  /// (empty, no time left, max_pending reached) is returned as the failure to deliver,
  /// and the caller delivers it later (never inside the submitting call).
  /// With `shared`, the bytes come from it when another pipeline encoded the command
  /// already, and go into it otherwise.
  std::optional<Completion> command(std::span<const std::string_view> argv,
                                    std::chrono::milliseconds timeout, ReplyCallback&& callback,
                                    std::uint64_t now, SharedCommand* shared = nullptr);

  /// EVALSHA of `script` (which must outlive the command), or EVAL with its source the
  /// first time this connection sends it; NOSCRIPT re-sends it as EVAL. `shared` as for
  /// command(), for the EVALSHA form only. A script without a digest (Script::sha1) goes
  /// out as EVAL until the server named its digest: the first EVAL is followed by a
  /// SCRIPT LOAD of it, whose answer no caller sees.
  std::optional<Completion> eval(const scripts::Script& script,
                                 std::span<const std::string_view> keys,
                                 std::span<const std::string_view> args,
                                 std::chrono::milliseconds timeout, ReplyCallback&& callback,
                                 std::uint64_t now, SharedCommand* shared = nullptr);

  // --- bytes out ----------------------------------------------------------------------

  /// Encoded bytes of the commands not written yet.
  bool has_unsent() const noexcept { return !out_.empty(); }
  /// Marks every queued command as written and hands out their bytes; the caller gives
  /// them to the transport, which empties the string (see Transport::write).
  std::string& take_unsent() noexcept;

  // --- bytes in -----------------------------------------------------------------------

  /// Feeds bytes read from the socket, which read() takes from where they lie: they must
  /// stay valid until read() returned null or failed. (Bytes fed before and not read by
  /// then belonged to a connection given up on, and are dropped.) Nothing is copied or
  /// parsed here: read() reports what the bytes hold.
  void feed(const char* data, std::size_t size) noexcept { unread_ = std::string_view(data, size); }
  /// The next complete reply, or null: then `error` is set on a protocol error, and left
  /// empty when the bytes fed so far hold no complete reply. A reply is valid until the
  /// next read() or feed(): a simple one (net/simple_reply.hpp) points into the bytes fed.
  ReplyPtr read(NetError& error);
  /// True while the reader holds part of a reply.
  bool mid_reply() const noexcept { return reader_holds_bytes_ || !unread_.empty(); }
  /// Drops what was read and not yet taken (the rest of a peer given up mid-handshake),
  /// keeping every command: they go to the next peer.
  void discard_unread();

  /// Matches `reply` to the oldest command in flight and fills `out` (a fresh Completion)
  /// with what its callback is to receive (nothing to run for a command that timed out or
  /// was re-sent as EVAL).
  /// False (and `error`) when no command is in flight: the peer is not a sane Redis.
  bool match(const redisReply* reply, Completion& out, NetError& error);

  // --- the time in --------------------------------------------------------------------

  /// The earliest moment a command needs a look: a live command's deadline, or an
  /// abandoned one's dead-node bound. no_deadline when nothing is pending. May be early
  /// (after commands completed); never late.
  std::uint64_t next_deadline() const noexcept;

  /// The connection is up at `now`: a command whose timeout was to start later (queued
  /// during the first connect) has it start now.
  void start_timeouts(std::uint64_t now) noexcept;

  /// Decides what passed its deadline by `now`. Commands in flight fail alone
  /// (errc::timeout) and keep their slot, abandoned, so that their reply is matched to
  /// them and dropped; commands not written yet are removed with their bytes.
  /// `connecting` words the detail of the latter ("not sent: still connecting").
  /// When a command in flight is still unanswered at the dead-node bound, nothing is
  /// expired and the error to drop the connection with is returned instead.
  std::optional<NetError> expire(std::uint64_t now, bool connecting, std::vector<Completion>& out);

  /// Takes every command out, in order, for the connection being dropped or closed, and
  /// starts a fresh reader. Commands whose deadline passed by `expired_at` get
  /// errc::timeout, the others `error`; abandoned ones were answered already.
  void fail_all(std::error_code error, std::string_view detail, std::uint64_t expired_at,
                std::vector<Completion>& out);

  /// Commands queued or in flight, counting abandoned ones whose reply is still due.
  std::size_t pending() const noexcept { return entries_.size(); }
  /// Renames the node in later details: a Sentinel group's master changes with failovers.
  void set_where(std::string where) { options_.where = std::move(where); }
  /// Commands whose bytes went out and whose reply has not come.
  std::size_t in_flight() const noexcept { return written_; }
  /// The oldest command in flight is SUNSUBSCRIBE of `channel` alone, so a "sunsubscribe"
  /// array naming it answers that command. Any other is the server's own: a cluster node
  /// ends the shard subscriptions of a slot it no longer owns with that same array.
  bool awaits_sunsubscribe(std::string_view channel) const noexcept;
  std::uint64_t commands() const noexcept { return commands_; }
  std::uint64_t late_replies() const noexcept { return late_replies_; }

 private:
  // A command queued or in flight. Slots are reused (see Ring), so eval_tail keeps its
  // capacity across commands.
  // argv[0], or "EVALSHA" / "EVAL", for an ACL denial's text and SUNSUBSCRIBE's match:
  // copied into the entry without a string assignment per command. Every command the
  // library sends is named in fewer characters than it holds; a longer name is kept cut.
  class CommandName {
   public:
    void assign(std::string_view name) noexcept {
      literal_ = nullptr;
      length_ = static_cast<unsigned char>(std::min(name.size(), sizeof text_));
      // An empty view's data may be null, which memcpy must not be given.
      if (length_ != 0) std::memcpy(text_, name.data(), length_);
    }
    /// A name that outlives every command (a string literal): kept by its address.
    void assign_literal(std::string_view name) noexcept {
      literal_ = name.data();
      length_ = static_cast<unsigned char>(std::min(name.size(), sizeof text_));
    }
    std::string_view view() const noexcept {
      return {literal_ != nullptr ? literal_ : text_, length_};
    }

   private:
    const char* literal_ = nullptr;
    char text_[23] = {};
    unsigned char length_ = 0;
  };

  struct Entry {
    ReplyCallback callback;
    std::uint64_t deadline_ns = 0;
    std::uint64_t timeout_ms = 0;             // for the error text only
    std::size_t bytes = 0;                    // encoded length, while the bytes wait in out_
    const scripts::Script* script = nullptr;  // set while a NOSCRIPT fallback is possible
    std::size_t argc = 0;
    std::string eval_tail;
    // What was sent, for the text of an ACL denial, which Redis words without naming the
    // command or key: "EVALSHA"/"EVAL" plus the script's name, or the command's argv[0].
    CommandName command;
    std::string_view script_name;  // the Script outlives the command (see eval())
    std::string channel;           // a SUNSUBSCRIBE's, set only for one (command says)
    // Timed out while in flight: the callback already ran, and the reply, when it comes,
    // is discarded. The entry stays so that the replies after it still match in order.
    bool abandoned = false;
    std::uint64_t sequence = 0;  // submission order, kept by a NOSCRIPT resend
  };

  // A script sent on this connection, and the digest its EVALSHAs name: its own, or the
  // server's (ServerDigests).
  struct SentScript {
    const scripts::Script* script = nullptr;
    std::string_view sha1;
  };

  // Whether a command with `timeout` may be queued now: time left, max_pending not reached.
  bool admissible(std::chrono::milliseconds timeout) const noexcept {
    return timeout.count() > 0 &&
           (options_.max_pending == 0 || entries_.size() < options_.max_pending);
  }
  Completion refusal(ReplyCallback& callback, std::chrono::milliseconds timeout) const;
  Entry& enqueue(ReplyCallback&& callback, std::chrono::milliseconds timeout, std::size_t length,
                 std::uint64_t now);
  void resend_as_eval();
  std::vector<SentScript>::iterator loaded_by_server(const scripts::Script& script);
  void note_sent(const scripts::Script& script, std::chrono::milliseconds timeout,
                 std::uint64_t now);
  std::uint64_t dead_node_ns(std::uint64_t timeout_ms) const;
  std::uint64_t dead_at(const Entry& entry) const;
  void abandon_late(std::uint64_t now, std::vector<Completion>& out);
  void expire_queued(std::uint64_t now, bool connecting, std::vector<Completion>& out);
  std::string denial_detail(std::string_view text, const Entry& entry) const;
  std::string no_reply_detail(std::uint64_t timeout_ms) const;
  Completion failure(ReplyCallback callback, std::error_code error, std::string detail) const;

  PipelineOptions options_;
  ReplyCache reply_cache_;  // before reader_, which uses it
  redisReader* reader_ = nullptr;
  // Bytes fed and not read yet, where the socket's read left them. While hiredis holds
  // none (a reply it read ended exactly where its bytes did), a simple reply at their
  // start is read in place into in_place_; otherwise they are copied into hiredis.
  std::string_view unread_;
  bool reader_holds_bytes_ = false;
  redisReply* in_place_ = nullptr;  // owned; hiredis' struct, which only reply.hpp declares
  std::string out_;                 // encoded bytes of entries [written_, size)
  Ring<Entry> entries_;             // in flight first, then queued
  std::size_t written_ = 0;         // entries whose bytes went to the transport
  std::uint64_t earliest_ns_ = no_deadline;  // lower bound of when an entry needs a look
  std::uint64_t commands_ = 0;
  std::uint64_t late_replies_ = 0;
  // Scripts sent on this connection (as EVAL the first time); cleared by fail_all().
  std::vector<SentScript> scripts_sent_;
  // The digests of scripts without one of their own, as the servers named them. Kept
  // across reconnects (a script's SHA-1 is the same on every server), and shared with the
  // SCRIPT LOAD callbacks, which may run after the pipeline is gone.
  struct ServerDigests;
  std::shared_ptr<ServerDigests> server_digests_;
};

}  // namespace redlock::net

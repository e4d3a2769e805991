#include "member/acquire_reply.hpp"

#include <hiredis/hiredis.h>

#include <charconv>
#include <string>

namespace redlock::detail {

namespace {

bool is_integer(const redisReply* reply, long long value) {
  return reply->type == REDIS_REPLY_INTEGER && reply->integer == value;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string_view text_of(const redisReply* reply) {
  return {reply->str, reply->len};
}

}  // namespace

NodeReply interpret_acquire_script(const redisReply* r, std::string_view where) {
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 && is_integer(r->element[0], 1) &&
      r->element[1]->type == REDIS_REPLY_INTEGER && r->element[1]->integer >= 0) {
    NodeReply granted;
    granted.status = NodeStatus::granted;
    granted.token = static_cast<std::uint64_t>(r->element[1]->integer);
    return granted;
  }
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 && is_integer(r->element[0], 0) &&
      r->element[1]->type == REDIS_REPLY_INTEGER && r->element[2]->type == REDIS_REPLY_STRING) {
    NodeReply held;
    held.status = NodeStatus::held;
    held.remaining_ttl = std::chrono::milliseconds(r->element[1]->integer);
    held.holder.assign(text_of(r->element[2]));
    return held;
  }
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 && is_integer(r->element[0], -1) &&
      r->element[1]->type == REDIS_REPLY_STRING) {
    return wrong_kind_reply(text_of(r->element[1]));
  }
  return unexpected_reply_to("the acquire script", r, where);
}

SetAnswer classify_set_reply(const net::ReplyView& view) {
  if (view.error) {
    if (view.error != errc::redis_error) return SetAnswer::failed;
    if (starts_with(view.detail, "WRONGTYPE")) return SetAnswer::wrong_type;
    // Redis 6.2 answers "ERR syntax error" to NX with GET; 6.0 and older know no GET
    // option at all and answer the same.
    if (view.detail.find("syntax error") != std::string_view::npos) return SetAnswer::unsupported;
    return SetAnswer::failed;
  }
  if (view.reply->type == REDIS_REPLY_NIL) return SetAnswer::granted;
  if (view.reply->type == REDIS_REPLY_STRING) return SetAnswer::held;
  return SetAnswer::failed;
}

NodeReply set_reply(SetAnswer answer, const net::ReplyView& view, std::string_view where) {
  // One named result on every path: built in the caller's slot (NRVO), not moved there.
  NodeReply reply;
  switch (answer) {
    case SetAnswer::granted:
      reply.status = NodeStatus::granted;
      break;
    case SetAnswer::held:
      reply.status = NodeStatus::held;
      reply.holder.assign(text_of(view.reply));
      break;
    default:
      reply = view.error ? failed_call(view) : unexpected_reply_to("SET NX GET", view.reply, where);
      break;
  }
  return reply;
}

std::chrono::milliseconds remaining_ttl_of(const net::ReplyView& pttl) {
  if (pttl.error || pttl.reply->type != REDIS_REPLY_INTEGER || pttl.reply->integer < 0) {
    return std::chrono::milliseconds(-1);
  }
  return std::chrono::milliseconds(pttl.reply->integer);
}

NodeReply wrong_kind_from_type(const net::ReplyView& type) {
  if (!type.error && type.reply != nullptr && type.reply->type == REDIS_REPLY_STATUS) {
    return wrong_kind_reply(text_of(type.reply));
  }
  NodeReply reply;
  reply.status = NodeStatus::redis_error;
  reply.error = make_error_code(errc::wrong_kind);
  reply.detail = "the key is not an exclusive lock (WRONGTYPE)";
  return reply;
}

bool accepts_set_nx_get(const net::ReplyView& hello) {
  if (hello.error || hello.reply->type != REDIS_REPLY_ARRAY) return false;
  const redisReply* r = hello.reply;
  for (std::size_t i = 0; i + 1 < r->elements; i += 2) {
    const redisReply* name = r->element[i];
    const redisReply* value = r->element[i + 1];
    if (name->type != REDIS_REPLY_STRING || text_of(name) != "version") continue;
    if (value->type != REDIS_REPLY_STRING) return false;
    const std::string_view version = text_of(value);
    int major = 0;
    const auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), major);
    return ec == std::errc() && end != version.data() && major >= 7;
  }
  return false;
}

}  // namespace redlock::detail

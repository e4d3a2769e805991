#include "net/reply_reader.hpp"

#include <hiredis/hiredis.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace redlock::net {
namespace {

// Per reader: array slots announced so far by the reply being read, and where objects
// come from.
struct ElementBudget {
  std::size_t used = 0;
  long long refused = 0;  // the element count of the array that broke the budget
  bool exceeded = false;
  ReplyCache* cache = nullptr;
};

ElementBudget& budget_of(const redisReadTask* task) {
  return *static_cast<ElementBudget*>(task->privdata);
}

// The object functions below build exactly what hiredis' defaults build, so that
// freeReplyObject frees them; only createArray checks the budget first.
redisReply* create_object(const redisReadTask* task, int type) {
  ReplyCache* cache = budget_of(task).cache;
  auto* reply = cache != nullptr ? cache->take()
                                 : static_cast<redisReply*>(std::calloc(1, sizeof(redisReply)));
  if (reply == nullptr) return nullptr;
  reply->type = type;
  if (task->parent != nullptr) {
    auto* parent = static_cast<redisReply*>(task->parent->obj);
    parent->element[task->idx] = reply;
  }
  return reply;
}

void* create_string(const redisReadTask* task, char* text, std::size_t length) {
  char* copy = static_cast<char*>(std::malloc(length + 1));
  if (copy == nullptr) return nullptr;
  std::memcpy(copy, text, length);
  copy[length] = '\0';
  redisReply* reply = create_object(task, task->type);
  if (reply == nullptr) {
    std::free(copy);
    return nullptr;
  }
  reply->str = copy;
  reply->len = length;
  return reply;
}

void* create_array(const redisReadTask* task, int elements) {
  ElementBudget& budget = budget_of(task);
  if (task->parent == nullptr) budget.used = 0;  // a new reply starts
  const std::size_t left = max_reply_elements - budget.used;
  if (elements < 0 || std::size_t(elements) > left) {
    budget.exceeded = true;
    budget.refused = elements;
    return nullptr;  // the reader reports "Out of memory"; oversized_reply_error says why
  }
  redisReply** slots = nullptr;
  if (elements > 0) {
    slots = static_cast<redisReply**>(std::calloc(std::size_t(elements), sizeof(redisReply*)));
    if (slots == nullptr) return nullptr;
  }
  redisReply* reply = create_object(task, REDIS_REPLY_ARRAY);
  if (reply == nullptr) {
    std::free(slots);
    return nullptr;
  }
  budget.used += std::size_t(elements);
  reply->element = slots;
  reply->elements = std::size_t(elements);
  return reply;
}

void* create_integer(const redisReadTask* task, long long value) {
  redisReply* reply = create_object(task, REDIS_REPLY_INTEGER);
  if (reply != nullptr) reply->integer = value;
  return reply;
}

void* create_nil(const redisReadTask* task) {
  return create_object(task, REDIS_REPLY_NIL);
}

redisReplyObjectFunctions bounded_functions = {create_string, create_array, create_integer,
                                               create_nil, freeReplyObject};

}  // namespace

ReplyCache::~ReplyCache() {
  for (std::size_t i = 0; i < count_; ++i) std::free(kept_[i]);
}

redisReply* ReplyCache::take() noexcept {
  if (count_ == 0) return static_cast<redisReply*>(std::calloc(1, sizeof(redisReply)));
  redisReply* reply = kept_[--count_];
  std::memset(reply, 0, sizeof(redisReply));
  return reply;
}

void ReplyCache::free(redisReply* reply) noexcept {
  if (reply == nullptr) return;
  switch (reply->type) {
    case REDIS_REPLY_ARRAY:
      for (std::size_t i = 0; i < reply->elements; ++i) free(reply->element[i]);
      std::free(reply->element);
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      std::free(reply->str);
      break;
    default:
      break;
  }
  if (count_ < kept_.size()) {
    kept_[count_++] = reply;
  } else {
    std::free(reply);
  }
}

redisReader* create_reply_reader(ReplyCache* cache) {
  auto* budget = new (std::nothrow) ElementBudget;
  if (budget == nullptr) return nullptr;
  budget->cache = cache;
  redisReader* reader = redisReaderCreateWithFunctions(&bounded_functions);
  if (reader == nullptr) {
    delete budget;
    return nullptr;
  }
  reader->privdata = budget;
  return reader;
}

void free_reply_reader(redisReader* reader) noexcept {
  if (reader == nullptr) return;
  delete static_cast<ElementBudget*>(reader->privdata);
  redisReaderFree(reader);
}

std::string oversized_reply_error(const redisReader* reader) {
  const auto* budget = static_cast<const ElementBudget*>(reader->privdata);
  if (budget == nullptr || !budget->exceeded) return {};
  return "a reply announced an array of " + std::to_string(budget->refused) +
         " elements, beyond the " + std::to_string(max_reply_elements) +
         " a reply may hold (not a Redis reply to a lock command)";
}

}  // namespace redlock::net

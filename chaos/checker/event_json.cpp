#include "checker/event_json.hpp"

#include <nlohmann/json.hpp>

namespace redlock::chaos {
namespace {

using nlohmann::json;

// Field readers: throw json::exception (caught below) on a wrong type.
std::string text(const json& record, const char* name) {
  auto it = record.find(name);
  return it == record.end() || it->is_null() ? std::string() : it->get<std::string>();
}

std::int64_t required_ns(const json& record, const char* name) {
  auto it = record.find(name);
  if (it == record.end() || !it->is_number_integer()) {
    throw std::invalid_argument(std::string("missing integer \"") + name + "\"");
  }
  return it->get<std::int64_t>();
}

// start_ns/end_ns, or at_ns standing for both.
void interval(const json& record, std::int64_t& start, std::int64_t& end) {
  if (!record.contains("start_ns") && record.contains("at_ns")) {
    start = end = required_ns(record, "at_ns");
    return;
  }
  start = required_ns(record, "start_ns");
  end = required_ns(record, "end_ns");
}

std::optional<std::uint64_t> token(const json& record, const char* field = "token") {
  auto it = record.find(field);
  if (it == record.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0)) {
    throw std::invalid_argument(std::string("\"") + field + "\" must be a non-negative integer");
  }
  return it->get<std::uint64_t>();
}

// Absent means the exclusive lock, which is all that records written before the family
// existed describe.
Primitive primitive(const json& record) {
  const std::string given = text(record, "primitive");
  if (given.empty()) return Primitive::exclusive;
  if (auto known = primitive_named(given)) return *known;
  throw std::invalid_argument("unknown primitive \"" + given + "\"");
}

Event hold(const json& record) {
  HoldEvent e;
  e.key = text(record, "key");
  e.client = text(record, "client");
  e.value = text(record, "value");
  e.start_ns = required_ns(record, "start_ns");
  e.end_ns = required_ns(record, "end_ns");
  e.token = token(record);
  e.primitive = primitive(record);
  // A leadership's token is its term, and every leadership has one: the term is what the
  // election promises to increase, so a record without it could not be judged.
  if (e.primitive == Primitive::election) {
    if (e.token)
      throw std::invalid_argument("an election hold carries its \"term\", not \"token\"");
    e.token = token(record, "term");
    if (!e.token) throw std::invalid_argument("an election hold needs its \"term\"");
  } else if (record.contains("term")) {
    throw std::invalid_argument("\"term\" belongs to an election hold");
  }
  if (e.primitive == Primitive::permit) {
    auto it = record.find("permits");
    if (it == record.end() || !it->is_number_integer() || it->get<std::int64_t>() < 1) {
      throw std::invalid_argument("a permit needs \"permits\" (its K, at least 1)");
    }
    e.permits = it->get<int>();
  }
  if (auto it = record.find("keys"); it != record.end() && !it->is_null()) {
    if (e.primitive != Primitive::multi) {
      throw std::invalid_argument("\"keys\" belongs to a multi hold");
    }
    e.keys = it->get<std::vector<std::string>>();
  }
  if (e.primitive == Primitive::multi) {
    if (e.keys.empty()) throw std::invalid_argument("a multi hold needs its \"keys\"");
    if (e.key.empty()) e.key = e.keys.front();
  }
  return e;
}

Event write(const json& record) {
  WriteEvent e;
  e.key = text(record, "key");
  e.client = text(record, "client");
  auto t = token(record);
  if (!t) throw std::invalid_argument("a write needs its \"token\"");
  e.token = *t;
  if (!record.contains("accepted")) throw std::invalid_argument("a write needs \"accepted\"");
  e.accepted = record.at("accepted").get<bool>();
  e.stale = record.value("stale", false);
  interval(record, e.start_ns, e.end_ns);
  return e;
}

Event attempt(const json& record) {
  AttemptEvent e;
  e.key = text(record, "key");
  e.client = text(record, "client");
  const std::string result = text(record, "result");
  if (result == "acquired") {
    e.result = AttemptResult::acquired;
  } else if (result == "conflict") {
    e.result = AttemptResult::conflict;
  } else if (result == "error") {
    e.result = AttemptResult::error;
  } else {
    throw std::invalid_argument("unknown attempt result \"" + result + "\"");
  }
  // Codes may be names or numbers (an errc value); both are kept as text.
  if (auto it = record.find("code"); it != record.end() && !it->is_null()) {
    e.code = it->is_string() ? it->get<std::string>() : it->dump();
  }
  e.at_ns = record.value("at_ns", std::int64_t{0});
  e.primitive = primitive(record);
  return e;
}

const char* result_name(AttemptResult result) {
  switch (result) {
    case AttemptResult::acquired:
      return "acquired";
    case AttemptResult::conflict:
      return "conflict";
    case AttemptResult::error:
      return "error";
  }
  return "error";
}

}  // namespace

ParsedLine parse_event_line(std::string_view line) {
  if (line.find_first_not_of(" \t\r\n") == std::string_view::npos) return IgnoredRecord{};
  // A worker killed mid-write leaves half a line: that is reported, never fatal.
  json record = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded()) return std::string("not JSON");
  if (!record.is_object()) return std::string("not a JSON object");
  try {
    const std::string type = text(record, "type");
    if (type == "hold") return hold(record);
    if (type == "write") return write(record);
    if (type == "attempt") return attempt(record);
    if (type.empty()) return std::string("no \"type\"");
    return IgnoredRecord{};
  } catch (const std::exception& error) {
    return std::string(error.what());
  }
}

std::string to_json_line(const Event& event) {
  json record;
  if (const auto* e = std::get_if<HoldEvent>(&event)) {
    record = {{"type", "hold"},    {"key", e->key},           {"client", e->client},
              {"value", e->value}, {"start_ns", e->start_ns}, {"end_ns", e->end_ns}};
    if (e->token) record[e->primitive == Primitive::election ? "term" : "token"] = *e->token;
    if (e->primitive != Primitive::exclusive) record["primitive"] = name(e->primitive);
    if (e->primitive == Primitive::permit) record["permits"] = e->permits;
    if (!e->keys.empty()) record["keys"] = e->keys;
  } else if (const auto* e = std::get_if<WriteEvent>(&event)) {
    record = {{"type", "write"},         {"key", e->key},           {"client", e->client},
              {"token", e->token},       {"accepted", e->accepted}, {"stale", e->stale},
              {"start_ns", e->start_ns}, {"end_ns", e->end_ns}};
  } else if (const auto* e = std::get_if<AttemptEvent>(&event)) {
    record = {{"type", "attempt"},
              {"key", e->key},
              {"client", e->client},
              {"result", result_name(e->result)},
              {"at_ns", e->at_ns}};
    if (!e->code.empty()) record["code"] = e->code;
    if (e->primitive != Primitive::exclusive) record["primitive"] = name(e->primitive);
  }
  return record.dump();
}

}  // namespace redlock::chaos

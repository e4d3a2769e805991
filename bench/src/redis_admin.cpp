#include "redis_admin.hpp"

#include <hiredis/hiredis.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace redlock_bench {

namespace {

struct Target {
  std::string host;
  int port = 6379;
  std::string unix_path;
  std::string username;
  std::string password;
};

// Enough of the library's URL grammar for the nodes a benchmark runs against;
// percent-encoded credentials are not decoded.
Target parse(const std::string& url) {
  Target target;
  std::string rest = url;
  if (rest.rfind("unix://", 0) == 0) {
    target.unix_path = rest.substr(7, rest.find('?') - 7);
    return target;
  }
  if (auto scheme = rest.find("://"); scheme != std::string::npos) rest = rest.substr(scheme + 3);
  if (auto slash = rest.find('/'); slash != std::string::npos) rest = rest.substr(0, slash);
  if (auto at = rest.rfind('@'); at != std::string::npos) {
    const std::string userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (auto colon = userinfo.find(':'); colon != std::string::npos) {
      target.username = userinfo.substr(0, colon);
      target.password = userinfo.substr(colon + 1);
    } else {
      target.username = userinfo;
    }
  }
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    target.host = rest.substr(1, close - 1);
    rest = rest.substr(close + 1);
  } else {
    const auto colon = rest.rfind(':');
    target.host = rest.substr(0, colon);
    rest = colon == std::string::npos ? "" : rest.substr(colon);
  }
  if (!rest.empty() && rest.front() == ':') target.port = std::atoi(rest.c_str() + 1);
  return target;
}

struct ReplyFree {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

}  // namespace

RedisAdmin::RedisAdmin(const std::string& url) : url_(url) {
  const Target target = parse(url);
  const timeval timeout{2, 0};
  context_ = target.unix_path.empty()
                 ? redisConnectWithTimeout(target.host.c_str(), target.port, timeout)
                 : redisConnectUnixWithTimeout(target.unix_path.c_str(), timeout);
  if (context_ == nullptr || context_->err) {
    const std::string why = context_ ? context_->errstr : "out of memory";
    if (context_) redisFree(context_);
    context_ = nullptr;
    throw std::runtime_error("connect " + url + ": " + why);
  }
  redisSetTimeout(context_, timeout);
  if (!target.password.empty()) {
    ReplyPtr reply(static_cast<redisReply*>(
        target.username.empty() ? redisCommand(context_, "AUTH %s", target.password.c_str())
                                : redisCommand(context_, "AUTH %s %s", target.username.c_str(),
                                               target.password.c_str())));
    if (!reply || reply->type == REDIS_REPLY_ERROR)
      throw std::runtime_error("AUTH on " + url + " failed");
  }
}

RedisAdmin::~RedisAdmin() {
  if (context_) redisFree(context_);
}

std::map<std::string, std::string> RedisAdmin::info(const std::string& section) {
  ReplyPtr reply(static_cast<redisReply*>(redisCommand(context_, "INFO %s", section.c_str())));
  if (!reply || reply->type != REDIS_REPLY_STRING) {
    throw std::runtime_error("INFO " + section + " on " + url_ + " failed");
  }
  std::map<std::string, std::string> fields;
  std::istringstream lines(std::string(reply->str, reply->len));
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (line.empty() || line.front() == '#' || colon == std::string::npos) continue;
    fields.emplace(line.substr(0, colon), line.substr(colon + 1));
  }
  return fields;
}

NodeCounters RedisAdmin::counters() {
  auto number = [](const std::map<std::string, std::string>& fields, const char* name) {
    auto it = fields.find(name);
    return it == fields.end() ? 0.0 : std::strtod(it->second.c_str(), nullptr);
  };
  const auto cpu = info("cpu");
  const auto stats = info("stats");
  NodeCounters counters;
  counters.cpu_us = (number(cpu, "used_cpu_user") + number(cpu, "used_cpu_sys")) * 1e6;
  counters.commands = number(stats, "total_commands_processed");
  counters.reads = number(stats, "total_reads_processed");
  counters.connections = number(stats, "total_connections_received");
  return counters;
}

pid_t RedisAdmin::pid() {
  const auto server = info("server");
  auto it = server.find("process_id");
  if (it == server.end()) throw std::runtime_error(url_ + ": INFO server has no process_id");
  return static_cast<pid_t>(std::stol(it->second));
}

void RedisAdmin::del(const std::vector<std::string>& keys) {
  // In slices, so a run with many workers never builds one huge command.
  constexpr std::size_t slice = 512;
  for (std::size_t first = 0; first < keys.size(); first += slice) {
    std::vector<const char*> argv{"DEL"};
    std::vector<std::size_t> lengths{3};
    for (std::size_t i = first; i < keys.size() && i < first + slice; ++i) {
      argv.push_back(keys[i].data());
      lengths.push_back(keys[i].size());
    }
    ReplyPtr reply(static_cast<redisReply*>(
        redisCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), lengths.data())));
    if (!reply) return;
  }
}

std::optional<NodeCounters> sum_counters(std::vector<std::unique_ptr<RedisAdmin>>& admins,
                                         std::size_t first) {
  NodeCounters total;
  try {
    for (std::size_t i = first; i < admins.size(); ++i) {
      const auto one = admins[i]->counters();
      total.cpu_us += one.cpu_us;
      total.commands += one.commands;
      total.reads += one.reads;
      total.connections += one.connections;
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return total;
}

}  // namespace redlock_bench

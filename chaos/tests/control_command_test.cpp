// The proxy's control protocol, parsed without a proxy.

#include "proxy/control_command.hpp"

#include <gtest/gtest.h>

namespace redlock::chaos {
namespace {

using namespace std::chrono_literals;
using Kind = ControlCommand::Kind;

ControlCommand command(std::string_view line) {
  auto parsed = parse_control_line(line);
  if (auto* error = std::get_if<std::string>(&parsed)) ADD_FAILURE() << line << ": " << *error;
  EXPECT_TRUE(std::holds_alternative<ControlCommand>(parsed)) << line;
  return std::holds_alternative<ControlCommand>(parsed) ? std::get<ControlCommand>(parsed)
                                                        : ControlCommand{};
}

std::string error(std::string_view line) {
  auto parsed = parse_control_line(line);
  EXPECT_TRUE(std::holds_alternative<std::string>(parsed)) << line;
  return std::holds_alternative<std::string>(parsed) ? std::get<std::string>(parsed) : "";
}

TEST(ControlCommand, Modes) {
  EXPECT_EQ(command("mode pass").mode, ProxyMode::pass);
  EXPECT_EQ(command("mode partition").mode, ProxyMode::partition);
  EXPECT_EQ(command("  mode   drop_replies \r").mode, ProxyMode::drop_replies);
  EXPECT_EQ(command("mode drop-requests").mode, ProxyMode::drop_requests);
  EXPECT_EQ(command("mode pass").kind, Kind::mode);
  EXPECT_NE(error("mode sideways").find("sideways"), std::string::npos);
  EXPECT_FALSE(error("mode").empty());
  EXPECT_FALSE(error("mode pass partition").empty());
}

TEST(ControlCommand, Latency) {
  auto up = command("latency up 200");
  EXPECT_EQ(up.kind, Kind::latency);
  EXPECT_EQ(up.direction, Direction::up);
  EXPECT_EQ(up.latency, 200ms);
  EXPECT_EQ(command("latency down 150ms").latency, 150ms);
  EXPECT_EQ(command("latency down 2s").latency, 2000ms);
  EXPECT_EQ(command("latency both 0").direction, std::nullopt);
  EXPECT_FALSE(error("latency sideways 10").empty());
  EXPECT_FALSE(error("latency up -5").empty());
  EXPECT_FALSE(error("latency up 5 minutes").empty());
  EXPECT_FALSE(error("latency up 5min").empty());
  EXPECT_FALSE(error("latency up").empty());
}

TEST(ControlCommand, BareCommandsBlankLinesAndComments) {
  EXPECT_EQ(command("reset").kind, Kind::reset);
  EXPECT_EQ(command("stats").kind, Kind::stats);
  EXPECT_EQ(command("port").kind, Kind::port);
  EXPECT_EQ(command("quit").kind, Kind::quit);
  EXPECT_FALSE(error("reset now").empty());
  EXPECT_NE(error("explode").find("explode"), std::string::npos);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse_control_line("")));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse_control_line("   \r")));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse_control_line("# mode partition")));
}

TEST(FaultSettings, WhatFlowsInEachMode) {
  FaultSettings s;
  EXPECT_TRUE(s.flows(Direction::up) && s.flows(Direction::down));
  s.mode = ProxyMode::partition;
  EXPECT_FALSE(s.flows(Direction::up) || s.flows(Direction::down));
  s.mode = ProxyMode::drop_replies;
  EXPECT_TRUE(s.flows(Direction::up) && !s.flows(Direction::down));
  s.mode = ProxyMode::drop_requests;
  EXPECT_TRUE(!s.flows(Direction::up) && s.flows(Direction::down));
  for (ProxyMode mode :
       {ProxyMode::pass, ProxyMode::partition, ProxyMode::drop_replies, ProxyMode::drop_requests}) {
    EXPECT_EQ(parse_proxy_mode(to_string(mode)), mode);
  }
}

}  // namespace
}  // namespace redlock::chaos

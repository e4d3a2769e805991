#include "redis_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <redlock/testing/redis_binary.hpp>

#include "child_process.hpp"
#include "executable_path.hpp"
#include "loopback.hpp"

namespace redlock::testing::detail {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Generous: two shared cores, and sanitizer builds start slowly.
constexpr auto start_timeout = 15s;
constexpr int max_port_attempts = 10;

std::string errno_text(int error) {
  return std::strerror(error);
}

// unix socket paths are limited to 108 bytes, so a long $TMPDIR is not used.
std::string make_temp_dir() {
  std::string base = "/tmp";
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp && std::strlen(tmp) < 60) base = tmp;
  std::string pattern = base + "/redlock-redis-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + pattern + ": " + errno_text(errno));
  }
  return pattern;
}

Reply convert(const redisReply* reply) {
  Reply out;
  out.type = reply->type;
  out.integer = reply->integer;
  if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS ||
      reply->type == REDIS_REPLY_ERROR) {
    out.str.assign(reply->str, reply->len);
  }
  if (reply->type == REDIS_REPLY_ARRAY) {
    out.elements.reserve(reply->elements);
    for (std::size_t i = 0; i < reply->elements; ++i)
      out.elements.push_back(convert(reply->element[i]));
  }
  return out;
}

std::string tail_of(const std::string& path, std::size_t lines) {
  std::ifstream in(path);
  if (!in) return {};
  std::deque<std::string> kept;
  std::string line;
  while (std::getline(in, line)) {
    kept.push_back(line);
    if (kept.size() > lines) kept.pop_front();
  }
  std::string text;
  for (const auto& l : kept) text += l + "\n";
  return text;
}

// Runs one command on a blocking context; nullptr reply means an I/O error.
redisReply* run(redisContext* context, const std::vector<std::string>& argv) {
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  return static_cast<redisReply*>(
      redisCommandArgv(context, static_cast<int>(args.size()), args.data(), lengths.data()));
}

std::string percent_encode(const std::string& text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// Runs a tool to completion with its output appended to `log`; returns its wait status.
int run_tool(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork: " + errno_text(errno));
  if (pid == 0) {
    // Only async-signal-safe calls until exec: the test process may have threads.
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

// The recipe of compose/local-cluster (make_certs): P-256 keys, a self-signed CA, and
// leaf certificates with the usage and names that OpenSSL's verification checks.
void make_certificates(TestCertificates& files) {
  const std::string openssl = find_on_path("openssl");
  if (openssl.empty()) {
    throw std::runtime_error(
        "openssl not found on PATH (apt-get install openssl): the TLS "
        "tests make their certificates with it");
  }
  const std::string& dir = files.dir;
  const std::string log = dir + "/openssl.log";
  const std::vector<std::string> new_key = {"-newkey", "ec", "-pkeyopt",
                                            "ec_paramgen_curve:prime256v1", "-nodes"};
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), openssl);
    if (run_tool(args, log) != 0) {
      throw std::runtime_error("making test certificates failed: openssl " + args[1] + "\n" +
                               tail_of(log, 20));
    }
  };
  auto make_ca = [&](const std::string& name, const std::string& subject) {
    std::vector<std::string> args = {"req", "-x509"};
    args.insert(args.end(), new_key.begin(), new_key.end());
    args.insert(args.end(), {"-days", "3650", "-subj", subject, "-keyout",
                             dir + "/" + name + ".key", "-out", dir + "/" + name + ".crt"});
    run(args);
  };
  auto make_leaf = [&](const std::string& name, const std::string& subject,
                       const std::string& extensions) {
    std::vector<std::string> args = {"req"};
    args.insert(args.end(), new_key.begin(), new_key.end());
    args.insert(args.end(), {"-subj", subject, "-keyout", dir + "/" + name + ".key", "-out",
                             dir + "/" + name + ".csr"});
    run(args);
    write_file(dir + "/" + name + ".ext", extensions);
    run({"x509", "-req", "-in", dir + "/" + name + ".csr", "-CA", dir + "/ca.crt", "-CAkey",
         dir + "/ca.key", "-CAcreateserial", "-days", "3650", "-extfile", dir + "/" + name + ".ext",
         "-out", dir + "/" + name + ".crt"});
  };
  make_ca("ca", "/CN=redlock test CA");
  make_ca("other-ca", "/CN=redlock untrusted test CA");
  make_leaf("server", "/CN=localhost",
            "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\n");
  make_leaf("client", "/CN=redlock-test-client",
            "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n");
  files.ca_cert = dir + "/ca.crt";
  files.server_cert = dir + "/server.crt";
  files.server_key = dir + "/server.key";
  files.client_cert = dir + "/client.crt";
  files.client_key = dir + "/client.key";
  files.other_ca_cert = dir + "/other-ca.crt";
}

// The PKI lives as long as the process; redis-server reads the files only at start-up.
class CertificateDirectory {
 public:
  CertificateDirectory() {
    files_.dir = make_temp_dir();
    try {
      make_certificates(files_);
    } catch (...) {
      remove();
      throw;
    }
  }
  ~CertificateDirectory() { remove(); }
  CertificateDirectory(const CertificateDirectory&) = delete;
  CertificateDirectory& operator=(const CertificateDirectory&) = delete;

  const TestCertificates& files() const { return files_; }

 private:
  void remove() {
    std::error_code ignored;
    std::filesystem::remove_all(files_.dir, ignored);
  }

  TestCertificates files_;
};

const char* tls_auth_clients(TlsClientAuth auth) {
  switch (auth) {
    case TlsClientAuth::required:
      return "yes";
    case TlsClientAuth::optional:
      return "optional";
    case TlsClientAuth::none:
      return "no";
  }
  return "yes";
}

}  // namespace

bool Reply::is_nil() const {
  return type == REDIS_REPLY_NIL;
}
bool Reply::is_error() const {
  return type == REDIS_REPLY_ERROR;
}
bool Reply::is_status(const std::string& text) const {
  return type == REDIS_REPLY_STATUS && str == text;
}

const TestCertificates& test_certificates() {
  // A failure leaves the static uninitialised, so the next caller tries again.
  static const CertificateDirectory certificates;
  return certificates.files();
}

RedisServer::RedisServer(RedisServerOptions options) : options_(std::move(options)) {
  options_.tls = options_.tls || options_.tls_only;
  binary_ = redis_server_binary();
  if (options_.tls) test_certificates();  // before the directory exists: it may throw
  // A write to a socket whose peer died must be an error, not a process-killing signal.
  ::signal(SIGPIPE, SIG_IGN);
  if (options_.dir.empty()) {
    dir_ = make_temp_dir();
  } else {
    dir_ = options_.dir;
    std::filesystem::create_directories(dir_);
  }
  if (!options_.sentinel_config.empty()) {
    write_file(dir_ + "/sentinel.conf", options_.sentinel_config);
  }
  std::string last_failure;
  for (int attempt = 0; attempt < max_port_attempts; ++attempt) {
    port_ = options_.port != 0 ? options_.port : free_port();
    plain_port_ = port_;
    while (options_.tls && plain_port_ == port_) plain_port_ = free_port();
    if (options_.tls_only) plain_port_ = 0;
    bus_port_ = 0;
    while (options_.cluster && (bus_port_ == 0 || bus_port_ == port_ || bus_port_ == plain_port_)) {
      bus_port_ = free_port();
    }
    spawn();
    std::string why;
    if (wait_ready(why)) return;
    last_failure = why + "\n" + log_tail();
    reap_blocking();
    // Only a lost race for the port is worth another attempt; anything else (a bad
    // option, a missing binary) would fail the same way again.
    bool port_taken = last_failure.find("Address already in use") != std::string::npos ||
                      why.find("another process") != std::string::npos;
    if (!port_taken) break;
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
  throw std::runtime_error("redis-server did not start: " + last_failure);
}

RedisServer::~RedisServer() {
  drop_client();
  reap_blocking();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::vector<std::string> RedisServer::command_line() const {
  std::vector<std::string> args = {binary_};
  if (!options_.sentinel_config.empty()) {
    args.insert(args.end(), {dir_ + "/sentinel.conf", "--sentinel"});
  }
  args.insert(args.end(),
              {"--bind", options_.bind, "--port", std::to_string(plain_port_), "--dir", dir_,
               "--daemonize", "no", "--protected-mode", "no", "--logfile", dir_ + "/redis.log"});
  if (options_.appendonly_always) {
    args.insert(args.end(), {"--appendonly", "yes", "--appendfsync", "always", "--save", ""});
  } else {
    args.insert(args.end(), {"--save", "", "--appendonly", "no"});
  }
  if (!options_.password.empty()) args.insert(args.end(), {"--requirepass", options_.password});
  if (options_.unix_socket || channel_is_unix()) {
    args.insert(args.end(), {"--unixsocket", unix_path(), "--unixsocketperm", "700"});
  }
  if (options_.tls) {
    const TestCertificates& certificates = test_certificates();
    args.insert(args.end(), {"--tls-port", std::to_string(port_), "--tls-cert-file",
                             certificates.server_cert, "--tls-key-file", certificates.server_key,
                             "--tls-ca-cert-file", certificates.ca_cert, "--tls-auth-clients",
                             tls_auth_clients(options_.tls_client_auth)});
    // The server's own connections (a replica to its master, the cluster bus, a sentinel
    // to the servers it watches) present the client certificate: the server's is for
    // serverAuth only, and the peer asks for a client certificate.
    args.insert(args.end(), {"--tls-client-cert-file", certificates.client_cert,
                             "--tls-client-key-file", certificates.client_key});
  }
  if (options_.cluster) {
    args.insert(args.end(), {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                             "--cluster-port", std::to_string(bus_port_)});
  }
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  return args;
}

void RedisServer::spawn() {
  pid_ = detail::spawn(command_line(), dir_ + "/redis.stdout", options_.environment,
                       options_.network_namespace);
  exited_ = false;
  paused_ = false;
}

bool RedisServer::wait_ready(std::string& why) {
  const auto deadline = Clock::now() + start_timeout;
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      why = "redis-server exited (status " + std::to_string(status) + ") on port " +
            std::to_string(port_);
      return false;
    }
    timeval tv{0, 200'000};
    redisContext* context = connect_channel(tv);
    if (context == nullptr || context->err) {
      if (context) redisFree(context);
      std::this_thread::sleep_for(5ms);
      continue;
    }
    timeval command_tv{2, 0};
    redisSetTimeout(context, command_tv);
    bool ok = true;
    if (!options_.password.empty()) {
      redisReply* reply = run(context, {"AUTH", options_.password});
      ok = reply && reply->type != REDIS_REPLY_ERROR;
      if (reply) freeReplyObject(reply);
    }
    // INFO answers even while an AOF is loading; PING says LOADING until it is done.
    redisReply* reply = ok ? run(context, {"INFO", "server"}) : nullptr;
    std::string info;
    int type = 0;
    if (reply) {
      type = reply->type;
      if (reply->str) info.assign(reply->str, reply->len);
      freeReplyObject(reply);
    }
    bool pong = false;
    if (type == REDIS_REPLY_STRING) {
      redisReply* ping = run(context, {"PING"});
      pong =
          ping && ping->type == REDIS_REPLY_STATUS && std::string(ping->str, ping->len) == "PONG";
      if (ping) freeReplyObject(ping);
    }
    redisFree(context);
    if (type != REDIS_REPLY_STRING) {
      std::this_thread::sleep_for(5ms);
      continue;
    }
    // A server that answers is only ours if it has our pid: the port may have been
    // taken by another process between free_port() and our bind.
    if (info.find("process_id:" + std::to_string(pid_) + "\r") == std::string::npos) {
      why = "port " + std::to_string(plain_port_) + " is served by another process";
      return false;
    }
    if (pong) return true;
    std::this_thread::sleep_for(5ms);
  }
  why = "redis-server did not answer PING within " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(start_timeout).count()) +
        " s on port " + std::to_string(port_);
  return false;
}

void RedisServer::reap_blocking() {
  if (pid_ <= 0 || exited_) {
    pid_ = -1;
    exited_ = false;
    paused_ = false;
    return;
  }
  kill_and_reap(pid_);
  pid_ = -1;
  exited_ = false;
  paused_ = false;
}

void RedisServer::drop_client() {
  std::lock_guard lock(client_mutex_);
  if (client_) redisFree(client_);
  client_ = nullptr;
}

std::string RedisServer::url() const {
  return (options_.tls ? "rediss://" : "redis://") + std::string("127.0.0.1:") +
         std::to_string(port_);
}

std::string RedisServer::url_with_password() const {
  if (options_.password.empty()) return url();
  return (options_.tls ? "rediss://:" : "redis://:") + percent_encode(options_.password) +
         "@127.0.0.1:" + std::to_string(port_);
}

std::string RedisServer::unix_path() const {
  return options_.unix_socket || channel_is_unix() ? dir_ + "/redis.sock" : std::string();
}

bool RedisServer::channel_is_unix() const {
  return options_.tls_only || !options_.network_namespace.empty();
}

std::string RedisServer::unix_url() const {
  return unix_path().empty() ? std::string() : "unix://" + unix_path();
}

redisContext* RedisServer::connect_channel(timeval timeout) const {
  if (channel_is_unix()) return redisConnectUnixWithTimeout(unix_path().c_str(), timeout);
  return redisConnectWithTimeout("127.0.0.1", plain_port_, timeout);
}

bool RedisServer::running() const {
  if (pid_ <= 0 || exited_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    exited_ = true;
    return false;
  }
  return true;
}

void RedisServer::pause() {
  if (!running() || paused_) return;
  // Returns once it is really stopped, so that the test's next step sees a frozen node.
  if (!stop(pid_)) {
    exited_ = true;  // it died instead, and was reaped
    return;
  }
  paused_ = true;
}

void RedisServer::resume() {
  if (!running() || !paused_) return;
  paused_ = false;
  // Returns once it runs again, so that the test's next step sees it answer.
  if (!detail::resume(pid_)) exited_ = true;  // it died instead, and was reaped
}

void RedisServer::kill9() {
  drop_client();
  reap_blocking();
}

void RedisServer::restart() {
  kill9();
  std::string last_failure;
  // The port is fixed now; a process that grabbed it meanwhile may still let go of it.
  const auto give_up = Clock::now() + 5s;
  do {
    spawn();
    std::string why;
    if (wait_ready(why)) return;
    last_failure = why + "\n" + log_tail();
    reap_blocking();
    if (last_failure.find("Address already in use") == std::string::npos) break;
    std::this_thread::sleep_for(50ms);
  } while (Clock::now() < give_up);
  throw std::runtime_error("redis-server did not restart: " + last_failure);
}

Reply RedisServer::command(std::vector<std::string> argv) {
  std::lock_guard lock(client_mutex_);
  const std::string where = channel_is_unix()
                                ? "redis " + unix_path() + ": "
                                : "redis 127.0.0.1:" + std::to_string(plain_port_) + ": ";
  if (client_ == nullptr) {
    timeval tv{2, 0};
    redisContext* context = connect_channel(tv);
    if (context == nullptr || context->err) {
      std::string error = context ? context->errstr : "cannot allocate a context";
      if (context) redisFree(context);
      throw std::runtime_error(where + "connect: " + error);
    }
    redisSetTimeout(context, tv);
    if (!options_.password.empty()) {
      redisReply* reply = run(context, {"AUTH", options_.password});
      std::string error;
      if (reply == nullptr) {
        error = context->errstr;
      } else if (reply->type == REDIS_REPLY_ERROR) {
        error.assign(reply->str, reply->len);
      }
      if (reply) freeReplyObject(reply);
      if (!error.empty()) {
        redisFree(context);
        throw std::runtime_error(where + "AUTH: " + error);
      }
    }
    client_ = context;
  }
  redisReply* reply = run(client_, argv);
  if (reply == nullptr) {
    // The reply may still arrive later; a new connection keeps it from being read as
    // the answer to the next command.
    std::string error = client_->errstr;
    redisFree(client_);
    client_ = nullptr;
    throw std::runtime_error(where + (argv.empty() ? std::string() : argv[0]) + ": " + error);
  }
  Reply out = convert(reply);
  freeReplyObject(reply);
  return out;
}

std::string RedisServer::log_tail(std::size_t lines) const {
  std::string text = tail_of(dir_ + "/redis.log", lines);
  std::string output = tail_of(dir_ + "/redis.stdout", lines);
  if (!output.empty()) text += "(stdout/stderr)\n" + output;
  return text.empty() ? "(no log)" : "log of " + dir_ + ":\n" + text;
}

Reply command_at(std::uint16_t port, const std::vector<std::string>& argv) {
  const std::string where = "redis 127.0.0.1:" + std::to_string(port) + ": ";
  timeval tv{2, 0};
  redisContext* context = redisConnectWithTimeout("127.0.0.1", port, tv);
  if (context == nullptr || context->err) {
    std::string error = context ? context->errstr : "cannot allocate a context";
    if (context) redisFree(context);
    throw std::runtime_error(where + "connect: " + error);
  }
  redisSetTimeout(context, tv);
  redisReply* reply = run(context, argv);
  if (reply == nullptr) {
    std::string error = context->errstr;
    redisFree(context);
    throw std::runtime_error(where + (argv.empty() ? std::string() : argv[0]) + ": " + error);
  }
  Reply out = convert(reply);
  freeReplyObject(reply);
  redisFree(context);
  return out;
}

RedisCluster::RedisCluster(std::size_t n, RedisServerOptions options) {
  servers_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) servers_.push_back(std::make_unique<RedisServer>(options));
}

std::vector<std::string> RedisCluster::urls() const {
  std::vector<std::string> out;
  for (const auto& server : servers_) out.push_back(server->url_with_password());
  return out;
}

void RedisCluster::resume_all_and_restart_dead() {
  for (auto& server : servers_) {
    if (server->paused()) server->resume();
    if (!server->running()) server->restart();
  }
}

void RedisCluster::flushall() {
  for (auto& server : servers_) {
    if (server->running() && !server->paused()) {
      Reply reply = server->command({"FLUSHALL"});
      if (reply.is_error()) throw std::runtime_error("FLUSHALL: " + reply.str);
    }
  }
}

}  // namespace redlock::testing::detail

// redlock-demo: several worker PROCESSES increment one counter kept in a separate
// Redis (the "database") with a deliberately racy read-modify-write: GET, a short
// pause, SET. Only the Redlock lock over the lock nodes keeps increments from being
// lost, so the final counter equals the number of increments iff mutual exclusion
// held. With fencing (the default) every write also carries the lock's fencing
// token and goes through redlock::FencedStore, which refuses a writer whose token
// is older than one it has already seen.
//
//   redlock-demo --nodes redis://127.0.0.1:7101,... --storage redis://127.0.0.1:7200
//
// The lock nodes are used only through redlock's public API; the plain storage
// access (pre-flight check, and the counter itself with --no-fencing) uses hiredis'
// blocking API because it stands for the application's own database client.

#include <hiredis/hiredis.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "../tools/common/duration.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;
using std::chrono::milliseconds;

struct Config {
  std::vector<std::string> nodes;
  std::string storage;
  std::string key = "demo:counter";
  int workers = 4;
  int increments = 200;
  milliseconds ttl{2000};
  milliseconds wait{5000};
  microseconds hold{1000};
  bool fencing = true;
  bool use_lock = true;
};

std::vector<std::string> split(std::string_view list, char separator) {
  std::vector<std::string> parts;
  while (!list.empty()) {
    auto pos = list.find(separator);
    auto part = list.substr(0, pos);
    if (!part.empty()) parts.emplace_back(part);
    if (pos == std::string_view::npos) break;
    list.remove_prefix(pos + 1);
  }
  return parts;
}

// Adds --NAME DUR, read as the redlock CLI reads durations, plus "us" for short pauses.
template <typename Duration>
CLI::Option* add_duration_option(CLI::App& app, const std::string& name, Duration& target,
                                 const std::string& description) {
  const auto parse = [](const std::string& text) {
    return redlock::tools::parse_duration(text, {.microseconds = true});
  };
  const CLI::Validator is_duration(
      [parse](std::string& text) -> std::string {
        const auto parsed = parse(text);
        return parsed ? "" : "'" + text + "': " + parsed.error;
      },
      "");
  return app
      .add_option_function<std::string>(
          name,
          [&target, parse](const std::string& text) {
            target = std::chrono::duration_cast<Duration>(parse(text).value);
          },
          description)
      ->type_name("DUR")
      ->check(is_duration);
}

// Exits 0 after --help and 2 on a usage error, as the redlock CLI does.
Config parse_args(int argc, char** argv) {
  Config cfg;
  CLI::App app{
      "Forks worker processes that each take the lock KEY on the lock nodes and, while\n"
      "holding it, increment a counter in the storage Redis with GET, a pause, SET.\n"
      "Prints acquisitions, conflicts, errors, acquire latency and whether the final\n"
      "counter equals the number of increments (exit status 1 if it does not).",
      "redlock-demo"};
  std::string nodes;
  bool no_fencing = false;
  bool no_lock = false;
  app.add_option("--nodes", nodes, "Lock nodes, comma-separated")
      ->type_name("URL,...")
      ->envname("REDLOCK_NODES")
      ->required();
  app.add_option("--storage", cfg.storage,
                 "The Redis that holds the counter (not one of the lock nodes)")
      ->type_name("URL")
      ->required();
  app.add_option("--workers", cfg.workers, "Worker processes")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--increments", cfg.increments, "Increments per worker")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  add_duration_option(app, "--ttl", cfg.ttl, "Lock TTL")->default_str("2s");
  add_duration_option(app, "--wait", cfg.wait, "How long one lock() may wait for the lock")
      ->default_str("5s");
  add_duration_option(app, "--hold", cfg.hold, "Pause between GET and SET, widening the race")
      ->default_str("1ms");
  app.add_option("--key", cfg.key, "Lock name")->capture_default_str();
  app.add_flag("--no-fencing", no_fencing,
               "Plain SET instead of FencedStore writes with the token");
  app.add_flag("--no-lock", no_lock, "Skip the lock altogether, to watch updates get lost");
  app.footer("Durations: 500us, 250ms, 2s, 1m.");
  try {
    app.parse(argc, argv);
    cfg.nodes = split(nodes, ',');
    if (cfg.nodes.empty()) throw CLI::ValidationError("--nodes", "names no node");
    if (cfg.storage.empty()) throw CLI::ValidationError("--storage", "is empty");
  } catch (const CLI::CallForHelp& help) {
    std::exit(app.exit(help));
  } catch (const CLI::ParseError& error) {
    app.exit(error);
    std::exit(2);
  }
  cfg.fencing = !no_fencing && !no_lock;  // no lock, no token
  cfg.use_lock = !no_lock;
  return cfg;
}

// ---------------------------------------------------------------------------------
// The storage Redis through hiredis' blocking API.

std::string percent_decode(std::string_view in) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size()) {
      int byte = 0;
      auto [end, ec] = std::from_chars(in.data() + i + 1, in.data() + i + 3, byte, 16);
      if (ec == std::errc() && end == in.data() + i + 3) {
        out.push_back(static_cast<char>(byte));
        i += 2;
        continue;
      }
    }
    out.push_back(in[i]);
  }
  return out;
}

class Storage {
 public:
  // redis://[[user]:password@]host:port[/db] or unix:///path. Throws on failure.
  explicit Storage(const std::string& url) {
    std::string_view rest = url;
    std::string user, password;
    int db = 0;
    timeval timeout{2, 0};
    if (rest.starts_with("unix://")) {
      ctx_ = redisConnectUnixWithTimeout(std::string(rest.substr(7)).c_str(), timeout);
    } else if (rest.starts_with("redis://")) {
      rest.remove_prefix(8);
      if (auto at = rest.rfind('@'); at != std::string_view::npos) {
        auto userinfo = rest.substr(0, at);
        auto colon = userinfo.find(':');
        user = percent_decode(userinfo.substr(0, colon));
        if (colon != std::string_view::npos) password = percent_decode(userinfo.substr(colon + 1));
        rest.remove_prefix(at + 1);
      }
      if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        db = std::atoi(std::string(rest.substr(slash + 1)).c_str());
        rest = rest.substr(0, slash);
      }
      auto colon = rest.rfind(':');
      if (colon == std::string_view::npos)
        throw std::invalid_argument("storage URL needs host:port: " + url);
      std::string host(rest.substr(0, colon));
      if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
      int port = std::atoi(std::string(rest.substr(colon + 1)).c_str());
      ctx_ = redisConnectWithTimeout(host.c_str(), port, timeout);
    } else {
      throw std::invalid_argument("storage URL must be redis:// or unix://: " + url);
    }
    if (ctx_ == nullptr || ctx_->err) {
      std::string why = ctx_ ? ctx_->errstr : "out of memory";
      close();
      throw std::runtime_error("cannot connect to the storage Redis: " + why);
    }
    if (!password.empty()) {
      if (user.empty()) {
        command({"AUTH", password});
      } else {
        command({"AUTH", user, password});
      }
    }
    if (db != 0) command({"SELECT", std::to_string(db)});
  }
  ~Storage() { close(); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // Runs one command; returns the string/integer/nil reply. Throws on I/O and Redis errors.
  std::optional<std::string> command(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    auto* reply = static_cast<redisReply*>(
        redisCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lengths.data()));
    if (reply == nullptr) throw std::runtime_error(std::string("storage: ") + ctx_->errstr);
    std::unique_ptr<redisReply, decltype(&freeReplyObject)> guard(reply, freeReplyObject);
    switch (reply->type) {
      case REDIS_REPLY_ERROR:
        throw std::runtime_error("storage: " + std::string(reply->str, reply->len));
      case REDIS_REPLY_NIL:
        return std::nullopt;
      case REDIS_REPLY_INTEGER:
        return std::to_string(reply->integer);
      default:
        return std::string(reply->str ? reply->str : "", reply->str ? reply->len : 0);
    }
  }

 private:
  void close() {
    if (ctx_) redisFree(ctx_);
    ctx_ = nullptr;
  }
  redisContext* ctx_ = nullptr;
};

// ---------------------------------------------------------------------------------
// Workers.

struct Report {
  long acquisitions = 0;
  long conflicts = 0;    // the lock was busy at the first attempt
  long errors = 0;       // lock() failed even after waiting, or storage errors
  long stale = 0;        // FencedStore refused the write (token older than seen)
  long expired = 0;      // validity ran out before the write; increment skipped
  long regressions = 0;  // this worker saw a token not above its previous one
  long increments = 0;   // writes that landed
  long unlock_errors = 0;
  std::vector<long> first_try_us;  // one-round acquisitions that succeeded at once
  std::vector<long> acquire_us;    // time until held, including waiting for others
  std::string last_error;
  std::string fatal;
};

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

std::string serialize(const Report& r) {
  std::ostringstream out;
  out << "R " << r.acquisitions << ' ' << r.conflicts << ' ' << r.errors << ' ' << r.stale << ' '
      << r.expired << ' ' << r.regressions << ' ' << r.increments << ' ' << r.unlock_errors << '\n';
  out << 'F';
  for (long v : r.first_try_us) out << ' ' << v;
  out << "\nA";
  for (long v : r.acquire_us) out << ' ' << v;
  out << "\nE " << one_line(r.last_error) << "\nX " << one_line(r.fatal) << '\n';
  return out.str();
}

Report deserialize(const std::string& text) {
  Report r;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() < 1) continue;
    std::istringstream fields(line.substr(1));
    long v = 0;
    switch (line[0]) {
      case 'R':
        fields >> r.acquisitions >> r.conflicts >> r.errors >> r.stale >> r.expired >>
            r.regressions >> r.increments >> r.unlock_errors;
        break;
      case 'F':
        while (fields >> v) r.first_try_us.push_back(v);
        break;
      case 'A':
        while (fields >> v) r.acquire_us.push_back(v);
        break;
      case 'E':
        r.last_error = line.size() > 2 ? line.substr(2) : "";
        break;
      case 'X':
        r.fatal = line.size() > 2 ? line.substr(2) : "";
        break;
    }
  }
  return r;
}

long micros_since(Clock::time_point start) {
  return static_cast<long>(std::chrono::duration_cast<microseconds>(Clock::now() - start).count());
}

struct Names {
  std::string counter_key;  // the counter in the storage Redis
  std::string
      fence_resource;  // FencedStore's resource: fresh per run, so its highest token starts at 0
};

Report run_worker(const Config& cfg, const Names& names) {
  Report rep;
  // A worker gives up after this many failures in a row rather than spin forever
  // on a cluster that is down.
  constexpr int max_consecutive_failures = 20;
  int consecutive_failures = 0;
  std::uint64_t last_token = 0;
  // The write must land while the lock is still ours; below this much validity the
  // worker drops the increment instead of risking a write as a non-owner.
  const milliseconds min_validity = std::max(milliseconds(20), cfg.ttl / 10);

  std::shared_ptr<redlock::Client> client;
  std::unique_ptr<redlock::FencedStore> store;
  std::unique_ptr<Storage> plain;
  try {
    if (cfg.use_lock) {
      redlock::Options options;
      options.nodes = cfg.nodes;
      client = redlock::Client::create(options);
    }
    if (cfg.fencing) {
      store = redlock::FencedStore::create(cfg.storage);
    } else {
      plain = std::make_unique<Storage>(cfg.storage);
    }
  } catch (const std::exception& e) {
    rep.fatal = e.what();
    return rep;
  }

  auto read_counter = [&]() -> std::optional<long> {
    std::optional<std::string> text;
    if (store) {
      auto r = store->read(names.counter_key);
      if (!r) {
        rep.last_error = "storage read: " + r.error().message();
        return std::nullopt;
      }
      text = *r;
    } else {
      try {
        text = plain->command({"GET", names.counter_key});
      } catch (const std::exception& e) {
        rep.last_error = e.what();
        return std::nullopt;
      }
    }
    return text ? std::atol(text->c_str()) : 0L;
  };

  for (int done = 0; done < cfg.increments;) {
    if (consecutive_failures >= max_consecutive_failures) {
      rep.fatal = "gave up after " + std::to_string(consecutive_failures) +
                  " failures in a row; last: " + rep.last_error;
      break;
    }
    std::optional<redlock::Lock> lock;
    if (cfg.use_lock) {
      auto start = Clock::now();
      // One round first, only to count how often the lock was busy; then the usual
      // call that waits (retrying with jitter) up to --wait.
      auto r =
          client->lock(cfg.key, {.ttl = cfg.ttl, .wait = milliseconds(0), .fencing = cfg.fencing});
      if (r) {
        rep.first_try_us.push_back(micros_since(start));
      } else {
        if (r.error() == redlock::errc::conflict) {
          ++rep.conflicts;
        } else {
          rep.last_error = r.error().message();
        }
        r = client->lock(cfg.key, {.ttl = cfg.ttl, .wait = cfg.wait, .fencing = cfg.fencing});
      }
      if (!r) {
        ++rep.errors;
        ++consecutive_failures;
        rep.last_error = r.error().message();
        continue;
      }
      rep.acquire_us.push_back(micros_since(start));
      ++rep.acquisitions;
      lock.emplace(std::move(*r));
      if (cfg.fencing) {
        auto token = lock->fencing_token().value_or(0);
        if (token <= last_token) ++rep.regressions;
        last_token = std::max(last_token, token);
      }
    }

    // The deliberately non-atomic read-modify-write.
    auto value = read_counter();
    bool ok = false;
    bool storage_failed = !value;
    if (value) {
      if (cfg.hold.count() > 0) std::this_thread::sleep_for(cfg.hold);
      auto next = std::to_string(*value + 1);
      if (lock && lock->validity() < min_validity) {
        ++rep.expired;
      } else if (store) {
        auto w = store->write(names.fence_resource, lock->fencing_token().value_or(0),
                              names.counter_key, next);
        if (w) {
          ok = true;
        } else if (w.error() == redlock::errc::stale_token) {
          ++rep.stale;
        } else {
          rep.last_error = "storage write: " + w.error().message();
          storage_failed = true;
        }
      } else {
        try {
          plain->command({"SET", names.counter_key, next});
          ok = true;
        } catch (const std::exception& e) {
          rep.last_error = e.what();
          storage_failed = true;
        }
      }
    }
    if (lock) {
      if (auto u = lock->unlock(); !u) {
        ++rep.unlock_errors;
        rep.last_error = "unlock: " + u.error().message();
      }
    }
    if (ok) {
      ++done;
      ++rep.increments;
      consecutive_failures = 0;
    } else {
      if (storage_failed) ++rep.errors;
      ++consecutive_failures;
    }
  }
  return rep;
}

// ---------------------------------------------------------------------------------
// The parent: forks the workers, collects their reports, checks the counter.

double percentile_ms(std::vector<long> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(values.size() - 1) + 0.5);
  return static_cast<double>(values[std::min(rank, values.size() - 1)]) / 1000.0;
}

std::string read_all(int fd) {
  std::string data;
  char buffer[8192];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      data.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  return data;
}

bool write_all(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg = parse_args(argc, argv);
  const long expected_requested = static_cast<long>(cfg.workers) * cfg.increments;

  // Per run, so neither a counter nor a fence record left by an earlier run (in a
  // storage Redis that was not restarted) can change this run's result.
  Names names;
  {
    auto run = std::to_string(::getpid()) + "-" +
               std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
    names.counter_key = "redlock-demo:" + run + ":counter";
    names.fence_resource = "redlock-demo:" + run;
  }

  // Fail fast, with one clear message, when the storage is not there.
  try {
    Storage probe(cfg.storage);
    probe.command({"PING"});
  } catch (const std::exception& e) {
    std::cerr << "redlock-demo: " << e.what() << '\n';
    return 1;
  }

  std::cout << "redlock-demo: " << cfg.workers << " worker processes x " << cfg.increments
            << " increments of one counter (GET, " << cfg.hold.count() << " us pause, SET)\n"
            << "  lock:    \"" << cfg.key << "\", ttl " << cfg.ttl.count() << " ms, wait up to "
            << cfg.wait.count() << " ms, fencing " << (cfg.fencing ? "on (FencedStore)" : "off")
            << (cfg.use_lock ? "" : "  ** NO LOCK (--no-lock) **") << '\n'
            << "  nodes:   " << cfg.nodes.size() << " (quorum " << cfg.nodes.size() / 2 + 1
            << ")\n";
  for (const auto& n : cfg.nodes) {
    // Credentials stay out of the output.
    auto at = n.rfind('@');
    auto scheme = n.find("://");
    std::cout << "           "
              << (at == std::string::npos || scheme == std::string::npos
                      ? n
                      : n.substr(0, scheme + 3) + "***@" + n.substr(at + 1))
              << '\n';
  }
  std::cout << std::flush;

  // Workers are forked before this process starts any thread (no Client or
  // FencedStore exists here yet): fork() in a threaded process copies only the
  // calling thread, and each worker must own its client and loop thread anyway.
  struct Child {
    pid_t pid;
    int fd;
  };
  std::vector<Child> children;
  auto started = Clock::now();
  for (int w = 0; w < cfg.workers; ++w) {
    int fds[2];
    if (::pipe(fds) != 0) {
      std::perror("redlock-demo: pipe");
      return 1;
    }
    pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("redlock-demo: fork");
      return 1;
    }
    if (pid == 0) {
      ::close(fds[0]);
      for (const auto& c : children) ::close(c.fd);
      Report report = run_worker(cfg, names);  // clients close when this returns
      bool sent = write_all(fds[1], serialize(report));
      ::close(fds[1]);
      ::_exit(sent && report.fatal.empty() ? 0 : 1);
    }
    ::close(fds[1]);
    children.push_back({pid, fds[0]});
  }

  // Drain every pipe before reaping, so no worker blocks on a full pipe.
  std::vector<Report> reports;
  for (const auto& c : children) {
    reports.push_back(deserialize(read_all(c.fd)));
    ::close(c.fd);
  }
  std::vector<int> statuses;
  for (const auto& c : children) {
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    statuses.push_back(status);
  }
  double elapsed_s = std::chrono::duration<double>(Clock::now() - started).count();

  Report total;
  bool worker_failed = false;
  std::printf("\n%-7s %-8s %10s %10s %7s %6s %8s %12s\n", "worker", "pid", "acquired", "conflicts",
              "errors", "stale", "expired", "p50 acquire");
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i];
    std::printf("%-7zu %-8d %10ld %10ld %7ld %6ld %8ld %9.2f ms\n", i,
                static_cast<int>(children[i].pid), r.acquisitions, r.conflicts, r.errors, r.stale,
                r.expired, percentile_ms(r.acquire_us, 50));
    total.acquisitions += r.acquisitions;
    total.conflicts += r.conflicts;
    total.errors += r.errors;
    total.stale += r.stale;
    total.expired += r.expired;
    total.regressions += r.regressions;
    total.increments += r.increments;
    total.unlock_errors += r.unlock_errors;
    total.first_try_us.insert(total.first_try_us.end(), r.first_try_us.begin(),
                              r.first_try_us.end());
    total.acquire_us.insert(total.acquire_us.end(), r.acquire_us.begin(), r.acquire_us.end());
    int status = statuses[i];
    if (!r.fatal.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      worker_failed = true;
      std::printf("        worker %zu failed: %s\n", i,
                  !r.fatal.empty()      ? r.fatal.c_str()
                  : WIFSIGNALED(status) ? strsignal(WTERMSIG(status))
                                        : "exited with an error");
    } else if (!r.last_error.empty()) {
      std::printf("        worker %zu last error: %s\n", i, r.last_error.c_str());
    }
  }
  std::printf("%-7s %-8s %10ld %10ld %7ld %6ld %8ld\n\n", "total", "", total.acquisitions,
              total.conflicts, total.errors, total.stale, total.expired);

  if (cfg.use_lock) {
    std::printf(
        "acquire latency, one round (lock free at the first try, %zu samples): p50 %.2f ms, p99 "
        "%.2f ms\n",
        total.first_try_us.size(), percentile_ms(total.first_try_us, 50),
        percentile_ms(total.first_try_us, 99));
    std::printf(
        "time to acquire, including waiting for other holders:             p50 %.2f ms, p99 %.2f "
        "ms\n",
        percentile_ms(total.acquire_us, 50), percentile_ms(total.acquire_us, 99));
  }
  std::printf("throughput: %.0f increments/s over %.2f s\n",
              static_cast<double>(total.increments) / elapsed_s, elapsed_s);
  if (cfg.fencing) {
    std::printf("fencing: %ld stale write(s) refused, %ld token regression(s) seen by a worker\n",
                total.stale, total.regressions);
  }
  if (total.unlock_errors) std::printf("unlock errors: %ld\n", total.unlock_errors);

  long counter = -1;
  try {
    if (cfg.fencing) {
      auto store = redlock::FencedStore::create(cfg.storage);
      auto r = store->read(names.counter_key);
      if (!r) throw std::runtime_error(r.error().message());
      counter = *r ? std::atol((*r)->c_str()) : 0;
    } else {
      Storage storage(cfg.storage);
      auto text = storage.command({"GET", names.counter_key});
      counter = text ? std::atol(text->c_str()) : 0;
    }
  } catch (const std::exception& e) {
    std::printf("cannot read the final counter: %s\n", e.what());
    return 1;
  }

  const long expected = total.increments;
  bool exclusive = counter == expected;
  if (exclusive) {
    std::printf("counter = %ld, expected %ld: mutual exclusion held\n", counter, expected);
  } else {
    std::printf("counter = %ld, expected %ld: %ld update(s) LOST, mutual exclusion did NOT hold\n",
                counter, expected, expected - counter);
  }
  if (expected != expected_requested) {
    std::printf("only %ld of %ld increments were made (see the errors above)\n", expected,
                expected_requested);
  }
  return exclusive && !worker_failed && total.regressions == 0 && expected == expected_requested
             ? 0
             : 1;
}

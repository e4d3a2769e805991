#include "proxy/fault_proxy.hpp"

#include <uv.h>

#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "proxy/proxy_connection.hpp"

namespace redlock::chaos {
namespace {

std::runtime_error uv_failure(const std::string& what, int rc) {
  return std::runtime_error("fault proxy: " + what + ": " + uv_strerror(rc));
}

template <typename Handle>
void close_and_delete(Handle* handle) {
  uv_close(reinterpret_cast<uv_handle_t*>(handle),
           [](uv_handle_t* h) { delete reinterpret_cast<Handle*>(h); });
}

sockaddr_storage ip_address(const std::string& host, std::uint16_t port) {
  sockaddr_storage address{};
  if (uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&address)) != 0 &&
      uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&address)) != 0) {
    throw std::runtime_error("fault proxy: upstream host must be an IP address, not '" + host +
                             "'");
  }
  return address;
}

}  // namespace

struct FaultProxy::Impl {
  uv_loop_t loop{};
  ProxyContext context;
  uv_tcp_t* listener = nullptr;  // freed in its close callback
  uv_async_t* wakeup = nullptr;  // freed in its close callback
  std::thread thread;

  std::mutex mutex;
  std::vector<std::function<void()>> tasks;  // guarded by mutex

  Impl() {
    uv_loop_init(&loop);
    context.loop = &loop;
  }

  // Runs `task` on the loop thread and waits for it.
  void run(const std::function<void()>& task) {
    std::promise<void> done;
    {
      // Sent under the lock: the loop thread may run the task (woken by an earlier send)
      // before this send, and stop() closes `wakeup` under the same lock.
      std::lock_guard lock(mutex);
      tasks.emplace_back([&] {
        task();
        done.set_value();
      });
      uv_async_send(wakeup);
    }
    done.get_future().wait();
  }

  // Each connection may close itself (and leave the set) while it is visited.
  template <typename Visit>
  void for_each_connection(Visit visit) {
    const std::vector<ProxyConnection*> open(context.connections.begin(),
                                             context.connections.end());
    for (ProxyConnection* connection : open) visit(*connection);
  }

  // Loop thread: closes every handle, so that uv_run() returns.
  void stop() {
    if (listener) close_and_delete(listener);
    listener = nullptr;
    for_each_connection([](ProxyConnection& c) { c.close(); });
    std::lock_guard lock(mutex);
    if (wakeup) close_and_delete(wakeup);
    wakeup = nullptr;
  }

  // For a constructor that fails before the thread starts.
  void abandon() {
    stop();
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }

  static void on_connection(uv_stream_t* server, int status) {
    auto* self = static_cast<Impl*>(server->data);
    if (status < 0) return;  // e.g. EMFILE: the client stays in the backlog
    ProxyConnection::accept(server, self->context);
  }

  static void on_wakeup(uv_async_t* async) {
    auto* self = static_cast<Impl*>(async->data);
    std::vector<std::function<void()>> batch;
    {
      std::lock_guard lock(self->mutex);
      batch.swap(self->tasks);
    }
    for (auto& task : batch) task();
  }
};

FaultProxy::FaultProxy(const std::string& upstream_host, std::uint16_t upstream_port,
                       std::uint16_t listen_port)
    : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  try {
    impl.context.upstream = ip_address(upstream_host, upstream_port);
  } catch (...) {
    impl.abandon();
    throw;
  }

  impl.wakeup = new uv_async_t;
  uv_async_init(&impl.loop, impl.wakeup, Impl::on_wakeup);
  impl.wakeup->data = &impl;

  impl.listener = new uv_tcp_t;
  uv_tcp_init(&impl.loop, impl.listener);
  impl.listener->data = &impl;
  sockaddr_in address{};
  uv_ip4_addr("127.0.0.1", listen_port, &address);
  int rc = uv_tcp_bind(impl.listener, reinterpret_cast<const sockaddr*>(&address), 0);
  if (rc == 0) {
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(impl.listener), 128, Impl::on_connection);
  }
  if (rc != 0) {
    impl.abandon();
    throw uv_failure("listen on 127.0.0.1:" + std::to_string(listen_port), rc);
  }
  sockaddr_storage bound{};
  int length = sizeof bound;
  uv_tcp_getsockname(impl.listener, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);

  impl.thread = std::thread([&impl] { uv_run(&impl.loop, UV_RUN_DEFAULT); });
}

FaultProxy::~FaultProxy() {
  impl_->run([this] { impl_->stop(); });
  impl_->thread.join();
  uv_loop_close(&impl_->loop);
}

void FaultProxy::set_mode(ProxyMode mode) {
  impl_->run([&] {
    impl_->context.settings.mode = mode;
    impl_->for_each_connection([](ProxyConnection& c) { c.settings_changed(); });
  });
}

ProxyMode FaultProxy::mode() const {
  ProxyMode mode{};
  impl_->run([&] { mode = impl_->context.settings.mode; });
  return mode;
}

void FaultProxy::set_latency(Direction direction, std::chrono::milliseconds delay) {
  if (delay.count() < 0) delay = {};
  impl_->run([&] {
    impl_->context.settings.latency[static_cast<int>(direction)] = delay;
    impl_->for_each_connection([](ProxyConnection& c) { c.settings_changed(); });
  });
}

std::chrono::milliseconds FaultProxy::latency(Direction direction) const {
  std::chrono::milliseconds delay{};
  impl_->run([&] { delay = impl_->context.settings.delay(direction); });
  return delay;
}

void FaultProxy::reset_all() {
  impl_->run([&] { impl_->for_each_connection([](ProxyConnection& c) { c.reset(); }); });
}

void FaultProxy::retarget(const std::string& host, std::uint16_t port) {
  const sockaddr_storage upstream = ip_address(host, port);
  impl_->run([&] {
    impl_->context.upstream = upstream;
    impl_->for_each_connection([](ProxyConnection& c) { c.reset(); });
  });
}

ProxyStats FaultProxy::stats() const {
  ProxyStats stats;
  impl_->run([&] { stats = impl_->context.stats; });
  return stats;
}

}  // namespace redlock::chaos

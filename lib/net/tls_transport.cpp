#include "net/tls_transport.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <uv.h>

#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "net/closing.hpp"

namespace redlock::net {

// --- the shared SSL_CTX --------------------------------------------------------------

class TlsContext {
 public:
  TlsContext(SSL_CTX* context, bool verifies_peer, bool has_client_certificate)
      : context_(context),
        verifies_peer_(verifies_peer),
        has_client_certificate_(has_client_certificate) {}
  ~TlsContext() { SSL_CTX_free(context_); }

  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  SSL_CTX* get() const noexcept { return context_; }
  bool verifies_peer() const noexcept { return verifies_peer_; }
  bool has_client_certificate() const noexcept { return has_client_certificate_; }

 private:
  SSL_CTX* context_;
  bool verifies_peer_;
  bool has_client_certificate_;
};

namespace {

// Plaintext is handed to the Connection in chunks of up to this size; several TLS records
// (16 KB each at most) fit, so a burst of pipelined replies costs few parser calls.
constexpr std::size_t plaintext_buffer_size = 64 * 1024;

// OpenSSL keeps its errors in a per-thread queue: every operation starts with an empty
// queue, so that a failure is never explained by an older, unrelated error. The earliest
// entry is the cause; later ones are the layers above it saying that they failed too.
std::string drain_openssl_errors() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  if (ERR_SYSTEM_ERROR(code)) return std::strerror(ERR_GET_REASON(code));
  if (const char* reason = ERR_reason_error_string(code)) return reason;
  char buffer[256];
  ERR_error_string_n(code, buffer, sizeof buffer);
  return buffer;
}

Error setup_error(std::string_view where, const std::string& what) {
  std::string message = "TLS setup for ";
  message.append(where).append(" failed: ").append(what);
  return Error(make_error_code(errc::tls_error), std::move(message));
}

// Remembers, for the error text, that the server wanted a client certificate which this
// side does not have. Returning 0 sends none, as the handshake would without this hook.
int note_certificate_request(SSL* ssl, X509**, EVP_PKEY**);

Result<std::shared_ptr<TlsContext>> build_context(const TlsOptions& options,
                                                  std::string_view where) {
  ERR_clear_error();
  SSL_CTX* context = SSL_CTX_new(TLS_client_method());
  if (context == nullptr) return setup_error(where, drain_openssl_errors());
  auto owned = std::make_shared<TlsContext>(context, !options.insecure_skip_verify,
                                            !options.cert_file.empty());
  // TLS 1.0 and 1.1 are broken and Redis does not offer them by default either.
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  // Renegotiation would let the server start a handshake in the middle of a reply
  // stream; nothing here needs it.
  SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION);

  if (options.insecure_skip_verify) {
    SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nullptr);
  } else {
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
    if (options.ca_file.empty() && options.ca_dir.empty()) {
      if (SSL_CTX_set_default_verify_paths(context) != 1) {
        return setup_error(where,
                           "cannot load the system's trusted CAs: " + drain_openssl_errors());
      }
    } else if (SSL_CTX_load_verify_locations(
                   context, options.ca_file.empty() ? nullptr : options.ca_file.c_str(),
                   options.ca_dir.empty() ? nullptr : options.ca_dir.c_str()) != 1) {
      const std::string which =
          options.ca_file.empty() ? "ca_dir " + options.ca_dir : "ca_file " + options.ca_file;
      return setup_error(where, "cannot load " + which + ": " + drain_openssl_errors());
    }
  }

  if (!options.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(context, options.cert_file.c_str()) != 1) {
      return setup_error(
          where, "cannot load cert_file " + options.cert_file + ": " + drain_openssl_errors());
    }
    // A single PEM holding both the certificate and its key is common.
    const std::string& key_file = options.key_file.empty() ? options.cert_file : options.key_file;
    if (SSL_CTX_use_PrivateKey_file(context, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      return setup_error(where, "cannot load key_file " + key_file + ": " + drain_openssl_errors());
    }
    if (SSL_CTX_check_private_key(context) != 1) {
      return setup_error(where, "key_file " + key_file + " does not match cert_file " +
                                    options.cert_file + ": " + drain_openssl_errors());
    }
  } else if (!options.key_file.empty()) {
    return setup_error(where, "key_file " + options.key_file + " is set but cert_file is not");
  } else {
    SSL_CTX_set_client_cert_cb(context, &note_certificate_request);
  }
  return owned;
}

bool is_ip_literal(const std::string& name) {
  unsigned char address[sizeof(in6_addr)];
  return inet_pton(AF_INET, name.c_str(), address) == 1 ||
         inet_pton(AF_INET6, name.c_str(), address) == 1;
}

// --- the transport -------------------------------------------------------------------

class TlsTransport final : public Transport, private TransportSink {
 public:
  TlsTransport(uv_loop_t* loop, TransportSink& sink, const sockaddr* address, std::string where,
               std::shared_ptr<TlsContext> context, std::string_view peer_name)
      : sink_(&sink), where_(std::move(where)), context_(std::move(context)) {
    uv_idle_init(loop, &report_);
    report_.data = this;
    inner_ = make_tcp_transport(loop, *this, address, where_);
    set_up_session(peer_name);
  }

  int connect() override {
    if (ssl_ == nullptr) return UV_ENOMEM;
    return inner_->connect();
  }

  int write(std::string& bytes) override {
    if (closed_) return UV_ECANCELED;
    if (dead_) return report_pending_ ? 0 : UV_ECANCELED;  // 0: the failure is on its way
    if (bytes.empty()) return 0;
    if (!secured_) {
      // Nothing may leave before the peer is verified; it goes out after the handshake.
      early_plaintext_.append(bytes);
      bytes.clear();
      return 0;
    }
    ERR_clear_error();
    std::size_t taken = 0;
    // A memory BIO never pushes back, so SSL_write takes everything or fails for good.
    if (SSL_write_ex(ssl_, bytes.data(), bytes.size(), &taken) != 1) {
      const std::string reason = failure_reason(SSL_get_error(ssl_, 0));
      fail_later(
          {make_error_code(errc::tls_error), "TLS connection to " + where_ + " failed: " + reason});
      return 0;
    }
    bytes.clear();
    if (int status = send_ciphertext(); status < 0) {
      // A reset here may be the server rejecting the handshake (TLS 1.3 servers do that
      // after the client finished): the sink hears it explained, from the loop.
      fail_later(explain(from_uv("write", where_, status)));
    }
    return 0;
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    sink_ = nullptr;
    if (inner_ != nullptr) {
      inner_->close();  // it frees itself once libuv closed its socket
      inner_ = nullptr;
    }
    close_and_free<TlsTransport>(&report_);
  }

  bool handshaking() const noexcept override { return tcp_connected_ && !secured_; }

  void certificate_requested() noexcept { certificate_requested_ = true; }

 private:
  template <typename Owner, typename Handle>
  friend void net::close_and_free(Handle* handle);
  ~TlsTransport() override {
    if (ssl_ != nullptr) SSL_free(ssl_);  // also frees both BIOs
  }

  void set_up_session(std::string_view peer_name) {
    ERR_clear_error();
    SSL* ssl = SSL_new(context_->get());
    BIO* from_socket = BIO_new(BIO_s_mem());
    BIO* to_socket = BIO_new(BIO_s_mem());
    if (ssl == nullptr || from_socket == nullptr || to_socket == nullptr) {
      SSL_free(ssl);
      BIO_free(from_socket);
      BIO_free(to_socket);
      ERR_clear_error();
      return;
    }
    // An empty input BIO means "wait for the socket", not end of stream.
    BIO_set_mem_eof_return(from_socket, -1);
    SSL_set_bio(ssl, from_socket, to_socket);
    SSL_set_connect_state(ssl);
    SSL_set_app_data(ssl, this);
    from_socket_ = from_socket;
    to_socket_ = to_socket;
    ssl_ = ssl;

    // A zone ("fe80::1%eth0") belongs to the route, not to the certificate.
    std::string name(peer_name.substr(0, peer_name.find('%')));
    if (name.empty()) return;
    const bool numeric = is_ip_literal(name);
    if (!numeric) SSL_set_tlsext_host_name(ssl_, name.c_str());
    if (!context_->verifies_peer()) return;
    expected_name_ = name;
    bool named = false;
    if (numeric) {
      named = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), name.c_str()) == 1;
    } else {
      SSL_set_hostflags(ssl_, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      named = SSL_set1_host(ssl_, name.c_str()) == 1;
    }
    if (!named) {
      // Without the name check a certificate for any host would pass: refuse to connect.
      SSL_free(ssl_);
      ssl_ = nullptr;
      ERR_clear_error();
    }
  }

  // --- the TCP transport's events (this object is its sink) ---

  void on_transport_connected() override {
    if (closed_ || dead_) return;
    tcp_connected_ = true;
    advance_handshake();
  }

  void on_transport_data(const char* data, std::size_t size) override {
    if (!closed_ && !dead_) consume(data, size);
  }

  void on_transport_error(NetError error) override {
    if (!closed_ && !dead_) fail(explain(std::move(error)));
  }

  // A hang-up while the server may still be rejecting the handshake is the handshake's
  // failure: the server refused something of ours (no client certificate, a protocol it
  // does not speak) or it is no TLS server at all. After the handshake that is only
  // possible when the server asked for a client certificate that was not sent (TLS 1.3
  // rejects it once the client has finished).
  NetError explain(NetError error) const {
    const bool may_be_rejected =
        tcp_connected_ && (!secured_ || (certificate_requested_ && !received_plaintext_));
    const int status = error.uv_status;
    if (may_be_rejected && (status == UV_EOF || status == UV_ECONNRESET || status == UV_EPIPE)) {
      return handshake_failure(uv_error_text(status));
    }
    return error;
  }

  void consume(const char* data, std::size_t size) {
    received_ciphertext_ = true;
    if (BIO_write(from_socket_, data, static_cast<int>(size)) != static_cast<int>(size)) {
      fail({make_error_code(errc::tls_error),
            "TLS on " + where_ + ": out of memory buffering received data"});
      return;
    }
    if (!secured_ && !advance_handshake()) return;
    if (secured_) read_plaintext();
  }

  // Returns false when the transport failed or was closed meanwhile.
  bool advance_handshake() {
    ERR_clear_error();
    const int result = SSL_do_handshake(ssl_);
    const int error = result == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl_, result);
    std::string reason;
    if (error != SSL_ERROR_NONE && error != SSL_ERROR_WANT_READ) reason = failure_reason(error);
    // Handshake records, and on failure the alert that tells the server why.
    const int sent = send_ciphertext();
    if (!reason.empty()) {
      fail(handshake_failure(reason));
      return false;
    }
    if (sent < 0) {
      fail(explain(from_uv("write", where_, sent)));
      return false;
    }
    if (error == SSL_ERROR_WANT_READ) return true;
    secured_ = true;
    sink_->on_transport_connected();
    if (closed_ || dead_) return false;
    if (!early_plaintext_.empty()) {
      std::string early;
      early.swap(early_plaintext_);
      if (int status = write(early); status < 0) {
        fail(explain(from_uv("write", where_, status)));
        return false;
      }
    }
    return true;
  }

  void read_plaintext() {
    for (;;) {
      std::size_t filled = 0;
      int error = SSL_ERROR_NONE;
      while (filled < plaintext_buffer_size) {
        ERR_clear_error();
        std::size_t got = 0;
        if (SSL_read_ex(ssl_, plaintext_ + filled, plaintext_buffer_size - filled, &got) != 1) {
          error = SSL_get_error(ssl_, 0);
          break;
        }
        filled += got;
      }
      std::string reason;
      if (error != SSL_ERROR_NONE && error != SSL_ERROR_WANT_READ &&
          error != SSL_ERROR_ZERO_RETURN) {
        reason = failure_reason(error);
      }
      if (filled > 0) {
        received_plaintext_ = true;
        sink_->on_transport_data(plaintext_, filled);
        if (closed_ || dead_) return;
      }
      if (error == SSL_ERROR_NONE) continue;  // the buffer filled up: more may be decrypted
      // Reading can produce records to send (a TLS 1.3 key update answer, an alert).
      const int sent = send_ciphertext();
      if (!reason.empty()) {
        fail(received_plaintext_ ? NetError{make_error_code(errc::tls_error),
                                            "TLS connection to " + where_ + " failed: " + reason}
                                 : handshake_failure(reason));
        return;
      }
      if (error == SSL_ERROR_ZERO_RETURN) {
        fail(from_uv("read", where_, UV_EOF));  // close_notify: an orderly close
        return;
      }
      if (sent < 0) fail(explain(from_uv("write", where_, sent)));
      return;
    }
  }

  // Moves whatever OpenSSL produced to the socket. Returns a libuv code.
  int send_ciphertext() {
    const std::size_t pending = BIO_ctrl_pending(to_socket_);
    if (pending == 0 || inner_ == nullptr) return 0;
    ciphertext_.resize(pending);
    const int got = BIO_read(to_socket_, ciphertext_.data(), static_cast<int>(pending));
    ciphertext_.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    return inner_->write(ciphertext_);
  }

  // Words for a failed SSL call; drains the error queue.
  std::string failure_reason(int ssl_error) {
    const unsigned long first = ERR_peek_error();
    if (ERR_GET_LIB(first) == ERR_LIB_SSL &&
        ERR_GET_REASON(first) == SSL_R_CERTIFICATE_VERIFY_FAILED) {
      ERR_clear_error();
      const long verify = SSL_get_verify_result(ssl_);
      std::string reason = "certificate verify failed (";
      reason += X509_verify_cert_error_string(verify);
      if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH) {
        reason += ": the certificate is not valid for " + expected_name_;
      }
      return reason + ")";
    }
    if (ssl_error == SSL_ERROR_ZERO_RETURN) {
      return "the server closed the connection (close_notify)";
    }
    if (first == 0) {
      return "TLS failed without a reason (SSL_get_error " + std::to_string(ssl_error) + ")";
    }
    std::string reason = drain_openssl_errors();
    const int code = ERR_GET_REASON(first);
    if (ERR_GET_LIB(first) == ERR_LIB_SSL &&
        (code == SSL_R_WRONG_VERSION_NUMBER || code == SSL_R_PACKET_LENGTH_TOO_LONG ||
         code == SSL_R_RECORD_LENGTH_MISMATCH)) {
      reason += " (is this a TLS port?)";
    }
    return reason;
  }

  NetError handshake_failure(std::string reason) const {
    if (certificate_requested_) {
      reason +=
          " (the server asked for a client certificate and none is configured: set cert_file "
          "and key_file)";
    } else if (!received_ciphertext_) {
      reason += " before the server said anything (is this a TLS port?)";
    }
    return {make_error_code(errc::tls_error),
            "TLS handshake with " + where_ + " failed: " + reason};
  }

  // The stream is dead: the owner hears it once and must close() this transport.
  void fail(NetError error) {
    dead_ = true;
    sink_->on_transport_error(std::move(error));
  }

  // fail() for where the sink must not be called (inside write()): on the next loop turn.
  void fail_later(NetError error) {
    dead_ = true;
    report_pending_ = true;
    pending_failure_ = std::move(error);
    uv_idle_start(&report_, [](uv_idle_t* idle) {
      uv_idle_stop(idle);
      auto* self = static_cast<TlsTransport*>(idle->data);
      self->report_pending_ = false;
      if (!self->closed_) self->sink_->on_transport_error(std::move(self->pending_failure_));
    });
  }

  // Reports failures found inside write(); its close callback frees this object, which
  // therefore outlives any callback that closes it.
  uv_idle_t report_{};
  TransportSink* sink_;
  std::string where_;
  std::shared_ptr<TlsContext> context_;  // outlives ssl_, which was made from it
  Transport* inner_ = nullptr;           // frees itself after close()
  SSL* ssl_ = nullptr;
  BIO* from_socket_ = nullptr;  // owned by ssl_
  BIO* to_socket_ = nullptr;    // owned by ssl_
  std::string expected_name_;   // for the error text of a name mismatch
  bool closed_ = false;
  bool dead_ = false;
  bool report_pending_ = false;
  NetError pending_failure_;
  bool tcp_connected_ = false;
  bool secured_ = false;
  bool received_ciphertext_ = false;
  bool received_plaintext_ = false;
  bool certificate_requested_ = false;
  std::string early_plaintext_;  // written before the handshake finished
  std::string ciphertext_;       // exchanged with the TCP transport's buffers
  char plaintext_[plaintext_buffer_size];
};

int note_certificate_request(SSL* ssl, X509**, EVP_PKEY**) {
  static_cast<TlsTransport*>(SSL_get_app_data(ssl))->certificate_requested();
  return 0;
}

}  // namespace

Result<std::shared_ptr<TlsContext>> tls_context_for(const TlsOptions& options,
                                                    std::string_view where) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<TlsContext>> contexts;
  std::string key;
  for (const std::string* part :
       {&options.ca_file, &options.ca_dir, &options.cert_file, &options.key_file}) {
    key.append(*part).push_back('\0');
  }
  key.push_back(options.insecure_skip_verify ? '1' : '0');
  // server_name is per session (SNI and the name check), so it is not part of the key.

  std::lock_guard lock(mutex);
  if (auto it = contexts.find(key); it != contexts.end()) {
    if (auto shared = it->second.lock()) return shared;
  }
  auto built = build_context(options, where);
  if (!built) return built;
  // Entries of contexts that are gone are dropped here, so the map stays small.
  std::erase_if(contexts, [](const auto& entry) { return entry.second.expired(); });
  contexts[key] = *built;
  return built;
}

Transport* make_tls_transport(uv_loop_t* loop, TransportSink& sink, const sockaddr* address,
                              std::string where, std::shared_ptr<TlsContext> context,
                              std::string_view peer_name) {
  return new TlsTransport(loop, sink, address, std::move(where), std::move(context), peer_name);
}

}  // namespace redlock::net

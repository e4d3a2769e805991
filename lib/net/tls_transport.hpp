#pragma once
// TLS for rediss:// nodes: OpenSSL driven through memory BIOs on top of the plain TCP
// transport. Ciphertext goes to and comes from the socket; the Connection above sees a
// Transport like any other and only ever handles plaintext RESP. Nothing here blocks on
// the network; the handshake runs on the loop, inside the Connection's connect deadline.

#include <memory>
#include <string>
#include <string_view>

#include <redlock/options.hpp>
#include <redlock/result.hpp>

#include "net/transport.hpp"

struct sockaddr;
struct uv_loop_s;

namespace redlock::net {

/// A client-side SSL_CTX built from TlsOptions: trust anchors (ca_file / ca_dir, else the
/// system store), the optional client certificate, TLS 1.2 or newer, no renegotiation.
/// Immutable once built, so one context serves many connections on many threads.
class TlsContext;

/// The context for `options`, shared with every other live user of equal options (files
/// are read when no such context exists; a context is rebuilt, re-reading the files, once
/// its last user is gone). Reads the files with blocking I/O: they are small and local.
/// Thread-safe. Fails with errc::tls_error, "TLS setup for <where> failed: cannot load
/// ca_file /path: No such file or directory" and the like.
Result<std::shared_ptr<TlsContext>> tls_context_for(const TlsOptions& options,
                                                    std::string_view where);

/// TLS over TCP to `address`. `peer_name` is what the server's certificate must be valid
/// for (TlsOptions::server_name, else the URL's host): a DNS name is also sent as SNI and
/// matched against the certificate's names; an IP literal is matched against its IP
/// addresses and sent without SNI (RFC 6066 forbids literals there). The sink hears
/// "connected" only once the handshake, including certificate verification, is done.
///
/// Errors: everything the TCP transport reports, plus errc::tls_error with details such as
///   "TLS handshake with 127.0.0.1:7101 failed: certificate verify failed (unable to get
///    local issuer certificate)",
///   "TLS handshake with 127.0.0.1:7101 failed: tlsv13 alert certificate required (the
///    server asked for a client certificate and none is configured: set cert_file and
///    key_file)",
///   "TLS handshake with 127.0.0.1:7101 failed: wrong version number (is this a TLS port?)".
Transport* make_tls_transport(uv_loop_s* loop, TransportSink& sink, const sockaddr* address,
                              std::string where, std::shared_ptr<TlsContext> context,
                              std::string_view peer_name);

}  // namespace redlock::net

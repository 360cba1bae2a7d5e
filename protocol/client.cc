// SendRequest over a UNIX-socket connection served by root (or the caller), with one deadline for
// the write and the reply.
#include "protocol/client.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <stdexcept>
#include <string>

#include "protocol/protocol.h"

namespace elastic::daemon {

nlohmann::json SendRequest(const std::string& socket_path, CredentialCodec& codec,
                           const nlohmann::json& request, std::chrono::milliseconds timeout) {
  namespace asio = boost::asio;
  std::string error;
  std::string credential = codec.Encode(request.dump(), error);
  if (credential.empty()) throw std::runtime_error(error);
  asio::io_context io;
  asio::local::stream_protocol::socket socket(io);
  boost::system::error_code ec;
  socket.connect(asio::local::stream_protocol::endpoint(socket_path), ec);
  if (ec) {
    throw std::runtime_error("cannot reach elasticd at " + socket_path + ": " + ec.message() +
                             " (is elasticd running? see `systemctl status elasticd`)");
  }
  // Only root (elasticd) or the caller itself may answer: a socket another user managed to put
  // at the path (a directory writable by others) would otherwise receive the credential — which
  // it could replay to the real elasticd within its TTL — and could answer anything.
  ucred peer{};
  socklen_t length = sizeof peer;
  if (getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) {
    throw std::runtime_error("cannot tell who serves " + socket_path + ": " +
                             std::strerror(errno));
  }
  if (peer.uid != 0 && peer.uid != geteuid()) {
    throw std::runtime_error("refusing " + socket_path + ": it is served by uid " +
                             std::to_string(peer.uid) + ", not by root (elasticd runs as root;"
                             " check who can write the socket's directory)");
  }
  credential += '\n';
  // Asynchronous write and read under one deadline: a daemon stuck (or a peer that never
  // answers) costs the caller `timeout`, not its whole loop.
  std::string reply;
  bool done = false;
  asio::async_write(socket, asio::buffer(credential), [&](boost::system::error_code e, std::size_t) {
    if (e) {
      ec = e;
      done = true;
      return;
    }
    asio::async_read_until(socket, asio::dynamic_buffer(reply, kMaxRequestLineBytes), '\n',
                           [&](boost::system::error_code e2, std::size_t) {
                             ec = e2;
                             done = true;
                           });
  });
  io.run_for(timeout);
  if (!done) {
    throw std::runtime_error("elasticd at " + socket_path + " did not answer within " +
                             std::to_string(timeout.count()) + " ms");
  }
  if (ec && reply.empty()) {
    throw std::runtime_error("elasticd at " + socket_path + " closed the connection: " +
                             ec.message());
  }
  nlohmann::json doc = nlohmann::json::parse(reply, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    throw std::runtime_error("elasticd sent a malformed reply");
  }
  return doc;
}

}  // namespace elastic::daemon

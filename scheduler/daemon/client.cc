// SendRequest over a UNIX-socket connection, with one deadline for the write and the reply.
#include "scheduler/daemon/client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <stdexcept>
#include <string>

#include "scheduler/daemon/protocol.h"

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

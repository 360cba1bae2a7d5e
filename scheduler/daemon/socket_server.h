// elasticd's UNIX-socket listener (Boost.Asio, one event-loop thread). One request line per
// connection, answered by the handler; slow or oversized clients are cut off so one client
// cannot stall the daemon. Not thread-safe: use from the io_context's thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace elastic::daemon {

class SocketServer {
 public:
  using Handler = std::function<std::string(const std::string& line)>;

  SocketServer(boost::asio::io_context& io, std::string path, Handler handler);
  ~SocketServer();  // removes the socket file it created
  SocketServer(const SocketServer&) = delete;
  SocketServer& operator=(const SocketServer&) = delete;

  // Binds and listens. Throws std::runtime_error naming the path when it cannot (including
  // when another daemon already answers there); a stale socket file is replaced.
  void Start();

  static constexpr std::chrono::seconds kClientTimeout{5};

 private:
  void Accept();

  boost::asio::io_context& io_;
  std::string path_;
  Handler handler_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  bool created_ = false;
};

}  // namespace elastic::daemon

// elasticd's UNIX-socket listener (Boost.Asio, one event-loop thread). One request line per
// connection, answered by the handler, at once or later (when the answer needs Slurm); slow or
// oversized clients are cut off, and one user may hold only so many connections, so that no
// user can stall the daemon or lock others out. Not thread-safe: use from the io_context's
// thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include <sys/types.h>

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

namespace elastic::daemon {

class SocketServer {
 public:
  using Handler = std::function<std::string(const std::string& line)>;
  // Answers a line by calling `reply` once, on the io_context's thread, now or later; the
  // connection stays open until then.
  using Reply = std::function<void(std::string response)>;
  using AsyncHandler = std::function<void(const std::string& line, Reply reply)>;

  // Connections one uid (the kernel's SO_PEERCRED, before any MUNGE) may hold open at once.
  // Each costs elasticd an fd until answered or timed out: without a cap,
  // one user's silent connections used up its fd limit (1024 under systemd) and every other
  // client waited while elasticd spun on accept (bench/elasticd_load.sh, issue 7).
  static constexpr std::size_t kMaxConnectionsPerUser = 512;

  // For the client to send its line, and again to take the reply; elasticd's own time to
  // answer does not count.
  static constexpr std::chrono::milliseconds kClientTimeout{5'000};

  // `client_timeout` is kClientTimeout but for tests.
  SocketServer(boost::asio::io_context& io, std::string path, Handler handler,
               std::size_t max_connections_per_user = kMaxConnectionsPerUser,
               std::chrono::milliseconds client_timeout = kClientTimeout);
  SocketServer(boost::asio::io_context& io, std::string path, AsyncHandler handler,
               std::size_t max_connections_per_user = kMaxConnectionsPerUser,
               std::chrono::milliseconds client_timeout = kClientTimeout);
  ~SocketServer();  // removes the socket file it created
  SocketServer(const SocketServer&) = delete;
  SocketServer& operator=(const SocketServer&) = delete;

  // Creates missing parent directories 0755, binds and listens. Throws std::runtime_error
  // naming the path when it cannot (including when another daemon already answers there, or
  // the path holds something that is not a socket); a stale socket file is replaced.
  void Start();

 private:
  // Open connections per uid, shared with the sessions (which may outlive the server).
  struct UserConnections {
    std::size_t open = 0;
    bool refusal_logged = false;  // one log line per burst over the cap, not one per connection
  };
  using ConnectionCounts = std::unordered_map<uid_t, UserConnections>;

  void Accept();
  void Admit(boost::asio::local::stream_protocol::socket socket);

  boost::asio::io_context& io_;
  std::string path_;
  AsyncHandler handler_;
  std::size_t max_connections_per_user_;
  std::chrono::milliseconds client_timeout_;
  std::shared_ptr<ConnectionCounts> connections_ = std::make_shared<ConnectionCounts>();
  boost::asio::local::stream_protocol::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;
  bool created_ = false;
};

}  // namespace elastic::daemon

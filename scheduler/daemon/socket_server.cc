// SocketServer implementation.
#include "scheduler/daemon/socket_server.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <filesystem>
#include <istream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "scheduler/daemon/log.h"
#include "protocol/protocol.h"

namespace elastic::daemon {
namespace asio = boost::asio;
using Stream = asio::local::stream_protocol;

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `on_close` runs when the session is gone (the connection closed and nothing refers to it).
  Session(Stream::socket socket, const SocketServer::AsyncHandler& handler,
          std::chrono::milliseconds client_timeout, std::function<void()> on_close)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        buffer_(kMaxRequestLineBytes),
        handler_(handler),
        client_timeout_(client_timeout),
        on_close_(std::move(on_close)) {}
  ~Session() { on_close_(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void Run() {
    ArmTimer();
    asio::async_read_until(socket_, buffer_, '\n',
                           [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                             self->OnLine(ec);
                           });
  }

 private:
  void OnLine(boost::system::error_code ec) {
    if (ec == asio::error::not_found) {
      Reply(ErrorResponse("request line longer than " + std::to_string(kMaxRequestLineBytes) +
                          " bytes"));
      return;
    }
    if (ec) {  // closed by the client or by the timeout: let the fd go now, not at the timeout
      boost::system::error_code ignored;
      timer_.cancel();
      socket_.close(ignored);
      return;
    }
    std::istream in(&buffer_);
    std::string line;
    std::getline(in, line);
    // The client has said its piece: while elasticd works on the answer (perhaps waiting for
    // Slurm) the connection stays open.
    timer_.cancel();
    handler_(line, [self = shared_from_this()](std::string response) {
      self->Reply(std::move(response));
    });
  }

  // The client gets client_timeout_ to send its line, and again to take the reply.
  void ArmTimer() {
    timer_.expires_after(client_timeout_);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      boost::system::error_code ignored;
      if (!ec) self->socket_.close(ignored);  // client too slow: drop it
    });
  }

  void Reply(std::string response) {
    ArmTimer();
    response_ = std::move(response) + "\n";
    asio::async_write(socket_, asio::buffer(response_),
                      [self = shared_from_this()](boost::system::error_code, std::size_t) {
                        boost::system::error_code ignored;
                        self->timer_.cancel();
                        self->socket_.shutdown(Stream::socket::shutdown_both, ignored);
                        self->socket_.close(ignored);
                      });
  }

  Stream::socket socket_;
  asio::steady_timer timer_;
  asio::streambuf buffer_;
  const SocketServer::AsyncHandler& handler_;
  const std::chrono::milliseconds client_timeout_;
  std::function<void()> on_close_;
  std::string response_;
};

// The uid of the process at the other end, as the kernel saw it connect; nullopt if unknown.
std::optional<uid_t> PeerUid(Stream::socket& socket) {
  ucred credentials{};
  socklen_t length = sizeof credentials;
  if (::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
    return std::nullopt;
  }
  return credentials.uid;
}

// True when a live process accepts connections at `path`.
bool SomeoneListens(asio::io_context& io, const std::string& path) {
  Stream::socket probe(io);
  boost::system::error_code ec;
  probe.connect(Stream::endpoint(path), ec);
  return !ec;
}

}  // namespace

SocketServer::SocketServer(asio::io_context& io, std::string path, Handler handler,
                           std::size_t max_connections_per_user,
                           std::chrono::milliseconds client_timeout)
    : SocketServer(io, std::move(path),
                   [handler = std::move(handler)](const std::string& line, Reply reply) {
                     reply(handler(line));
                   },
                   max_connections_per_user, client_timeout) {}

SocketServer::SocketServer(asio::io_context& io, std::string path, AsyncHandler handler,
                           std::size_t max_connections_per_user,
                           std::chrono::milliseconds client_timeout)
    : io_(io),
      path_(std::move(path)),
      handler_(std::move(handler)),
      max_connections_per_user_(max_connections_per_user),
      client_timeout_(client_timeout),
      acceptor_(io),
      accept_retry_(io) {}

SocketServer::~SocketServer() {
  if (created_) {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
}

void SocketServer::Start() {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Every missing directory on the way gets 0755 whatever the umask: one left group- or
  // world-writable would let a user swap the socket's directory for one of their own.
  std::vector<fs::path> missing;
  for (fs::path dir = fs::path(path_).parent_path(); !dir.empty() && !fs::exists(dir, ec);
       dir = dir.parent_path()) {
    missing.push_back(dir);
    if (dir == dir.root_path()) break;
  }
  if (!missing.empty()) {
    fs::create_directories(missing.front(), ec);
    if (ec) {
      throw std::runtime_error("cannot create " + missing.front().string() + ": " + ec.message());
    }
    for (const fs::path& dir : missing) ::chmod(dir.c_str(), 0755);
  }
  if (fs::is_socket(path_, ec)) {
    if (SomeoneListens(io_, path_)) {
      throw std::runtime_error("another elasticd already answers on " + path_);
    }
    fs::remove(path_, ec);  // stale socket from a crashed daemon
  } else if (fs::exists(path_, ec)) {
    throw std::runtime_error(path_ + " exists and is not a socket: refusing to replace it");
  }
  boost::system::error_code bec;
  acceptor_.open(Stream(), bec);
  if (!bec) acceptor_.bind(Stream::endpoint(path_), bec);
  if (!bec) acceptor_.listen(asio::socket_base::max_listen_connections, bec);
  if (bec) throw std::runtime_error("cannot listen on " + path_ + ": " + bec.message());
  created_ = true;
  // Anyone may connect: every request is authenticated by its MUNGE credential, and what a
  // caller may see or do is decided from the uid munged vouches for (docs/security.md).
  ::chmod(path_.c_str(), 0666);
  Accept();
}

void SocketServer::Accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, Stream::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of fds (EMFILE) or the like: accepting again at once spun a core while nothing
      // could free one. Sessions end within kClientTimeout; try again shortly.
      accept_retry_.expires_after(std::chrono::milliseconds(100));
      accept_retry_.async_wait([this](boost::system::error_code wait_ec) {
        if (!wait_ec) Accept();
      });
      return;
    }
    Admit(std::move(socket));
    Accept();
  });
}

void SocketServer::Admit(Stream::socket socket) {
  const std::optional<uid_t> uid = PeerUid(socket);
  if (!uid) return;  // the peer is already gone
  UserConnections& user = (*connections_)[*uid];
  if (user.open >= max_connections_per_user_) {
    const std::string refusal =
        ErrorResponse("too many connections from uid " + std::to_string(*uid) + " (at most " +
                      std::to_string(max_connections_per_user_) +
                      " at once): one request per connection, close each once answered") +
        "\n";
    // Best effort, never blocking: the refusal fits in an empty socket buffer.
    ::send(socket.native_handle(), refusal.data(), refusal.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (!user.refusal_logged) {
      Log(LogLevel::kWarn, "uid " + std::to_string(*uid) + " holds " +
                               std::to_string(user.open) + " connections: refusing more");
      user.refusal_logged = true;
    }
    return;  // `socket` closes here
  }
  ++user.open;
  auto on_close = [connections = connections_, uid = *uid] {
    auto it = connections->find(uid);
    if (it != connections->end() && --it->second.open == 0) connections->erase(it);
  };
  std::make_shared<Session>(std::move(socket), handler_, client_timeout_, std::move(on_close))
      ->Run();
}

}  // namespace elastic::daemon

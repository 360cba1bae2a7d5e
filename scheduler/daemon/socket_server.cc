// SocketServer implementation.
#include "scheduler/daemon/socket_server.h"

#include <sys/stat.h>

#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <filesystem>
#include <istream>
#include <memory>
#include <stdexcept>

#include "scheduler/daemon/protocol.h"

namespace elastic::daemon {
namespace asio = boost::asio;
using Stream = asio::local::stream_protocol;

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Stream::socket socket, const SocketServer::Handler& handler)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        buffer_(kMaxRequestLineBytes),
        handler_(handler) {}

  void Run() {
    timer_.expires_after(SocketServer::kClientTimeout);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->socket_.close();  // client too slow: drop it
    });
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
    if (ec) return;  // closed by the client or by the timeout
    std::istream in(&buffer_);
    std::string line;
    std::getline(in, line);
    Reply(handler_(line));
  }

  void Reply(std::string response) {
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
  const SocketServer::Handler& handler_;
  std::string response_;
};

// True when a live process accepts connections at `path`.
bool SomeoneListens(asio::io_context& io, const std::string& path) {
  Stream::socket probe(io);
  boost::system::error_code ec;
  probe.connect(Stream::endpoint(path), ec);
  return !ec;
}

}  // namespace

SocketServer::SocketServer(asio::io_context& io, std::string path, Handler handler)
    : io_(io), path_(std::move(path)), handler_(std::move(handler)), acceptor_(io) {}

SocketServer::~SocketServer() {
  if (created_) {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
}

void SocketServer::Start() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path parent = fs::path(path_).parent_path();
  if (!parent.empty() && !fs::exists(parent)) {
    fs::create_directories(parent, ec);
    if (ec) throw std::runtime_error("cannot create " + parent.string() + ": " + ec.message());
    ::chmod(parent.c_str(), 0755);
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
    if (!ec) std::make_shared<Session>(std::move(socket), handler_)->Run();
    Accept();
  });
}

}  // namespace elastic::daemon

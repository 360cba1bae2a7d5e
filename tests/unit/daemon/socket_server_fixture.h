// The SocketServer test fixture (a server on a real UNIX socket in a temp dir, a pass-through
// codec) and raw-socket client helpers, shared by the socket server test files.
#pragma once

#include "scheduler/daemon/socket_server.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "protocol/client.h"
#include "protocol/protocol.h"
#include "tests/common/temp_dir.h"

namespace elastic::daemon::socket_test {

// Unit-test codec: the "credential" is the payload itself, vouched for as uid 1234.
class PlainCodec final : public CredentialCodec {
 public:
  std::string Encode(const std::string& payload, std::string&) override { return payload; }
  Authenticated Decode(const std::string& credential) override {
    return {.uid = 1234, .gid = 1234, .payload = credential, .error = {}};
  }
};

class SocketServerTest : public ::testing::Test {
 protected:
  void StartServer() {
    server_ = std::make_unique<SocketServer>(io_, path_, [](const std::string& line) {
      return OkResponse({{"echo", line}});
    });
    server_->Start();
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    io_.stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
  }

  testing::TempDir dir_;
  std::string path_ = (dir_.path() / "run" / "elasticd.sock").string();
  boost::asio::io_context io_;
  std::unique_ptr<SocketServer> server_;
  std::thread thread_;
};

// Connects and sends `text` (nothing if empty); returns the fd, left open (reads on it give up
// after 10 s, so a bug fails the test instead of hanging it).
inline int ConnectAndSend(const std::string& path, const std::string& text) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  if (!text.empty() && ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads until EOF; returns what came before it.
inline std::string ReadToEnd(int fd) {
  std::string text;
  char buffer[256];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  return text;
}

// A connected socket whose reads and writes give up after 10 s (a bug fails the test instead of
// hanging it); -1 if the server does not accept.
inline int Connect(const std::string& path) {
  int fd = ConnectAndSend(path, "");
  if (fd >= 0) {
    timeval timeout{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  }
  return fd;
}

// Sends what the peer takes (no SIGPIPE once it has closed).
inline void SendAll(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

struct Received {
  std::string text;
  bool closed = false;  // end of file or reset by the server, not our 10 s read timeout
};

inline Received ReadUntilClosed(int fd) {
  Received received;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      received.text.append(buffer, n);
      continue;
    }
    received.closed = n == 0 || errno == ECONNRESET;
    return received;
  }
}

}  // namespace elastic::daemon::socket_test

// SocketServer over a real UNIX socket with a pass-through codec (no munged needed here; the
// MUNGE path is covered by the integration test against a real munged).
#include "scheduler/daemon/socket_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <thread>

#include "scheduler/daemon/client.h"
#include "scheduler/daemon/protocol.h"
#include "tests/common/temp_dir.h"

namespace elastic::daemon {
namespace {

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

TEST_F(SocketServerTest, AnswersOneRequestPerConnection) {
  StartServer();
  PlainCodec codec;
  for (int i = 0; i < 3; ++i) {
    auto reply = SendRequest(path_, codec, {{"op", "status"}, {"i", i}});
    EXPECT_TRUE(reply["ok"]);
    EXPECT_EQ(nlohmann::json::parse(reply["echo"].get<std::string>())["i"], i);
  }
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0666u);
}

TEST_F(SocketServerTest, RefusesToStartTwiceOnOnePath) {
  StartServer();
  boost::asio::io_context other_io;
  SocketServer second(other_io, path_, [](const std::string&) { return std::string(); });
  try {
    second.Start();
    FAIL() << "second server started";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("another elasticd already answers"), std::string::npos);
  }
}

TEST_F(SocketServerTest, ReplacesStaleSocketAndRemovesItOnExit) {
  // A crashed daemon leaves its socket file behind with nobody listening.
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
  ASSERT_TRUE(std::filesystem::is_socket(path_));
  StartServer();
  PlainCodec codec;
  EXPECT_TRUE(SendRequest(path_, codec, {{"op", "status"}})["ok"]);
  io_.stop();
  thread_.join();
  server_.reset();
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(SocketServerTest, ClientReportsDaemonDown) {
  PlainCodec codec;
  try {
    SendRequest(path_, codec, {{"op", "status"}});
    FAIL() << "no error with no daemon";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot reach elasticd at " + path_), std::string::npos);
  }
}

}  // namespace
}  // namespace elastic::daemon

// SocketServer over a real UNIX socket with a pass-through codec (no munged needed here; the
// MUNGE path is covered by the integration test against a real munged).

#include "tests/unit/daemon/socket_server_fixture.h"

namespace elastic::daemon {
namespace {

using namespace socket_test;

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
// One event-loop thread serves everyone: clients that connect and say nothing, or half a line,
// must neither delay the others nor stay connected past kClientTimeout (a local user could
// otherwise hold elasticd's fds and lock everyone out).
TEST_F(SocketServerTest, StallingClientsNeitherDelayOthersNorStay) {
  StartServer();
  std::vector<int> stalling;
  for (int i = 0; i < 50; ++i) {
    stalling.push_back(ConnectAndSend(path_, i % 2 == 0 ? "" : "MUNGE:half a credential"));
    ASSERT_GE(stalling.back(), 0);
  }
  PlainCodec codec;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(SendRequest(path_, codec, {{"op", "status"}})["ok"]);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  for (int fd : stalling) {
    EXPECT_EQ(ReadToEnd(fd), "");  // closed by the server, without a word
    ::close(fd);
  }
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, SocketServer::kClientTimeout - std::chrono::milliseconds(100));
  EXPECT_LT(waited, SocketServer::kClientTimeout + std::chrono::seconds(2));
}

// An answer that needs Slurm comes later (AsyncHandler); meanwhile others are answered at once,
// and the waiting connection is not cut off by the client timeout (that one is for the client).
TEST_F(SocketServerTest, LateAnswerDoesNotHoldOthers) {
  SocketServer::Reply held;
  server_ = std::make_unique<SocketServer>(
      io_, path_, [&](const std::string& line, SocketServer::Reply reply) {
        if (line == "wait") held = std::move(reply);
        else reply(OkResponse({{"echo", line}}));
      });
  server_->Start();
  thread_ = std::thread([this] { io_.run(); });
  int waiting = ConnectAndSend(path_, "wait\n");
  ASSERT_GE(waiting, 0);
  PlainCodec codec;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(SendRequest(path_, codec, {{"op", "status"}})["ok"]);
  std::this_thread::sleep_for(SocketServer::kClientTimeout + std::chrono::milliseconds(500));
  boost::asio::post(io_, [&] {
    held(OkResponse({{"late", true}}));
    held = nullptr;  // the session goes on the io thread, like every other
  });
  EXPECT_EQ(ReadToEnd(waiting), "{\"late\":true,\"ok\":true}\n");
  ::close(waiting);
}

// One uid may hold only so many connections: past that, a new one is told why and closed at
// once, so one user's silent connections cannot use up elasticd's fds and lock others out.
// A connection the client closes frees its place at once.
TEST_F(SocketServerTest, ConnectionsPerUserAreCapped) {
  server_ = std::make_unique<SocketServer>(
      io_, path_, [](const std::string& line) { return OkResponse({{"echo", line}}); },
      /*max_connections_per_user=*/4);
  server_->Start();
  thread_ = std::thread([this] { io_.run(); });
  std::vector<int> silent;
  for (int i = 0; i < 4; ++i) silent.push_back(ConnectAndSend(path_, ""));
  int refused = ConnectAndSend(path_, "");
  ASSERT_GE(refused, 0);
  const std::string refusal = ReadToEnd(refused);
  ::close(refused);
  EXPECT_NE(refusal.find("too many connections from uid " + std::to_string(::getuid()) +
                         " (at most 4 at once)"),
            std::string::npos)
      << refusal;

  ::close(silent.back());
  silent.pop_back();
  PlainCodec codec;
  bool answered = false;
  for (int i = 0; i < 50 && !answered; ++i) {  // until the server has seen the close
    answered = SendRequest(path_, codec, {{"op", "status"}}).value("ok", false);
    if (!answered) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(answered);
  for (int fd : silent) ::close(fd);
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

// The client side: a peer that accepts and never answers costs the caller its deadline, then a
// clear error, never a hang (a supervisor's loop must keep forwarding its step's output).
TEST(SendRequest, APeerThatNeverAnswersTimesOut) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "mute.sock").string();
  int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 4), 0);  // the kernel completes the connect; nobody reads
  PlainCodec codec;
  const auto start = std::chrono::steady_clock::now();
  try {
    SendRequest(path, codec, {{"op", "status"}}, std::chrono::milliseconds(300));
    ADD_FAILURE() << "a mute peer must not produce a reply";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("did not answer within 300 ms"), std::string::npos)
        << e.what();
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(waited, 0.29);
  EXPECT_LT(waited, 10.0);
  ::close(listener);
}

}  // namespace
}  // namespace elastic::daemon

// SocketServer over a real UNIX socket with a pass-through codec (no munged needed here; the
// MUNGE path is covered by the integration test against a real munged).
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

// Connects and sends `text` (nothing if empty); returns the fd, left open (reads on it give up
// after 10 s, so a bug fails the test instead of hanging it).
int ConnectAndSend(const std::string& path, const std::string& text) {
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
std::string ReadToEnd(int fd) {
  std::string text;
  char buffer[256];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  return text;
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

// A connected socket whose reads and writes give up after 10 s (a bug fails the test instead of
// hanging it); -1 if the server does not accept.
int Connect(const std::string& path) {
  int fd = ConnectAndSend(path, "");
  if (fd >= 0) {
    timeval timeout{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  }
  return fd;
}

// Sends what the peer takes (no SIGPIPE once it has closed).
void SendAll(int fd, const std::string& text) {
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

Received ReadUntilClosed(int fd) {
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

// The credential line is read into a buffer of kMaxRequestLineBytes: a line that does not fit
// (newline included) is answered with the limit and the connection closed, never handled.
TEST_F(SocketServerTest, ALineOver64KiBIsAnsweredWithTheLimitAndClosed) {
  std::atomic<int> handled{0};
  server_ = std::make_unique<SocketServer>(io_, path_, [&](const std::string& line) {
    ++handled;
    return OkResponse({{"bytes", line.size()}});
  });
  server_->Start();
  thread_ = std::thread([this] { io_.run(); });
  const std::string refusal = ErrorResponse("request line longer than 65536 bytes") + "\n";
  ASSERT_EQ(kMaxRequestLineBytes, 65'536u);

  int fd = Connect(path_);
  ASSERT_GE(fd, 0);
  SendAll(fd, std::string(kMaxRequestLineBytes - 1, 'a') + "\n");  // exactly fits
  Received at_limit = ReadUntilClosed(fd);
  ::close(fd);
  EXPECT_EQ(at_limit.text, OkResponse({{"bytes", kMaxRequestLineBytes - 1}}) + "\n");
  EXPECT_EQ(handled.load(), 1);

  for (const std::string& line : {std::string(kMaxRequestLineBytes, 'a') + "\n",
                                  std::string(4 * kMaxRequestLineBytes, 'a')}) {
    fd = Connect(path_);
    ASSERT_GE(fd, 0);
    SendAll(fd, line);
    Received over = ReadUntilClosed(fd);
    ::close(fd);
    EXPECT_EQ(over.text, refusal) << line.size() << " bytes";
    EXPECT_TRUE(over.closed) << line.size() << " bytes";
  }
  EXPECT_EQ(handled.load(), 1);
}

// A client that sends its line and then does not read the reply holds elasticd's fd and its
// place under the per-uid cap only until the client timeout (5 s; shortened here): the reply is
// cut off and the connection closed.
TEST_F(SocketServerTest, AClientThatDoesNotTakeItsReplyIsCutOffAfterTheTimeout) {
  EXPECT_EQ(SocketServer::kClientTimeout, std::chrono::seconds(5));
  const std::string big(8 << 20, 'x');  // far more than the socket buffers hold
  server_ = std::make_unique<SocketServer>(
      io_, path_,
      [&](const std::string& line) {
        return line == "big" ? OkResponse({{"big", big}}) : OkResponse({{"echo", line}});
      },
      /*max_connections_per_user=*/1, /*client_timeout=*/std::chrono::milliseconds(200));
  server_->Start();
  thread_ = std::thread([this] { io_.run(); });
  int fd = Connect(path_);
  ASSERT_GE(fd, 0);
  SendAll(fd, "big\n");
  std::this_thread::sleep_for(std::chrono::seconds(2));  // ten times the timeout
  Received cut = ReadUntilClosed(fd);
  ::close(fd);
  EXPECT_TRUE(cut.closed);
  EXPECT_GT(cut.text.size(), 0u);
  EXPECT_LT(cut.text.size(), big.size()) << "the whole reply waited for the client";
  // Its place under the cap (1 here) is free again.
  PlainCodec codec;
  bool answered = false;
  for (int i = 0; i < 50 && !answered; ++i) {  // until the server has let the session go
    answered = SendRequest(path_, codec, {{"op", "status"}}).value("ok", false);
    if (!answered) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(answered);
}

std::size_t OpenFds() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++count;
  }
  return count;
}

// The cap elasticd runs with (the default) is 512 connections per uid, and a burst of refused
// connections is logged once, not once per connection; a later burst is logged again.
TEST_F(SocketServerTest, TheDefaultCapIs512AndEachBurstIsLoggedOnce) {
  EXPECT_EQ(SocketServer::kMaxConnectionsPerUser, 512u);
  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_cur < 1'200) {  // 512 client ends and 512 server ends in this process
    if (files.rlim_max < 1'200) GTEST_SKIP() << "needs 1200 open files, hard limit is lower";
    files.rlim_cur = 1'200;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &files), 0);
  }
  ::testing::internal::CaptureStderr();  // elasticd logs to stderr unless OpenLog named a file
  StartServer();  // the default cap and client timeout
  const std::string refusal = "too many connections from uid " + std::to_string(::getuid()) +
                              " (at most 512 at once)";
  PlainCodec codec;
  const std::size_t fds_before = OpenFds();
  for (int refused_per_burst : {3, 2}) {
    std::vector<int> silent;
    for (int i = 0; i < 512; ++i) {
      silent.push_back(Connect(path_));
      ASSERT_GE(silent.back(), 0);
    }
    for (int i = 0; i < refused_per_burst; ++i) {
      int fd = Connect(path_);
      ASSERT_GE(fd, 0);
      Received refused = ReadUntilClosed(fd);
      ::close(fd);
      EXPECT_NE(refused.text.find(refusal), std::string::npos) << refused.text;
    }
    for (int fd : silent) ::close(fd);
    // The burst is over once the server has closed its ends too (then the cancelled timers,
    // queued before any later connection, end the sessions).
    for (int i = 0; i < 1'000 && OpenFds() > fds_before; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(OpenFds(), fds_before);
    EXPECT_TRUE(SendRequest(path_, codec, {{"op", "status"}}).value("ok", false));
  }
  io_.stop();
  thread_.join();
  const std::string log = ::testing::internal::GetCapturedStderr();
  const std::string line = "uid " + std::to_string(::getuid()) +
                           " holds 512 connections: refusing more";
  std::size_t lines = 0;
  for (std::size_t at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 2u) << log;  // five refusals in two bursts
}

// The socket's directory, and any missing one above it, is created 0755 whatever elasticd's
// umask: a group- or world-writable one would let a user put their own socket in its place.
TEST_F(SocketServerTest, MissingDirectoriesAreCreated0755WhateverTheUmask) {
  for (mode_t mask : {0000, 0002, 0077}) {
    const std::filesystem::path top = dir_.path() / ("umask" + std::to_string(mask));
    const std::string path = (top / "run" / "elasticd" / "elasticd.sock").string();
    const mode_t old_mask = ::umask(mask);
    boost::asio::io_context io;
    {
      SocketServer server(io, path, [](const std::string&) { return std::string(); });
      server.Start();
    }
    ::umask(old_mask);
    for (const std::filesystem::path& dir : {top, top / "run", top / "run" / "elasticd"}) {
      struct stat st {};
      ASSERT_EQ(::stat(dir.c_str(), &st), 0) << dir;
      EXPECT_EQ(st.st_mode & 07777, 0755u) << dir << " under umask 0" << std::oct << mask;
    }
  }
}

// Whatever sits at the socket path and is not a socket (a file, a FIFO, a directory) is left as
// it is: start-up fails, it is not removed, opened or replaced.
TEST_F(SocketServerTest, NeverReplacesSomethingThatIsNotASocket) {
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  std::filesystem::create_directories(parent);
  auto expect_refused = [&](const char* what) {
    boost::asio::io_context io;
    SocketServer server(io, path_, [](const std::string&) { return std::string(); });
    try {
      server.Start();
      ADD_FAILURE() << "started over a " << what;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()),
                path_ + " exists and is not a socket: refusing to replace it") << what;
    }
  };
  dir_.Write("run/elasticd.sock", "an admin's file\n");
  ::chmod(path_.c_str(), 0640);
  expect_refused("regular file");
  struct stat st {};
  ASSERT_EQ(::lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  std::ifstream file(path_);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(file), {}), "an admin's file\n");

  std::filesystem::remove(path_);
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  expect_refused("FIFO");  // would block here if it were opened
  ASSERT_EQ(::lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));

  std::filesystem::remove(path_);
  std::filesystem::create_directory(path_);
  dir_.Write("run/elasticd.sock/inside", "x");
  expect_refused("directory");
  EXPECT_TRUE(std::filesystem::exists(path_ + "/inside"));
}

// Out of fds, accept fails (EMFILE) and the client stays queued in the kernel. The server tries
// again every 100 ms rather than at once (which spun a core while nothing could free an fd), and
// answers the client once an fd is free.
TEST_F(SocketServerTest, AcceptFailuresAreRetriedWithoutSpinning) {
  StartServer();
  int client = ::socket(AF_UNIX, SOCK_STREAM, 0);  // before the limit: connect needs no new fd
  ASSERT_GE(client, 0);
  timeval timeout{10, 0};
  ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path_.c_str());
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int lowest_free = ::dup(client);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  rlimit no_more = saved;
  no_more.rlim_cur = static_cast<rlim_t>(lowest_free);  // every fd below is in use
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &no_more), 0);
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  const int connected =
      ::connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address);
  const ssize_t sent = connected == 0 ? ::write(client, "status\n", 7) : -1;
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the server fails to accept meanwhile
  ::getrusage(RUSAGE_SELF, &after);
  char byte = 0;
  const ssize_t early = ::recv(client, &byte, 1, MSG_DONTWAIT);  // not accepted: no answer yet
  const int early_errno = errno;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_EQ(connected, 0);
  ASSERT_EQ(sent, 7);
  ASSERT_EQ(early, -1) << "answered while out of fds: the test did not exhaust them";
  ASSERT_EQ(early_errno, EAGAIN);
  auto cpu = [](const rusage& r) {
    return std::chrono::seconds(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
           std::chrono::microseconds(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
  };
  // Twenty retries cost about a millisecond; spinning burnt 400 ms of the 2 s even on a loaded
  // two-core machine (hundreds of thousands of accept calls).
  EXPECT_LT(cpu(after) - cpu(before), std::chrono::milliseconds(100));
  Received reply = ReadUntilClosed(client);
  ::close(client);
  EXPECT_EQ(reply.text, OkResponse({{"echo", "status"}}) + "\n");
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

// SocketServer limits over a real UNIX socket: the request-line cap, the reply timeout, the
// per-uid connection cap, directory modes, never replacing a non-socket, accept back-off.

#include "tests/unit/daemon/socket_server_fixture.h"

namespace elastic::daemon {
namespace {

using namespace socket_test;

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

}  // namespace
}  // namespace elastic::daemon

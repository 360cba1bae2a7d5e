// The client side of elasticd's socket trusts only a server run by root (elasticd) or by the
// caller itself: a socket of another user at the path gets neither the credential nor a say (W10).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "protocol/client.h"
#include "tests/common/temp_dir.h"

namespace elastic::daemon {
namespace {

class MarkedCodec : public CredentialCodec {
 public:
  std::string Encode(const std::string& payload, std::string&) override {
    return "CREDENTIAL:" + payload;
  }
  Authenticated Decode(const std::string&) override { return {}; }
};

// A server run as `uid`, as a child process: listens at `path`, answers one connection with a
// made-up success, and exits with the number of bytes it was sent (capped at 255).
pid_t StartServerAs(uid_t uid, const std::string& path, int& ready_fd) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t pid = fork();
  if (pid != 0) {
    close(ready[1]);
    ready_fd = ready[0];
    return pid;
  }
  close(ready[0]);
  if (setgid(uid) != 0 || setuid(uid) != 0) _exit(254);
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd, 4) != 0) {
    _exit(253);
  }
  if (write(ready[1], "R", 1) != 1) _exit(252);
  const int client = accept(fd, nullptr, nullptr);
  const char answer[] = "{\"ok\":true,\"jobs\":[],\"fake\":true}\n";
  // The client may have hung up already (it should have): no SIGPIPE, no verdict from that.
  (void)send(client, answer, sizeof answer - 1, MSG_NOSIGNAL);
  std::size_t received = 0;
  char buffer[4096];
  pollfd wait{client, POLLIN, 0};
  while (poll(&wait, 1, 1000) == 1) {
    const ssize_t n = read(client, buffer, sizeof buffer);
    if (n <= 0) break;
    received += static_cast<std::size_t>(n);
  }
  _exit(static_cast<int>(std::min<std::size_t>(received, 255)));
}

TEST(ClientPeer, ASocketServedByAnotherUserGetsNoCredentialAndNoSay) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run a server as another uid";
  elastic::testing::TempDir dir;
  const std::filesystem::path open_dir = dir.path() / "world-writable";
  std::filesystem::create_directories(open_dir);
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  ASSERT_EQ(chmod(open_dir.c_str(), 01777), 0);
  const std::string path = (open_dir / "elasticd.sock").string();
  int ready = -1;
  const pid_t server = StartServerAs(65534, path, ready);
  ASSERT_GT(server, 0);
  char byte = 0;
  ASSERT_EQ(read(ready, &byte, 1), 1) << "the server as uid 65534 did not start";
  close(ready);

  MarkedCodec codec;
  try {
    nlohmann::json reply = SendRequest(path, codec, {{"op", "status"}});
    ADD_FAILURE() << "answered by another user's socket: " << reply.dump();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("refusing " + path +
                                         ": it is served by uid 65534, not "
                                         "by root"),
              std::string::npos)
        << e.what();
  }
  int status = 0;
  ASSERT_EQ(waitpid(server, &status, 0), server);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bytes of the request reached the other user's server";
}

}  // namespace
}  // namespace elastic::daemon

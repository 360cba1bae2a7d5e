// An owned POSIX file descriptor (closed on destruction, movable): the one fd owner of the tree,
// for root's fd-relative no-follow directory work and for files written or read by the agent.
#pragma once

#include <errno.h>
#include <unistd.h>

#include <utility>

namespace elastic {

// The destructor closes and ignores errors; call Close() where a failed close must be seen
// (after writing: NFS reports write errors there).
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = other.Release();
    }
    return *this;
  }

  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }
  // Gives up ownership without closing.
  int Release() { return std::exchange(fd_, -1); }
  // Closes now. Returns 0, or the errno of a failed close: Linux has closed the descriptor even
  // then, so it is never retried.
  int Close() {
    if (::close(Release()) != 0) return errno;
    return 0;
  }

 private:
  void Reset() {
    if (fd_ >= 0) ::close(Release());
  }

  int fd_;
};

}  // namespace elastic

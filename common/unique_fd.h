// An owned POSIX file descriptor (closed on destruction, movable), for the fd-relative,
// no-follow directory work that root code does in user-owned trees (the SPANK plugin's
// checkpoint directories, elasticd's cleanup). Header-only, no dependencies.
#pragma once

#include <unistd.h>

#include <utility>

namespace elastic {

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace elastic

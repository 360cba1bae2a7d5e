// UmaskScope: sets the process umask for a test's scope and restores it (file-mode tests).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

namespace elastic::test {

class UmaskScope {
 public:
  explicit UmaskScope(mode_t mask) : old_(::umask(mask)) {}
  ~UmaskScope() { ::umask(old_); }
  UmaskScope(const UmaskScope&) = delete;
  UmaskScope& operator=(const UmaskScope&) = delete;

 private:
  mode_t old_;
};

}  // namespace elastic::test

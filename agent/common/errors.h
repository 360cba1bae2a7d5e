// Typed errors of elastic-agent, so main (and later the supervisor) can tell a misuse from a
// failure. Error model: agent code throws these (LibTorch throws c10::Error, a std::exception);
// configuration problems throw elastic::ConfigError (common/toml_reader.h). main()
// maps UsageError and ConfigError to exit status 2 and everything else to 1; nothing escapes it.
#pragma once

#include <stdexcept>

namespace elastic::agent {

// The command line is wrong (unknown option, missing value): exit 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A dataset file is missing, unreadable or malformed; the message names the file: exit 1.
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Training cannot go on (a LibTorch failure, an impossible batch layout): exit 1.
class TrainingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace elastic::agent

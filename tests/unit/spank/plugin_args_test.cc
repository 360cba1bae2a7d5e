// Tests for the plugstack.conf arguments.
#include "spank/plugin_args.h"

#include <gtest/gtest.h>

namespace elastic::spank {
namespace {

TEST(PluginArgs, DefaultsArePinned) {
  auto parsed = ParsePluginArgs({});
  EXPECT_EQ(parsed.error, "");
  EXPECT_EQ(parsed.args.checkpoint_base, "/var/spool/slurm-elastic");
  EXPECT_EQ(parsed.args.elasticd_socket, "/run/elasticd/elasticd.sock");
}

TEST(PluginArgs, ReadsKnownKeys) {
  auto parsed = ParsePluginArgs({"checkpoint_base=/scratch/ckpt", "elasticd_socket=/tmp/e.sock"});
  EXPECT_EQ(parsed.error, "");
  EXPECT_EQ(parsed.args.checkpoint_base, "/scratch/ckpt");
  EXPECT_EQ(parsed.args.elasticd_socket, "/tmp/e.sock");
}

TEST(PluginArgs, InvalidInputTable) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"checkpoint_base", "elastic: plugstack argument \"checkpoint_base\": expected key=value"},
      {"ckpt=/x", "elastic: plugstack argument \"ckpt\": unknown key"},
      {"checkpoint_base=relative/dir", "expected an absolute path"},
      {"checkpoint_base=/a/../etc", "expected an absolute path"},
      {"checkpoint_base=/a/..", "expected an absolute path"},
      {"checkpoint_base=", "expected an absolute path"},
      {std::string("checkpoint_base=/a\nb"), "expected an absolute path"},
  };
  for (const auto& [arg, expected] : cases) {
    auto parsed = ParsePluginArgs({arg});
    EXPECT_NE(parsed.error.find(expected), std::string::npos) << arg << " gave: " << parsed.error;
  }
}

}  // namespace
}  // namespace elastic::spank

// Tests for the gres string -> GPU count parser (scheduler/slurm/gres.h): the forms Slurm prints,
// other gres ignored, and malformed text falling back to one device without a crash.
#include "scheduler/slurm/gres.h"

#include <gtest/gtest.h>

#include <string>

namespace elastic::slurm {
namespace {

TEST(ParseGpuCount, PlainTypedAndSocketSuffixed) {
  EXPECT_EQ(ParseGpuCount("gpu:4"), 4);
  EXPECT_EQ(ParseGpuCount("gpu:a100:4"), 4);
  EXPECT_EQ(ParseGpuCount("gpu:a100:4(S:0-1)"), 4);
  EXPECT_EQ(ParseGpuCount("gpu:2(S:0)"), 2);
  // A socket list with a comma inside the parentheses is one entry.
  EXPECT_EQ(ParseGpuCount("gpu:tesla:2(S:0,2),mps:100"), 2);
  // No count: Slurm's implied 1.
  EXPECT_EQ(ParseGpuCount("gpu"), 1);
  EXPECT_EQ(ParseGpuCount("gpu:a100"), 1);
  EXPECT_EQ(ParseGpuCount("gpu:0"), 0);
}

TEST(ParseGpuCount, SeveralTypesAreSummed) {
  EXPECT_EQ(ParseGpuCount("gpu:a100:2,gpu:v100:2"), 4);
  EXPECT_EQ(ParseGpuCount("gpu:a100:2(S:0),gpu:v100:1(S:1)"), 3);
}

TEST(ParseGpuCount, OtherGresAreIgnored) {
  EXPECT_EQ(ParseGpuCount("gpu:tesla:2,mps:100"), 2);
  EXPECT_EQ(ParseGpuCount("mps:100,gpu:8"), 8);
  EXPECT_EQ(ParseGpuCount("mps:100"), 0);
  EXPECT_EQ(ParseGpuCount("bandwidth:lustre:no_consume:4G"), 0);
  EXPECT_EQ(ParseGpuCount("gpus:4"), 0);  // another gres name, not "gpu"
  EXPECT_EQ(ParseGpuCount(""), 0);
  EXPECT_EQ(ParseGpuCount("(null)"), 0);
}

TEST(ParseGpuCount, MalformedTextIsRejected) {
  for (const char* bad : {"gpu:4,", ",gpu:4", "gpu::4", "gpu:4(S:0", "gpu:4)S:0(", "gpu:4(S:(0))",
                          "gpu:4(S:0)x", "gpu: 4", "gpu:4;rm -rf", ":4", "gpu:99999999999999",
                          "gpu:a100:2,gpu:v100:1x,", "\n", "gpu:\xff"}) {
    EXPECT_EQ(ParseGpuCount(bad), std::nullopt) << "\"" << bad << "\"";
  }
  // More than kMaxGpusPerNode, alone or summed, is not believed.
  EXPECT_EQ(ParseGpuCount("gpu:" + std::to_string(kMaxGpusPerNode)), kMaxGpusPerNode);
  EXPECT_EQ(ParseGpuCount("gpu:" + std::to_string(kMaxGpusPerNode + 1)), std::nullopt);
  EXPECT_EQ(ParseGpuCount("gpu:a:1000,gpu:b:1000"), std::nullopt);
  EXPECT_EQ(ParseGpuCount("gpu:2147483647,gpu:2147483647"), std::nullopt);
}

TEST(NodeDevices, GpusElseOne) {
  EXPECT_EQ(NodeDevices("gpu:a100:4(S:0-1)"), 4);
  EXPECT_EQ(NodeDevices("gpu:a100:2,gpu:v100:2"), 4);
  EXPECT_EQ(NodeDevices(nullptr), 1);
  EXPECT_EQ(NodeDevices(""), 1);
  EXPECT_EQ(NodeDevices("(null)"), 1);
  EXPECT_EQ(NodeDevices("mps:100"), 1);
  EXPECT_EQ(NodeDevices("gpu:0"), 1);
  EXPECT_EQ(NodeDevices("gpu::4"), 1);  // malformed: the fallback
  EXPECT_EQ(NodeDevices("gpu:4(S:0"), 1);
}

}  // namespace
}  // namespace elastic::slurm

namespace elastic::slurm {
namespace {

// The node type elasticd's [node_types] reads: the first typed GPU entry's type.
TEST(GpuType, TheFirstTypedGpuEntry) {
  EXPECT_EQ(GpuType("gpu:a100:4(S:0-1)"), "a100");
  EXPECT_EQ(GpuType("gpu:a100"), "a100");
  EXPECT_EQ(GpuType("mps:100,gpu:h100:8"), "h100");
  EXPECT_EQ(GpuType("gpu:a100:2,gpu:v100:2"), "a100");
  EXPECT_EQ(GpuType("gpu:4"), "");
  EXPECT_EQ(GpuType("gpu"), "");
  EXPECT_EQ(GpuType(""), "");
  EXPECT_EQ(GpuType("(null)"), "");
  EXPECT_EQ(GpuType("gpu:a100:4,gpu:b:(S:0"), "");  // malformed anywhere: no type
  EXPECT_EQ(GpuType("gpu:a1 00:4"), "");
}

}  // namespace
}  // namespace elastic::slurm

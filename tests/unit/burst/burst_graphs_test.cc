// The benchmark's layer graphs (bench/burst_graphs.cc) match torchvision's architectures and
// plan cleanly.
#include "bench/burst_graphs.h"

#include <gtest/gtest.h>

#include <limits>

#include "perf/burst/layer_graph.h"
#include "perf/burst/burst_split.h"

namespace elastic::bench {
namespace {

const burst::NetworkModel kNet{25e9, 10e-6};

TEST(BurstGraphs, ParameterCountsMatchTorchvision) {
  EXPECT_EQ(ParameterCount(Vgg16(8, kNet)), 138'357'544);
  EXPECT_EQ(ParameterCount(WideResNet101_2(8, kNet)), 126'886'696);
  EXPECT_EQ(ParameterCount(InceptionV3(8, kNet)), 23'834'568);  // without the aux classifier
}

TEST(BurstGraphs, ShapesAndBlocks) {
  struct Case {
    burst::ModelProfile profile;
    size_t layers;
    size_t blocks;
  };
  // VGG-16: 13 conv + 5 pool + 3 fc. WRN-101-2: stem conv + pool, 33 bottlenecks of 3 convs +
  // add, 4 projections, avgpool + fc. Inception-v3: 11 modules + 4 inner 1x3/3x1 concats.
  for (const Case& c : {Case{Vgg16(8, kNet), 21, 0}, Case{WideResNet101_2(8, kNet), 140, 33},
                        Case{InceptionV3(8, kNet), 124, 15}}) {
    SCOPED_TRACE(c.profile.name);
    EXPECT_EQ(burst::ValidateProfile(c.profile), "");
    EXPECT_EQ(c.profile.layers.size(), c.layers);
    Result<burst::Decomposition> d = burst::DecomposeGraph(c.profile);
    ASSERT_EQ(d.error, "");
    EXPECT_EQ(d->blocks.size(), c.blocks);
    EXPECT_EQ(c.profile.layers.back().output_bytes_per_sample, 1000 * 4.0);  // 1,000 logits
  }
  // Inception-v3's last module sees 2,048 channels at 8x8.
  burst::ModelProfile inception = InceptionV3(8, kNet);
  EXPECT_EQ(inception.layers[inception.layers.size() - 3].output_bytes_per_sample,
            2048 * 8 * 8 * 4.0);
}

TEST(BurstGraphs, PlansAreNoWorseThanUniform) {
  for (const burst::ModelProfile& profile :
       {Vgg16(64, kNet), WideResNet101_2(64, kNet), InceptionV3(64, kNet)}) {
    for (double limit : {1.5, 3.0, std::numeric_limits<double>::infinity()}) {
      burst::BurstSplitOptions options;
      options.gpus = 8;
      options.amp_limit = limit;
      Result<burst::BurstSplit> split = burst::SplitForBurst(profile, options);
      Result<burst::BurstSplit> uniform = burst::BestUniformSplit(profile, options);
      ASSERT_TRUE(split && uniform) << split.error;
      EXPECT_LE(split->cost.iteration_s, uniform->cost.iteration_s * (1 + 1e-9));
      EXPECT_LE(split->cost.max_layer_amplification, limit * (1 + 1e-9));
    }
  }
}

}  // namespace
}  // namespace elastic::bench

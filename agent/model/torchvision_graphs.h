// torchvision's VGG-16, WideResNet-101-2 and Inception-v3 (without the auxiliary head) as layer
// graphs (agent/model/layer_graph_model.h). Parameter counts at 1000 classes: 138,357,544 /
// 126,886,696 / 23,834,568, as torchvision's.
#pragma once

#include <cstdint>
#include <memory>

#include "agent/model/layer_graph_model.h"

namespace elastic::agent {

// Adaptive average pooling to 7x7 before the classifier (folded into fc6), as torchvision.
std::shared_ptr<LayerGraphModel> MakeVgg16Graph(int64_t classes);
std::shared_ptr<LayerGraphModel> MakeWideResNet101_2Graph(int64_t classes);
std::shared_ptr<LayerGraphModel> MakeInceptionV3Graph(int64_t classes);

}  // namespace elastic::agent

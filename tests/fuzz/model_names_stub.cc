// The model registry's name checks for the job config fuzzer, without LibTorch: the real
// registry (agent/model/registry.cc) constructs models and so links LibTorch. Keep the names in
// step with its kModels table.
#include <string_view>

#include "agent/model/registry.h"

namespace elastic::agent {

bool IsKnownModel(std::string_view name) { return name == "fmnist_cnn"; }
std::string_view KnownModelNames() { return "fmnist_cnn"; }

}  // namespace elastic::agent

// ParamsSha256 over named_parameters().
#include "agent/train/params_digest.h"

#include <torch/torch.h>

#include <bit>

#include "agent/common/sha256.h"

namespace elastic::agent {

// The contract says little-endian bytes; hashing memory directly is only that on such hosts.
static_assert(std::endian::native == std::endian::little,
              "params_sha256 hashes native float bytes: add a byte swap for big-endian hosts");

namespace {

void HashParameters(const torch::nn::Module& module, Sha256& sha) {
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    torch::Tensor values = item.value().detach().to(torch::kCPU, torch::kFloat32).contiguous();
    sha.Update(values.data_ptr<float>(), static_cast<std::size_t>(values.numel()) * sizeof(float));
  }
}

}  // namespace

std::string ParamsSha256(const torch::nn::Module& module) {
  Sha256 sha;
  HashParameters(module, sha);
  for (const auto& item : module.named_buffers(/*recurse=*/true)) {
    torch::Tensor values = item.value().detach().to(torch::kCPU).contiguous();
    sha.Update(values.data_ptr(), values.nbytes());
  }
  return sha.HexDigest();
}

std::string ParametersOnlySha256(const torch::nn::Module& module) {
  Sha256 sha;
  HashParameters(module, sha);
  return sha.HexDigest();
}

}  // namespace elastic::agent

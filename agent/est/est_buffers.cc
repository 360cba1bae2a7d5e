// Per-EST buffer copies: adopt, load, scope, and their checkpoint bytes.
#include "agent/est/est_buffers.h"

#include <torch/torch.h>

#include <cstring>

namespace elastic::agent {
namespace {

void CopyInto(const std::vector<torch::Tensor>& to, const std::vector<torch::Tensor>& from) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < to.size(); ++i) to[i].copy_(from[i]);
}

}  // namespace

void AdoptModelBuffers(const torch::nn::Module& model, std::vector<EstContext>& ests) {
  const std::vector<torch::Tensor> buffers = model.buffers();
  for (EstContext& est : ests) {
    est.buffers.clear();
    for (const torch::Tensor& buffer : buffers) est.buffers.push_back(buffer.detach().clone());
  }
}

void LoadEstBuffers(torch::nn::Module& model, const EstContext& est) {
  if (est.buffers.empty()) return;
  CopyInto(model.buffers(), est.buffers);
}

EstBufferScope::EstBufferScope(torch::nn::Module& model, EstContext& est)
    : model_(model), est_(est) {
  LoadEstBuffers(model_, est_);
}

EstBufferScope::~EstBufferScope() {
  if (est_.buffers.empty()) return;
  CopyInto(est_.buffers, model_.buffers());
}

std::string BuffersToBytes(const std::vector<torch::Tensor>& buffers) {
  std::string bytes;
  for (const torch::Tensor& buffer : buffers) {
    const torch::Tensor cpu = buffer.detach().to(torch::kCPU).contiguous();
    bytes.append(static_cast<const char*>(cpu.data_ptr()), cpu.nbytes());
  }
  return bytes;
}

bool BuffersFromBytes(std::string_view bytes, const std::vector<torch::Tensor>& like,
                      std::vector<torch::Tensor>& out) {
  std::size_t expected = 0;
  for (const torch::Tensor& buffer : like) expected += buffer.nbytes();
  if (bytes.size() != expected) return false;
  out.clear();
  std::size_t at = 0;
  for (const torch::Tensor& buffer : like) {
    torch::Tensor value = torch::empty(buffer.sizes(), buffer.options().device(torch::kCPU));
    std::memcpy(value.data_ptr(), bytes.data() + at, value.nbytes());
    at += value.nbytes();
    out.push_back(value.to(buffer.device()));
  }
  return true;
}

}  // namespace elastic::agent

// AppendTensor / MessageReader: the rank-to-rank tensor format.
#include "agent/plan/tensor_message.h"

#include <torch/torch.h>

#include <cstring>
#include <utility>

#include "agent/common/errors.h"

namespace elastic::agent {

void AppendTensor(std::vector<std::uint8_t>& out, const torch::Tensor& tensor) {
  const torch::Tensor values = tensor.contiguous();
  auto put = [&out](std::int64_t v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof v);
  };
  put(static_cast<std::int64_t>(values.scalar_type()));
  put(values.dim());
  for (std::int64_t d : values.sizes()) put(d);
  const auto* data = static_cast<const std::uint8_t*>(values.data_ptr());
  out.insert(out.end(), data, data + values.nbytes());
}

torch::Tensor MessageReader::NextTensor() {
  const auto type = static_cast<torch::ScalarType>(Get());
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(Get()));
  for (std::int64_t& d : sizes) d = Get();
  torch::Tensor tensor = torch::empty(sizes, torch::TensorOptions().dtype(type));
  Take(tensor.data_ptr(), tensor.nbytes());
  return tensor;
}

std::int64_t MessageReader::Get() {
  std::int64_t v = 0;
  Take(&v, sizeof v);
  return v;
}

void MessageReader::Take(void* to, std::size_t n) {
  if (at_ + n > bytes_.size()) throw TrainingError(what_ + " is truncated");
  std::memcpy(to, bytes_.data() + at_, n);
  at_ += n;
}

}  // namespace elastic::agent

// The byte format of tensors sent between ranks by the pipeline and burst plans
// (Communicator::Send/Receive): per tensor its dtype code, rank, sizes, then its bytes. Exact:
// bytes move unchanged, so what a rank receives is bitwise what the sender held.
#pragma once

#include <torch/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace elastic::agent {

// Appends `tensor` (made contiguous) to `out`.
void AppendTensor(std::vector<std::uint8_t>& out, const torch::Tensor& tensor);

// Reads tensors back in the order they were appended. Throws TrainingError naming `what` (e.g.
// "pipeline: a message between stages") when the message is truncated.
class MessageReader {
 public:
  MessageReader(std::vector<std::uint8_t> bytes, std::string what)
      : bytes_(std::move(bytes)), what_(std::move(what)) {}
  torch::Tensor NextTensor();

 private:
  std::int64_t Get();
  void Take(void* to, std::size_t n);
  std::vector<std::uint8_t> bytes_;
  std::string what_;
  std::size_t at_ = 0;
};

}  // namespace elastic::agent

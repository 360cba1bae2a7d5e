// Megatron's f and g as LibTorch autograd Functions.
#include "agent/model/tensor_parallel_layers.h"

#include <torch/torch.h>

namespace elastic::agent {
namespace {

// The shard travels into backward through a capsule (autograd's saved_data holds IValues).
struct ShardHolder : torch::CustomClassHolder {
  explicit ShardHolder(TensorParallelShard s) : shard(std::move(s)) {}
  TensorParallelShard shard;
};

const TensorParallelShard& SavedShard(torch::autograd::AutogradContext* ctx) {
  auto holder =
      c10::static_intrusive_pointer_cast<ShardHolder>(ctx->saved_data["shard"].toCapsule());
  return holder->shard;
}

// f: identity forward; the input's gradient is the sum of every rank's partial gradient.
class CopyToRegion : public torch::autograd::Function<CopyToRegion> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& input,
                               const c10::intrusive_ptr<ShardHolder>& shard) {
    ctx->saved_data["shard"] = c10::IValue::make_capsule(shard);
    // A view would make autograd treat it as an in-place alias; a clone keeps it a new tensor.
    return input.clone();
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    return {SavedShard(ctx).all_reduce(grads[0].contiguous()), torch::Tensor()};
  }
};

// g: the sum of every rank's partial output forward; identity backward.
class ReduceFromRegion : public torch::autograd::Function<ReduceFromRegion> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx,
                               const torch::Tensor& partial,
                               const c10::intrusive_ptr<ShardHolder>& shard) {
    (void)ctx;
    return shard->shard.all_reduce(partial.contiguous());
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    (void)ctx;
    return {grads[0], torch::Tensor()};
  }
};

}  // namespace

torch::Tensor CopyToTensorParallel(const torch::Tensor& input, const TensorParallelShard& shard) {
  if (shard.size == 1) return input;
  return CopyToRegion::apply(input, c10::make_intrusive<ShardHolder>(shard));
}

torch::Tensor ReduceFromTensorParallel(const torch::Tensor& partial,
                                       const TensorParallelShard& shard) {
  if (shard.size == 1) return partial;
  return ReduceFromRegion::apply(partial, c10::make_intrusive<ShardHolder>(shard));
}

torch::Tensor ChunkOf(const torch::Tensor& param, std::int64_t dim,
                      const TensorParallelShard& shard) {
  if (shard.size == 1) return param;
  const std::int64_t chunk = param.size(dim) / shard.size;
  return param.narrow(dim, shard.rank * chunk, chunk);
}

}  // namespace elastic::agent

// ForwardWithRecomputation: a custom autograd Function that reruns a block in the backward pass.
#include "agent/plan/grad_checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <mutex>
#include <vector>

#include "agent/model/model.h"

namespace elastic::agent {
namespace {

// The generators a block's dropout can draw from: the CPU's default one, and the device's
// default one when the block runs on a GPU (device.h seeds it per EST).
std::vector<at::Generator> BlockGenerators(const torch::Device& device) {
  std::vector<at::Generator> generators{at::detail::getDefaultCPUGenerator()};
  if (!device.is_cpu()) generators.push_back(at::globalContext().defaultGenerator(device));
  return generators;
}

std::vector<torch::Tensor> GeneratorStates(const torch::Device& device) {
  std::vector<torch::Tensor> states;
  for (at::Generator generator : BlockGenerators(device)) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    states.push_back(generator.get_state());
  }
  return states;
}

void SetGeneratorStates(const torch::Device& device, const std::vector<torch::Tensor>& states) {
  std::vector<at::Generator> generators = BlockGenerators(device);
  for (std::size_t i = 0; i < generators.size(); ++i) {
    std::lock_guard<std::mutex> lock(generators[i].mutex());
    generators[i].set_state(states[i]);
  }
}

// What the backward pass needs to run a block again: which block of which model, and the
// generators' states when the block first ran (the EST's streams, EstRngScope).
struct BlockCall : torch::CustomClassHolder {
  BlockCall(Model* m, std::int64_t i, torch::Device d) : model(m), index(i), device(d) {}
  Model* model;
  std::int64_t index;
  torch::Device device;
  std::vector<torch::Tensor> rng_states;
};

// While alive, the generators replay `call`'s states; afterwards they continue from where they
// were.
class RngReplay {
 public:
  explicit RngReplay(const BlockCall& call)
      : device_(call.device), resume_(GeneratorStates(call.device)) {
    SetGeneratorStates(device_, call.rng_states);
  }
  ~RngReplay() { SetGeneratorStates(device_, resume_); }
  RngReplay(const RngReplay&) = delete;
  RngReplay& operator=(const RngReplay&) = delete;

 private:
  torch::Device device_;
  std::vector<torch::Tensor> resume_;
};

// While alive, the model's buffers may change (a BatchNorm in training mode updates its running
// statistics on every forward pass); afterwards they are as before: the block's first run
// already updated them, as the plain forward pass does once.
class BufferReplay {
 public:
  explicit BufferReplay(torch::nn::Module& model) : model_(model) {
    for (const torch::Tensor& buffer : model_.buffers()) saved_.push_back(buffer.clone());
  }
  ~BufferReplay() {
    torch::NoGradGuard no_grad;
    const std::vector<torch::Tensor> buffers = model_.buffers();
    for (std::size_t i = 0; i < saved_.size(); ++i) buffers[i].copy_(saved_[i]);
  }
  BufferReplay(const BufferReplay&) = delete;
  BufferReplay& operator=(const BufferReplay&) = delete;

 private:
  torch::nn::Module& model_;
  std::vector<torch::Tensor> saved_;
};

class RecomputedBlock : public torch::autograd::Function<RecomputedBlock> {
 public:
  // Function::apply runs this with grad mode off: the block keeps no activations. The block's
  // parameters are inputs only so that the graph has edges to them (a first block, whose input
  // is data, would otherwise never be reached by the backward pass).
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& input,
                               at::TensorList params, const c10::intrusive_ptr<BlockCall>& call) {
    call->rng_states = GeneratorStates(call->device);
    ctx->save_for_backward({input});
    ctx->saved_data["call"] = c10::IValue::make_capsule(call);
    (void)params;
    return call->model->ForwardBlock(call->index, input);
  }

  // Gradients for (input, params..., call): the block rerun with grad enabled on a detached copy
  // of its input, then differentiated with the incoming gradient.
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    auto call = c10::static_intrusive_pointer_cast<BlockCall>(ctx->saved_data["call"].toCapsule());
    const torch::Tensor input = ctx->get_saved_variables()[0];
    const bool input_grad = ctx->needs_input_grad(0);
    // Without GC the first block's input (data) needs no gradient and its kernels skip that
    // output; requires_grad only where the plain graph had it keeps the same kernels.
    torch::Tensor x = input.detach().requires_grad_(input_grad);
    torch::Tensor out;
    // Until the gradient below is taken: the recomputed graph saved the buffers it read (batch
    // norm's running statistics), so they may change back only after it ran.
    BufferReplay buffers(*call->model);
    {
      RngReplay replay(*call);
      torch::AutoGradMode enable(true);
      out = call->model->ForwardBlock(call->index, x);
    }
    const std::vector<torch::Tensor> params = call->model->BlockParameters(call->index);
    std::vector<torch::Tensor> wrt;
    if (input_grad) wrt.push_back(x);
    wrt.insert(wrt.end(), params.begin(), params.end());
    std::vector<torch::Tensor> grads = torch::autograd::grad(
        {out}, wrt, {grad_outputs[0]}, /*retain_graph=*/false, /*create_graph=*/false,
        /*allow_unused=*/true);
    torch::autograd::variable_list result;
    result.push_back(input_grad ? grads[0] : torch::Tensor());
    result.insert(result.end(), grads.begin() + (input_grad ? 1 : 0), grads.end());
    result.emplace_back();  // `call` is not a tensor
    return result;
  }
};

}  // namespace

torch::Tensor ForwardWithRecomputation(Model& model, const torch::Tensor& input) {
  torch::Tensor x = input;
  const std::int64_t last = model.BlockCount() - 1;
  for (std::int64_t block = 0; block < last; ++block) {
    const std::vector<torch::Tensor> params = model.BlockParameters(block);
    x = RecomputedBlock::apply(x, at::TensorList(params),
                               c10::make_intrusive<BlockCall>(&model, block, input.device()));
  }
  return model.ForwardBlock(last, x);
}

}  // namespace elastic::agent

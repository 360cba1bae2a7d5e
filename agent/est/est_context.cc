// EST seeds and swapping EST streams into LibTorch's default generator.
#include "agent/est/est_context.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <mutex>
#include <random>

namespace elastic::agent {
namespace {

// Distinguishes EST streams from the sample-order streams, which seed_seq also derives from the
// job seed (data/sample_order.cc).
constexpr std::uint32_t kEstStreamTag = 0x45535400;  // "EST\0"

torch::Tensor GetDefaultState() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

void SetDefaultState(const torch::Tensor& state) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

}  // namespace

std::uint64_t EstSeed(std::uint64_t job_seed, std::int64_t est_id) {
  const auto id = static_cast<std::uint64_t>(est_id);
  std::seed_seq seq{static_cast<std::uint32_t>(job_seed),
                    static_cast<std::uint32_t>(job_seed >> 32), static_cast<std::uint32_t>(id),
                    static_cast<std::uint32_t>(id >> 32), kEstStreamTag};
  std::mt19937_64 engine(seq);
  return engine();
}

EstContext MakeEstContext(std::uint64_t job_seed, std::int64_t est_id) {
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(EstSeed(job_seed, est_id));
  return EstContext{est_id, generator.get_state(), {}};
}

EstRngScope::EstRngScope(EstContext& est) : est_(est), saved_default_state_(GetDefaultState()) {
  SetDefaultState(est_.rng_state);
}

EstRngScope::~EstRngScope() {
  est_.rng_state = GetDefaultState();
  SetDefaultState(saved_default_state_);
}

}  // namespace elastic::agent

// Per-EST gradients of one step and their reduction into the gradient the optimizer applies.
// Includes LibTorch. Not thread-safe.
//
// Consistency (design.md §4, docs/consistency.md): under d1/d2 the reduced gradient is
// ((g_0 + g_1) + g_2) + ... + g_{E-1}, summed element-wise in EST-id order, then divided by E,
// so its bits depend only on the ESTs' gradients, never on which rank hosted which EST or in
// what order they ran. A parameter an EST's forward did not use counts as +0 for that EST.
//
// Two ways to get there, chosen by the trainer, with the same float operations on the same
// values (so the same bits):
// - Slots (d1/d2 on W > 1 ranks): each EST's gradient is copied into its slot (Capture); every
//   rank receives every EST's slot unchanged (ExchangeSlots: an allgather moves bytes, it never
//   adds) and all ranks run the same fold.
//   On a CUDA job built with NCCL (UseDeviceSlots) the slots live on the GPU: Capture copies
//   there, the exchange is NCCL's unequal all-gather into the same fixed slots and the fold is
//   slot_fold.cu's kernel, whose IEEE-rounded adds and division in slot order are the host
//   fold's operations (agent/comm/slot_fold.h): no host round trip, the same bits.
// - Running fold (W = 1, and d0's per-rank partial sums): the ESTs run in id order and autograd
//   accumulates each EST's gradient into the parameters' .grad (grad += g_e), which is exactly
//   the next step of the fold; no per-EST copy exists at all (EasyScale §3.2 keeps only the
//   gradients as EST working set; here even they are folded as soon as they appear).
//
// Layout ("bucket map"): one flat float32 vector per EST, the parameters in named_parameters()
// order, each flattened row-major. BucketMap() describes it; it is saved in checkpoints.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "agent/comm/communicator.h"
#include "agent/est/est_placement.h"

namespace elastic::agent {

class NcclCommunicator;

class GradientStash {
 public:
  // `params` are the model's parameters in named_parameters() order and `names` their names
  // (for the bucket map); `ests` is the EST count.
  GradientStash(std::vector<torch::Tensor> params, std::vector<std::string> names,
                std::int64_t ests);

  // --- Slots ---
  // From now on the slots live on the parameters' GPU and ExchangeSlots runs over `nccl`
  // (`slots_per_rank[r]`: how many ESTs rank r hosts, contiguous blocks in rank order). Borrows
  // `nccl`. Throws TrainingError when the counts do not add up to the EST count, and
  // std::logic_error in a build without NCCL (ELASTIC_HAVE_NCCL). REQUIRES: the parameters are
  // float32 on nccl's device; no slot captured yet; the replicated d1/d2 path only (the ZeRO and
  // d0 readers of host slots throw TrainingError).
  void UseDeviceSlots(NcclCommunicator& nccl, std::vector<std::int64_t> slots_per_rank);
  bool device_slots() const { return nccl_ != nullptr; }
  // For ZeRO's exchange over NCCL (sharded_update.cc). REQUIRES: device_slots(). EST `est_id`'s
  // captured slot on the GPU (a view; TrainingError when not captured this step).
  torch::Tensor DeviceSlot(std::int64_t est_id) const;
  NcclCommunicator& nccl() const { return *nccl_; }
  const std::vector<std::int64_t>& slots_per_rank() const { return slots_per_rank_; }

  // Copies the parameters' current gradients (flattened, in parameter order) into EST `est_id`'s
  // slot. An undefined gradient (a parameter the forward did not use) counts as zeros.
  void Capture(std::int64_t est_id);

  // Collective. Each rank contributes the slots of the ESTs it hosts (`hosted`, captured this
  // step); afterwards every rank holds every EST's slot. The allgather concatenates in rank
  // order, which is EST-id order because ranks host contiguous blocks in rank order.
  // Throws TrainingError when the gathered size is not ests x parameters (ranks disagree).
  void ExchangeSlots(Communicator& world, EstRange hosted);

  // Collective; d1/d2 on W > 1 ranks with host slots: ExchangeSlots + ReduceMeanIntoGradients
  // with 1/W of the bytes and adds per rank. Rank r receives every EST's floats
  // [P*r/W, P*(r+1)/W) of the slot (an all-to-all that moves bytes; senders in rank order, hence
  // ESTs in id order), folds them in EST order and divides by E — per element the same float
  // operations on the same values, so the same bits — and the folded chunks are all-gathered
  // into every rank's gradients (a reduce-scatter in EST order, then an all-gather: the bytes of
  // a ring all-reduce instead of E slots). Throws TrainingError when ranks disagree on sizes.
  void ReduceScatterMeanIntoGradients(Communicator& world, EstRange hosted);

  // d1/d2: replaces every parameter's gradient with the mean over all ESTs (the header's fold).
  // REQUIRES: every EST's slot is filled since the last reduction (Capture or ExchangeSlots).
  void ReduceMeanIntoGradients();

  // d0 from slots (collective): this rank's hosted slots folded in id order, then as
  // ReduceAccumulatedRankOrder.
  void ReduceMeanRankOrder(Communicator& world, EstRange hosted);

  // --- Running fold ---
  // Before EST `est_id`'s backward. The first EST of a step (`first`) starts from no gradients;
  // later ones must follow in id order, and their backward adds onto the running sum.
  void BeginAccumulation(std::int64_t est_id, bool first);
  // After EST `est_id`'s backward: a parameter it did not reach gets the +0 the slot fold
  // would add (so -0 sums turn into +0 exactly as there).
  void EndAccumulation(std::int64_t est_id);

  // W = 1: the running sum over all E ESTs, divided by E, becomes the gradient.
  void ReduceAccumulatedMean();

  // d0 (collective): each rank's running sum over its hosted ESTs is a partial; the W partials
  // are folded in rank order and divided by E. Equals ReduceAccumulatedMean for W = 1, usually
  // not for W > 1 (float addition is not associative): the placement-dependent reduction d0
  // permits.
  void ReduceAccumulatedRankOrder(Communicator& world, EstRange hosted);

  // --- ZeRO (agent/plan/sharded_update.cc): slots read in shards, reduced by the caller ---
  // EST `est_id`'s captured slot, floats [begin, end). Throws TrainingError when it was not
  // captured this step.
  std::span<const float> CapturedSlot(std::int64_t est_id, std::int64_t begin,
                                      std::int64_t end) const;
  // The slots were consumed (reduced elsewhere): the next step starts afresh.
  void ReleaseSlots() { ResetMarks(); }
  std::int64_t slot_numel() const { return numel_; }

  // One line per parameter, "<name> <offset> <numel>", in slot order.
  std::string BucketMap() const;

 private:
  float* Slot(std::int64_t est_id) { return flat_.data() + est_id * numel_; }
  // Folds `partials` (count flat vectors in slot layout, back to back) in order, divides by E and
  // installs the result as the parameters' gradients.
  void FoldIntoGradients(float* partials, std::int64_t count);
  // The parameters' gradients from one flat vector in slot layout (numel_ floats).
  void InstallGradients(const float* flat);
  // The device-slot counterparts (gradient_stash.cc, only with ELASTIC_HAVE_NCCL).
  void CaptureOnDevice(std::int64_t est_id);
  void ExchangeDeviceSlots(EstRange hosted);
  void FoldDeviceSlotsIntoGradients();
  void RequireHostSlots(const char* what) const;
  void RequireCaptured(EstRange range) const;
  void RequireAccumulated(EstRange range) const;
  void ResetMarks();

  std::vector<torch::Tensor> params_;
  std::vector<std::string> names_;
  std::vector<std::int64_t> offsets_;  // of each parameter in a slot
  std::int64_t ests_ = 0;
  std::int64_t numel_ = 0;   // floats per slot
  std::vector<float> flat_;  // E slots back to back, allocated on the first Capture
  std::vector<bool> captured_;
  EstRange accumulated_;                    // ESTs folded into .grad this step
  std::vector<std::int64_t> grad_version_;  // of each .grad before the current EST's backward
  std::vector<const void*> grad_impl_;      // which tensor that .grad was
  NcclCommunicator* nccl_ = nullptr;        // set: the slots are device_flat_, on the GPU
  std::vector<std::int64_t> slots_per_rank_;
  torch::Tensor device_flat_;  // E slots back to back on the GPU, allocated on the first Capture
  // ReduceScatterMeanIntoGradients' buffers, kept from step to step: tens of MB each for a
  // ResNet, which fresh every step cost more than the messages themselves (page faults, zero
  // fills, unmaps).
  struct ExchangeBuffers {
    std::vector<float> send;      // this rank's ESTs' chunks, in rank order
    std::vector<float> received;  // every EST's chunk of this rank's part, in EST order
    std::vector<float> folded;    // this rank's part, folded
    std::vector<float> gathered;  // every rank's folded part: the whole mean gradient
  };
  ExchangeBuffers exchange_;
};

}  // namespace elastic::agent

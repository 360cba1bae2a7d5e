// ExecutionPlan: one point of Rubick's plan space (§3): 3D parallelism (DP x TP x PP), gradient
// accumulation (GA), gradient checkpointing (GC), ZeRO-DP and ZeRO-Offload, and combinations.
// Plain value type; the functions here are pure and thread-safe.
#pragma once

#include <string>

#include "common/job_options.h"

namespace elastic::perf {

// The paper's plan parameters (Table 1: d, t, p, a, m; §4.2: c). Combinations follow §3: GA and GC
// combine with everything; ZeRO-DP and ZeRO-Offload are DP-based (t = p = 1). Under PP the
// micro-batches are the accumulation (ga_steps stays 1); without PP micro_batches stays 1.
struct ExecutionPlan {
  int dp = 1;             // d: data-parallel degree (model replicas)
  int tp = 1;             // t: tensor-parallel degree
  int pp = 1;             // p: pipeline stages
  int ga_steps = 1;       // a: gradient-accumulation steps per iteration
  int micro_batches = 1;  // m: pipeline micro-batches per iteration (1 unless pp > 1)
  bool gc = false;        // gradient checkpointing: recompute activations in the backward pass
  int zero_stage = 0;     // 0 = none; 1 or 2 = ZeRO-DP stage (the paper's ZeRO-DP is stage 2)
  bool offload = false;   // ZeRO-Offload (on top of zero_stage 2): optimizer runs on the CPU
  int cpu_threads = 0;    // c: CPU threads per worker for the offloaded optimizer step

  int Gpus() const { return dp * tp * pp; }  // g = d * t * p (Table 1)
  friend bool operator==(const ExecutionPlan&, const ExecutionPlan&) = default;
};

// Compact, stable spelling for logs and AdminComment: "dp=4+zero-2+gc", "dp=2+tp=2+pp=2,mb=8",
// "dp=1+zero-2+offload,c=8".
std::string Describe(const ExecutionPlan& plan);

// The --elastic-plan word that best names a plan, by precedence tp > pp > zero-offload > zero-dp
// > gc > ga > dp (so "dp=4+zero-2+gc" is zero-dp). Never kAuto or kBurst.
Plan Family(const ExecutionPlan& plan);

// Whether the plan can keep parameters bitwise identical to DP (design.md §4): everything but TP,
// which changes the arithmetic of each layer.
bool BitwiseSafe(const ExecutionPlan& plan);

// design.md §4 / job_options.h PlanAllowedUnder: d0, d1 and d2 admit only bitwise-safe plans;
// `statistical` admits all.
bool AllowedUnder(const ExecutionPlan& plan, Determinism level);

}  // namespace elastic::perf

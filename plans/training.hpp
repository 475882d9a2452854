// parsim plans/ — the training settings of one step (everything but the model, the hardware and the plan).
// Fields with an "auto" value (seq 0, gbs 0, schedule Auto, stack Auto, bucket_bytes 0, tp_comm_overlap_auto) are
// resolved in one place, resolve_training() (plans/scenario.hpp); the simulator reads resolved values only.
// A new option: its field here, its row in scenario_options() (plans/scenario.cpp).
#pragma once
#include "sim/core/types.hpp"

#include <cstdint>
#include <string>

namespace parsim {

struct Plan;

// Pipeline schedules (plans/schedule.hpp has their traits and orders). Auto = interleaved when vpp > 1, else 1F1B.
enum class Schedule { Auto, GPipe, OneFOneB, Interleaved };
std::string to_string(Schedule s);
// Case-insensitive; accepts the names of schedule_traits() and their aliases, and "auto".
Schedule parse_schedule(const std::string& s);

// The software stack whose kernels and defaults apply. Auto follows the plan's sharding term, whose semantics already
// name the framework (docs/cli.md): zero0/zero1 → Megatron-LM / Megatron-Core (NeMo) with Transformer
// Engine; zero2/zero3/fsdp/hsdp → PyTorch-native stacks (FSDP: llm-foundry, torchtitan, fms-fsdp; DeepSpeed).
enum class Stack { Auto, Megatron, PyTorch };
std::string to_string(Stack s);
Stack parse_stack(const std::string& s);

// How MoE layers move tokens to their experts (Megatron-Core --moe-token-dispatcher-type): AllToAll permutes the
// tokens locally and exchanges them with an all-to-all over the EP group (Megatron-Core's recommendation with expert
// parallelism, and parsim's default); AllGather gathers every token of the EP×ETP group on every rank and
// reduce-scatters the expert outputs back (Megatron-Core's `allgather` dispatcher); Flex is the `flex` dispatcher
// with DeepEP or HybridEP kernels (--moe-flex-dispatcher-backend deepep|hybridep): each token goes once to each
// node and each GPU holding one of its experts, not once per expert (sim/step/costs/comm.cpp).
enum class MoeDispatcher { AllToAll, AllGather, Flex };
std::string to_string(MoeDispatcher d);
MoeDispatcher parse_moe_dispatcher(const std::string& s);

// Default routing imbalance of MoE layers (--moe-imbalance): the busiest expert's load over the mean, 1.25. Source:
// Switch Transformers (Fedus et al. 2022, JMLR 23, §2.2 and Table 1) train top-1 routers with expert capacity factor
// 1.25 — capacity = factor × the mean tokens per expert — as the smallest buffer that keeps tokens from being dropped
// under their auxiliary-loss-balanced routing, i.e. the busiest expert sits near 1.25 × the mean; GShard (Lepikhin et
// al. 2021) and Megatron-Core's capacity examples use 1.0–2.0. [U] A provisioning figure from routed training, not a
// per-rank measurement of a dropless run (an EP rank holding several experts averages some of it out); published
// benchmarks force balanced routing and state 1.0 (NVIDIA's MoE performance tables, tests/data/validation/moe.csv).
inline constexpr double kDefaultMoeImbalance = 1.25;

struct TrainingConfig {
  std::int64_t seq = 0;    // tokens per sequence; 0 = the model's seq_len
  std::int64_t gbs = 0;    // global batch, sequences per optimizer step; 0 = the contract's default
  std::int64_t mbs = 1;    // micro-batch, sequences
  Recompute recompute = Recompute::None;
  bool sp = false;
  Precision precision = Precision::BF16;
  Schedule schedule = Schedule::OneFOneB;  // Auto: interleaved iff vpp > 1 (the option table's default)
  // Data-parallel and overlap options (Megatron-Core / PyTorch defaults, documented in the README).
  Stack stack = Stack::Auto;          // see Stack
  double bucket_bytes = 0;            // gradient bucket; 0 = the stack's default
  bool overlap_grad_reduce = true;    // Megatron --overlap-grad-reduce; DDP overlaps buckets with backward
  bool overlap_param_gather = true;   // Megatron --overlap-param-gather (ZeRO-1 AG overlapped with next forward)
  bool tp_comm_overlap = false;       // Megatron --tp-comm-overlap (TE userbuffers): TP comm hidden behind GEMMs
  bool tp_comm_overlap_auto = true;   // true: decided by the stack (resolve_training), else tp_comm_overlap
  bool overlap_p2p = true;            // Megatron overlap of PP send/recv with compute
  bool fsdp_no_sync = false;          // FSDP/ZeRO-3 gradient sync only at the last micro-batch (unsharded grads)
  bool flash_attention = true;        // fused flash kernel; false = unfused QKᵀ/softmax/AV with s² tensors in HBM
  // Mixture-of-experts layers (issue 10; ignored by dense models).
  double moe_imbalance = kDefaultMoeImbalance;  // busiest EP rank's routed (token, expert) pairs over the mean, ≥ 1
  double moe_capacity_factor = 0;     // 0: dropless; > 0: each expert keeps at most factor × its mean share, the rest
                                      // is dropped before the dispatch (--moe-expert-capacity-factor)
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
  bool moe_shared_expert_overlap = false;  // shared experts run beside the dispatch/combine all-to-alls
                                           // (Megatron-Core --moe-shared-expert-overlap)
  bool moe_a2a_overlap = false;       // EP communication of one micro-batch runs beside another's compute
                                      // (Megatron-Core --overlap-moe-expert-parallel-comm, "1F1B A2A overlap")
  std::int64_t micro_batches(const Plan& p) const;  // gbs / (dp · mbs)
};

}  // namespace parsim

// parsim plans/ — the training settings of one step (everything but the model, the hardware and the plan).
// Fields with an "auto" value (seq 0, gbs 0, schedule Auto, optimizer_sync Auto, stack Auto, bucket_bytes 0,
// tp_comm_overlap_auto) are
// resolved in one place, resolve_training() (plans/scenario.hpp); the simulator reads resolved values only.
// A new option: its field here, its row in scenario_options() (plans/scenario.cpp).
#pragma once
#include "sim/core/types.hpp"

#include <cstdint>
#include <string>

namespace parsim {

struct Plan;

// Pipeline schedules (plans/schedule.hpp has their traits and orders). Auto = interleaved when vpp > 1, else 1F1B.
// ZBH1/ZBH2/ZBV: zero-bubble (Qi et al., ICLR 2024); DualPipe/DualPipeV: DeepSeek-V3 report §3.2.1 and the public
// DualPipe repository.
enum class Schedule { Auto, GPipe, OneFOneB, Interleaved, ZBH1, ZBH2, ZBV, DualPipe, DualPipeV };
std::string to_string(Schedule s);
// Case-insensitive; accepts the names of schedule_traits() and their aliases, and "auto".
Schedule parse_schedule(const std::string& s);

// What ends a step's optimizer phase. Barrier: every stage waits for the global checks before the next step (the
// gradient-norm all-reduce for clipping and the inf/NaN check span all pipeline stages), so the step is the whole
// timeline. PostValidation (Qi et al. 2024 §4): each stage steps its optimizer as soon as its own gradients are
// reduced and the global checks run afterwards, rolling the update back in the rare step that needs clipping or
// skipping; back-to-back steps then overlap and a step costs the longest stage's own span. Auto: the schedule's
// (ScheduleTraits::optimizer_sync).
enum class OptimizerSync { Auto, Barrier, PostValidation };
std::string to_string(OptimizerSync s);
OptimizerSync parse_optimizer_sync(const std::string& s);

// The software stack whose kernels and defaults apply. Auto follows the plan's sharding term, whose semantics already
// name the framework (docs/cli.md): zero0/zero1 → Megatron-LM / Megatron-Core (NeMo) with Transformer
// Engine; zero2/zero3/fsdp/hsdp → PyTorch-native stacks (FSDP: llm-foundry, torchtitan, fms-fsdp; DeepSpeed).
enum class Stack { Auto, Megatron, PyTorch };
std::string to_string(Stack s);
Stack parse_stack(const std::string& s);

struct TrainingConfig {
  std::int64_t seq = 0;    // tokens per sequence; 0 = the model's seq_len
  std::int64_t gbs = 0;    // global batch, sequences per optimizer step; 0 = the contract's default
  std::int64_t mbs = 1;    // micro-batch, sequences
  Recompute recompute = Recompute::None;
  bool sp = false;
  Precision precision = Precision::BF16;
  Schedule schedule = Schedule::OneFOneB;  // Auto: interleaved iff vpp > 1 (the option table's default)
  OptimizerSync optimizer_sync = OptimizerSync::Auto;  // Auto: the schedule's (resolve_training)
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
  std::int64_t micro_batches(const Plan& p) const;  // gbs / (dp · mbs)
};

}  // namespace parsim

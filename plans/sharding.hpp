// parsim plans/ — data-parallel sharding schemes as data: what each one shards, which collective reduces the
// gradients, when gradients sync under accumulation, how parameters are gathered, the model-state bytes per parameter
// and the wire bytes. Everything that depends on the scheme reads ShardingTraits; nothing switches on Sharding.
//
// Sources (docs/domain-notes.md §4, §6): ZeRO, Rajbhandari et al. 2020 §5 (P_os, P_os+g, P_os+g+p memory: 4Ψ + KΨ/N,
// 2Ψ + (2 + K)Ψ/N, (4 + K)Ψ/N with K = 12) and §7 (DP volume: 2Ψ for DDP and ZeRO-1/2, 3Ψ for ZeRO-3); Megatron
// docs/user-guide/features/dist_optimizer.md (fp32 main grads, distributed optimizer 6 + 12/N bytes); DeepSpeed
// engine.py (ZeRO-2/3 reduce every micro-batch); PyTorch torch/distributed/fsdp/api.py ShardingStrategy (FULL_SHARD,
// HYBRID_SHARD; fp32 shards with bf16 MixedPrecision).
//
// A new scheme: a Sharding value (below), its row in sharding.cpp (the plan term is read from the row), and — only if
// none of the DataParallelLowering strategies fits — a lowering function in sim/step/lower_dp.cpp.
#pragma once
#include "hardware/hardware.hpp"
#include "plans/training.hpp"
#include "sim/core/types.hpp"

#include <string>
#include <vector>

namespace parsim {

enum class Sharding { None, Zero1, Zero2, Zero3, FSDP, HSDP };  // None = plain DDP (`zero0`)

// When gradients leave the GPU under gradient accumulation.
enum class GradSync {
  LastMicrobatch,   // once per step, during the last micro-batch's backward (Megatron DDP/dist-opt, DeepSpeed ZeRO-1)
  EveryMicrobatch,  // after every micro-batch's backward (DeepSpeed ZeRO-2/3, FSDP unless no_sync)
};
// How the (updated or sharded) parameters come back.
enum class ParamGather {
  None,         // every rank keeps all parameters (DDP)
  AfterStep,    // one all-gather of the updated 16-bit parameters after the optimizer step (ZeRO-2; ZeRO-1 can
                // overlap it with the next step's first forward instead: overlap_param_gather)
  PerLayer,     // per layer before every forward and backward of every micro-batch (ZeRO-3, FSDP FULL_SHARD)
};
// Which lowering function builds the scheme's data-parallel tasks (sim/step/lower_dp.cpp).
enum class DataParallelLowering {
  BucketedOnce,           // zero0/zero1: bucketed reduce of the last micro-batch's gradients (+ ZeRO-1 gather)
  ReduceScatterEachMicrobatch,  // zero2: bucketed reduce-scatter after every backward, gather after the step
  ShardedParameters,      // zero3/fsdp/hsdp: per-layer gather before every pass, reduce-scatter after backward
};

// Model-state bytes per parameter on one rank (weights, gradients, optimizer state).
struct StateBytes {
  double weights = 0, grads = 0, optimizer = 0;
  double total() const { return weights + grads + optimizer; }
};

// One framework's implementation of a scheme: who implements it, the model-state bytes per parameter it holds and the
// gradient element it reduces. A scheme has one per stack family (ShardingTraits::megatron / ::pytorch): e.g. fsdp on
// the Megatron stack is Megatron-FSDP (fp32 main grads), on the PyTorch stack PyTorch FSDP (fp32 shards, bf16 grads).
struct ShardingImpl {
  const char* framework;
  StateBytes (*state_bytes)(Precision p, double n);  // at sharding degree n (domain-notes §4)
  double grad_wire_bf16;  // bytes per reduced gradient element in bf16/fp8 training (4: fp32 main grads)
  double grad_wire_fp16;  // … in fp16 training (Megatron: grad dtype = param dtype, 2, unless
                          // --accumulate-allreduce-grads-in-fp32, which Megatron-LM turns on only for bf16)
};

struct ShardingTraits {
  Sharding scheme;
  const char* term;            // the plan term ("zero0" … "zero3", "fsdp", "hsdp"; hsdp takes its group size)
  bool term_takes_group;       // hsdp<N>
  ShardingImpl megatron;       // on the Megatron stacks (MegatronLegacy: zero0/zero1 only; DeepSpeed otherwise)
  ShardingImpl pytorch;        // on the PyTorch stack
  bool shards_optimizer, shards_grads, shards_params;
  bool hierarchical;           // HSDP: shard inside groups of N DP ranks, replicate across groups
  Stack default_stack;         // --stack auto (plans/scenario.cpp resolve_training)
  Collective grad_collective;  // how gradients are reduced (HSDP: then an all-reduce across replicas)
  GradSync grad_sync;
  ParamGather param_gather;
  bool gather_overlaps_next_forward;  // AfterStep gather may run during the next step's first forward instead
                                      // (Megatron --overlap-param-gather; TrainingConfig::overlap_param_gather)
  DataParallelLowering lowering;
  double bucket_elements;      // the framework's own gradient-bucket size off the Megatron stack, in elements (0: the
                               // PyTorch DDP 25 MB default; resolve_training)
  bool in_sweep_with_pp;       // the sweep combines it with pp > 1 by default (Megatron-Core does for zero0/zero1)
  bool framework_refuses_pp;   // the framework refuses it with pipeline parallelism (DeepSpeed ZeRO-2/3): a warning
  const ShardingImpl& impl(Stack stack) const;  // the implementation the stack runs (Auto: default_stack's)
  // Model-state bytes per parameter of the default stack's implementation.
  StateBytes state_bytes(Precision p, double n) const { return impl(default_stack).state_bytes(p, n); }
};

const ShardingTraits& sharding_traits(Sharding s);
const std::vector<ShardingTraits>& all_sharding_traits();

std::string to_string(Sharding s);  // the plan term: zero0, zero1, zero2, zero3, fsdp, hsdp
// Accepts a plan term (`zero2`, `fsdp`, `hsdp`), `none`/`ddp`, or a bare ZeRO stage `0`..`3` (case-insensitive).
Sharding parse_sharding(const std::string& s);

// Bytes per element on the wire (domain-notes §6): gradients — Megatron DDP, the distributed optimizer and
// Megatron-FSDP reduce fp32 main grads (4 B; fp16 training fp16 grads, 2 B), PyTorch DDP fp32 grads (4 B), DeepSpeed
// and PyTorch FSDP 16-bit grads (2 B), fp32 training 4 B; parameter gathers move the 16-bit (fp32 training: 32-bit)
// weights. The two-argument form is the scheme's default stack.
double grad_wire_bytes(Sharding s, Precision p, Stack stack);
// With grad_reduce_in_fp32 false (Megatron DDP config grad_reduce_in_fp32=False, as NeMo / Megatron-Bridge
// performance recipes set it): the gradient buffer and its reduction are 16-bit, at most 2 B.
double grad_wire_bytes(Sharding s, Precision p, Stack stack, bool grad_reduce_in_fp32);
double grad_wire_bytes(Sharding s, Precision p);
double param_wire_bytes(Precision p);

}  // namespace parsim

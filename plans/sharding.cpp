// parsim plans/ — the sharding schemes' traits (see sharding.hpp for the sources).
#include "plans/sharding.hpp"

#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

namespace parsim {

namespace {

// Megatron's unsharded mixed-precision state (domain-notes §4): bf16 weights 2 B, fp32 main grads 4 B, fp32 master
// weight + Adam m + v 12 B (18 B); fp16: fp16 grads 2 B and an extra fp32 grad copy in the optimizer (2 + 2 + 16 = 20 B);
// fp32 training: weights 4, grads 4, Adam m + v 8 (16 B).
StateBytes megatron_unsharded(Precision p) {
  if (p == Precision::FP32) return {4, 4, 8};
  if (p == Precision::FP16) return {2, 2, 16};
  return {2, 4, 12};
}
double grad16(Precision p) { return p == Precision::FP32 ? 4 : 2; }  // DeepSpeed's reduced gradient element

StateBytes ddp_bytes(Precision p, double) { return megatron_unsharded(p); }
StateBytes zero1_bytes(Precision p, double n) {  // Megatron distributed optimizer: 2 + 4 + 12/N (bf16)
  StateBytes b = megatron_unsharded(p);
  b.optimizer /= n;
  return b;
}
// Megatron-FSDP (megatron/core/distributed/fsdp, README 'zero_dp_strategy'; fp32 main grads as Megatron-LM sets
// grad_reduce_in_fp32 for bf16, preserve_fp32_weights): optim_grads (ZeRO-2) shards the fp32 main grads and the
// optimizer state (2 + (4 + 12)/N bf16), optim_grads_params (ZeRO-3, its default) also the 16-bit weights
// ((2 + 4 + 12)/N = 18/N).
StateBytes mfsdp_optim_grads_bytes(Precision p, double n) {
  StateBytes b = megatron_unsharded(p);
  b.grads /= n;
  b.optimizer /= n;
  return b;
}
StateBytes mfsdp_optim_grads_params_bytes(Precision p, double n) {
  StateBytes b = megatron_unsharded(p);
  return {b.weights / n, b.grads / n, b.optimizer / n};
}
// PyTorch DDP with autocast (domain-notes §4): fp32 parameters 4, fp32 gradients 4 plus DDP's bucket copies 4
// (gradient_as_bucket_view=False, the default), Adam m + v 8 = 20 B whatever the compute precision.
StateBytes torch_ddp_bytes(Precision, double) { return {4, 8, 8}; }
// DeepSpeed ZeRO-1 (domain-notes §4): 16-bit weights 2 and gradients 2, fp32 master + m + v sharded 12/N (fp16: the
// fp32 gradient partition cast at the step, 16/N); fp32 training 4 + 4 + 8/N.
StateBytes deepspeed_zero1_bytes(Precision p, double n) {
  StateBytes b = megatron_unsharded(p);
  b.grads = grad16(p);
  b.optimizer /= n;
  return b;
}
StateBytes zero2_bytes(Precision p, double n) {  // DeepSpeed ZeRO-2 (ZeRO §5 P_os+g): 2 + (2 + 12)/N
  StateBytes b = megatron_unsharded(p);
  b.grads = grad16(p) / n;
  b.optimizer /= n;
  return b;
}
StateBytes zero3_bytes(Precision p, double n) {  // DeepSpeed ZeRO-3 (ZeRO §5 P_os+g+p): (2 + 2 + 12)/N
  StateBytes b = megatron_unsharded(p);
  b.weights /= n;
  b.grads = grad16(p) / n;
  b.optimizer /= n;
  return b;
}
StateBytes fsdp_bytes(Precision, double n) {  // FSDP FULL_SHARD, bf16 MixedPrecision: fp32 shard 4/N + grads 4/N + Adam 8/N
  return {4 / n, 4 / n, 8 / n};
}

constexpr ShardingImpl kMegatronDdp{"Megatron-Core DDP", ddp_bytes, 4, 2};
constexpr ShardingImpl kMegatronDistOpt{"Megatron-Core distributed optimizer", zero1_bytes, 4, 2};
constexpr ShardingImpl kMfsdpOptimGrads{"Megatron-FSDP optim_grads", mfsdp_optim_grads_bytes, 4, 2};
constexpr ShardingImpl kMfsdpFull{"Megatron-FSDP optim_grads_params", mfsdp_optim_grads_params_bytes, 4, 2};
constexpr ShardingImpl kMfsdpHybrid{"Megatron-FSDP optim_grads_params with outer DP replicas (HSDP)",
                                    mfsdp_optim_grads_params_bytes, 4, 2};
constexpr ShardingImpl kTorchDdp{"PyTorch DDP", torch_ddp_bytes, 4, 4};
constexpr ShardingImpl kDeepSpeedZero1{"DeepSpeed ZeRO-1", deepspeed_zero1_bytes, 2, 2};
constexpr ShardingImpl kDeepSpeedZero2{"DeepSpeed ZeRO-2", zero2_bytes, 2, 2};
constexpr ShardingImpl kDeepSpeedZero3{"DeepSpeed ZeRO-3", zero3_bytes, 2, 2};
constexpr ShardingImpl kTorchFsdp{"PyTorch FSDP FULL_SHARD", fsdp_bytes, 2, 2};
constexpr ShardingImpl kTorchHsdp{"PyTorch FSDP HYBRID_SHARD", fsdp_bytes, 2, 2};

const std::vector<ShardingTraits>& table() {
  using C = Collective;
  static const std::vector<ShardingTraits> t = {
      {Sharding::None, "zero0", false, kMegatronDdp, kTorchDdp, false, false, false, false, Stack::Megatron,
       C::AllReduce, GradSync::LastMicrobatch, ParamGather::None, false, DataParallelLowering::BucketedOnce, 0, true,
       false},
      {Sharding::Zero1, "zero1", false, kMegatronDistOpt, kDeepSpeedZero1, true, false, false, false, Stack::Megatron,
       C::ReduceScatter, GradSync::LastMicrobatch, ParamGather::AfterStep, true, DataParallelLowering::BucketedOnce, 0,
       true, false},
      {Sharding::Zero2, "zero2", false, kMfsdpOptimGrads, kDeepSpeedZero2, true, true, false, false, Stack::PyTorch,
       C::ReduceScatter, GradSync::EveryMicrobatch, ParamGather::AfterStep, false,
       DataParallelLowering::ReduceScatterEachMicrobatch, 5e8, false, true},
      {Sharding::Zero3, "zero3", false, kMfsdpFull, kDeepSpeedZero3, true, true, true, false, Stack::PyTorch,
       C::ReduceScatter, GradSync::EveryMicrobatch, ParamGather::PerLayer, false, DataParallelLowering::ShardedParameters,
       0, false, true},
      {Sharding::FSDP, "fsdp", false, kMfsdpFull, kTorchFsdp, true, true, true, false, Stack::PyTorch,
       C::ReduceScatter, GradSync::EveryMicrobatch, ParamGather::PerLayer, false, DataParallelLowering::ShardedParameters,
       0, false, false},
      {Sharding::HSDP, "hsdp", true, kMfsdpHybrid, kTorchHsdp, true, true, true, true, Stack::PyTorch,
       C::ReduceScatter, GradSync::EveryMicrobatch, ParamGather::PerLayer, false, DataParallelLowering::ShardedParameters,
       0, false, false},
  };
  return t;
}

}  // namespace

const std::vector<ShardingTraits>& all_sharding_traits() { return table(); }

const ShardingTraits& sharding_traits(Sharding s) {
  for (const ShardingTraits& t : table())
    if (t.scheme == s) return t;
  throw std::logic_error("sharding scheme without traits");
}

std::string to_string(Sharding s) { return sharding_traits(s).term; }

Sharding parse_sharding(const std::string& s) {
  const std::string l = to_lower(trim(s));
  if (l == "none" || l == "ddp") return Sharding::None;
  std::string terms;
  for (const ShardingTraits& t : table()) {
    const std::string term = t.term;
    // A ZeRO stage may be given bare: "2" = zero2.
    if (l == term || (term.rfind("zero", 0) == 0 && l == term.substr(4))) return t.scheme;
    if (!terms.empty()) terms += ", ";
    terms += term;
  }
  throw InputError("sharding '" + s + "' is not valid (choose 0, 1, 2, 3, " + terms + " or none)");
}

const ShardingImpl& ShardingTraits::impl(Stack stack) const {
  if (stack == Stack::Auto) stack = default_stack;
  // The legacy Megatron stacks ran Megatron's own DDP / distributed optimizer (Megatron-DeepSpeed: DeepSpeed's ZeRO-1
  // BF16_Optimizer, which also keeps an unsharded fp32 gradient buffer: the same 2 + 4 + 12/N) and DeepSpeed for
  // ZeRO-2/3.
  if (stack == Stack::MegatronLegacy)
    return scheme == Sharding::None || scheme == Sharding::Zero1 ? megatron : pytorch;
  return stack == Stack::Megatron ? megatron : pytorch;
}

double grad_wire_bytes(Sharding s, Precision p, Stack stack, bool grad_reduce_in_fp32) {
  if (p == Precision::FP32) return 4;
  const ShardingImpl& i = sharding_traits(s).impl(stack);
  const double b = p == Precision::FP16 ? i.grad_wire_fp16 : i.grad_wire_bf16;
  return grad_reduce_in_fp32 ? b : std::min(b, 2.0);
}

double grad_wire_bytes(Sharding s, Precision p, Stack stack) { return grad_wire_bytes(s, p, stack, true); }

double grad_wire_bytes(Sharding s, Precision p) { return grad_wire_bytes(s, p, sharding_traits(s).default_stack); }

double param_wire_bytes(Precision p) { return p == Precision::FP32 ? 4 : 2; }

}  // namespace parsim

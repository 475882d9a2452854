// parsim plans/ — the sharding schemes' traits (see sharding.hpp for the sources).
#include "plans/sharding.hpp"

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

const std::vector<ShardingTraits>& table() {
  using C = Collective;
  static const std::vector<ShardingTraits> t = {
      {Sharding::None, "zero0", false, "Megatron-LM / Megatron-Core DDP (PyTorch DDP semantics)", false, false, false,
       false, Stack::Megatron, C::AllReduce, GradSync::LastMicrobatch, ParamGather::None, false,
       DataParallelLowering::BucketedOnce, true, 0, true, false, ddp_bytes},
      {Sharding::Zero1, "zero1", false, "Megatron-Core distributed optimizer", true, false, false, false,
       Stack::Megatron, C::ReduceScatter, GradSync::LastMicrobatch, ParamGather::AfterStep, true,
       DataParallelLowering::BucketedOnce, true, 0, true, false, zero1_bytes},
      {Sharding::Zero2, "zero2", false, "DeepSpeed ZeRO-2", true, true, false, false, Stack::PyTorch,
       C::ReduceScatter, GradSync::EveryMicrobatch, ParamGather::AfterStep, false,
       DataParallelLowering::ReduceScatterEachMicrobatch, false, 5e8, false, true, zero2_bytes},
      {Sharding::Zero3, "zero3", false, "DeepSpeed ZeRO-3", true, true, true, false, Stack::PyTorch,
       C::ReduceScatter, GradSync::EveryMicrobatch, ParamGather::PerLayer, false, DataParallelLowering::ShardedParameters,
       false, 0, false, true, zero3_bytes},
      {Sharding::FSDP, "fsdp", false, "PyTorch FSDP FULL_SHARD", true, true, true, false, Stack::PyTorch,
       C::ReduceScatter, GradSync::EveryMicrobatch, ParamGather::PerLayer, false, DataParallelLowering::ShardedParameters,
       false, 0, false, false, fsdp_bytes},
      {Sharding::HSDP, "hsdp", true, "PyTorch FSDP HYBRID_SHARD", true, true, true, true, Stack::PyTorch,
       C::ReduceScatter, GradSync::EveryMicrobatch, ParamGather::PerLayer, false, DataParallelLowering::ShardedParameters,
       false, 0, false, false, fsdp_bytes},
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

double grad_wire_bytes(Sharding s, Precision p) {
  if (p == Precision::FP32) return 4;
  return sharding_traits(s).fp32_grad_wire ? 4 : 2;
}

double param_wire_bytes(Precision p) { return p == Precision::FP32 ? 4 : 2; }

}  // namespace parsim

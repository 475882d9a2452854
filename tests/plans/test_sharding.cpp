// Contract of every sharding scheme (plans/sharding.hpp): model-state bytes per parameter. Expected values from
// ZeRO (Rajbhandari et al. 2020) §5 — P_os 4Ψ + KΨ/N, P_os+g 2Ψ + (2 + K)Ψ/N, P_os+g+p (4 + K)Ψ/N with K = 12 —,
// Megatron's distributed-optimizer table (fp32 main grads: 2 + 4 + 12/N) and PyTorch FSDP FULL_SHARD (fp32 shards),
// as collected in docs/domain-notes.md §4. Every row of the traits table must have an expectation here.
#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace parsim;

namespace {
struct Expected {
  double bf16, fp16, fp32;  // bytes per parameter on one rank at N = 8
};
}  // namespace

TEST_CASE("sharding contract: bytes per parameter of every scheme (ZeRO §5, domain-notes §4), N = 8") {
  const double N = 8;
  const std::map<Sharding, Expected> expected{
      // Megatron DDP: bf16 weights 2 + fp32 main grads 4 + fp32 master, m, v 12 = 18; fp16: 2 + 2 + 16 = 20 (the fp32
      // grad copy sits in the optimizer); fp32: 4 + 4 + 8 = 16.
      {Sharding::None, {18, 20, 16}},
      // Megatron distributed optimizer: optimizer state / N. bf16 2 + 4 + 12/8 = 7.5; fp16 2 + 2 + 16/8 = 6
      // (Megatron's "4 + 16/N"); fp32 4 + 4 + 8/8 = 9.
      {Sharding::Zero1, {2 + 4 + 12 / N, 2 + 2 + 16 / N, 4 + 4 + 8 / N}},
      // ZeRO-2 (P_os+g): 2 + (2 + 12)/N = 3.75; fp16 2 + (2 + 16)/8 = 4.25; fp32 4 + (4 + 8)/8 = 5.5.
      {Sharding::Zero2, {2 + (2 + 12) / N, 2 + (2 + 16) / N, 4 + (4 + 8) / N}},
      // ZeRO-3 (P_os+g+p): (2 + 2 + 12)/N = 2 = 16/N; fp16 (2 + 2 + 16)/8 = 2.5; fp32 (4 + 4 + 8)/8 = 2.
      {Sharding::Zero3, {16 / N, 20 / N, 16 / N}},
      // FSDP FULL_SHARD with bf16 MixedPrecision keeps fp32 shards: (4 + 4 + 8)/N = 2 whatever the compute precision.
      {Sharding::FSDP, {16 / N, 16 / N, 16 / N}},
      // HSDP: FULL_SHARD inside the shard group (N = the group).
      {Sharding::HSDP, {16 / N, 16 / N, 16 / N}},
  };
  for (const ShardingTraits& t : all_sharding_traits()) {
    CAPTURE(t.term);
    REQUIRE(expected.count(t.scheme) == 1);  // a new scheme needs its row above
    const Expected& e = expected.at(t.scheme);
    CHECK(t.state_bytes(Precision::BF16, N).total() == doctest::Approx(e.bf16));
    CHECK(t.state_bytes(Precision::FP8, N).total() == doctest::Approx(e.bf16));  // fp8 recipes keep bf16 state
    CHECK(t.state_bytes(Precision::FP16, N).total() == doctest::Approx(e.fp16));
    CHECK(t.state_bytes(Precision::FP32, N).total() == doctest::Approx(e.fp32));
    // What is sharded is what shrinks with N.
    const StateBytes one = t.state_bytes(Precision::BF16, 1), many = t.state_bytes(Precision::BF16, N);
    CHECK((many.optimizer < one.optimizer) == t.shards_optimizer);
    CHECK((many.weights < one.weights) == t.shards_params);
    // Unsharded at N = 1 except FSDP's fp32 shards: every scheme holds ≥ 16 B per parameter with one rank.
    CHECK(one.total() >= 16);
    // The plan term round-trips and names the scheme.
    CHECK(parse_sharding(t.term) == t.scheme);
    CHECK(to_string(t.scheme) == t.term);
  }
  // Wire bytes (domain-notes §6): Megatron reduces fp32 main grads (4 B), DeepSpeed/FSDP 16-bit grads (2 B).
  CHECK(grad_wire_bytes(Sharding::None, Precision::BF16) == 4);
  CHECK(grad_wire_bytes(Sharding::Zero1, Precision::BF16) == 4);
  CHECK(grad_wire_bytes(Sharding::Zero2, Precision::BF16) == 2);
  CHECK(grad_wire_bytes(Sharding::FSDP, Precision::BF16) == 2);
  CHECK(grad_wire_bytes(Sharding::FSDP, Precision::FP32) == 4);
  CHECK(param_wire_bytes(Precision::BF16) == 2);
}

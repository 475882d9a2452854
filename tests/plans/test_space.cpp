// The plan space of the sweep: hand-counted small spaces, filters, determinism, every candidate valid.
#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <set>

using namespace parsim;

namespace {
std::string key(const Candidate& c) {
  return c.plan.to_string() + "/mbs" + std::to_string(c.train.mbs) + "/" + to_string(c.train.recompute) + "/sp" +
         std::to_string(c.train.sp) + "/" + to_string(c.train.schedule);
}
}  // namespace

TEST_CASE("a hand-counted space: 4 GPUs, 4 layers, one setting per other dimension") {
  // 4 layers, 4 heads, 4-GPU node, seq 1024, gbs 8; only mbs 1, zero0, no recompute, no sp.
  // (tp, cp, pp, dp) with product 4 = 2²: the ordered ways to split the exponent 2 over 4 factors, C(5,3) = 10.
  // tp ∈ {1,2,4} all divide the 4 heads; cp ∈ {1,2,4} divides seq/2 = 512; every pp ≤ 4 layers; dp | 8.
  // Plus interleaving where pp > 1 and 2 ≤ v with pp·v ≤ 4 layers: only pp2 vpp2 (4 layers % 4 = 0), for the three
  // (tp, cp, dp) with product 2; m = 8/dp ∈ {8, 4} is even → 3 more. Total 13.
  SpaceFilter f;
  f.mbs = {1};
  f.sharding = {Sharding::None};
  f.recompute = {Recompute::None};
  f.sp = {0};
  const auto space = enumerate_space(test::tiny(4, 4, 4), test::node_of(4), 4, test::train(1024, 8), f);
  CHECK(space.size() == 13);
  int interleaved = 0;
  for (const auto& c : space) {
    CHECK(c.plan.world() == 4);
    if (c.plan.vpp > 1) {
      ++interleaved;
      CHECK(c.train.schedule == Schedule::Interleaved);
      CHECK(c.plan.pp == 2);
    }
  }
  CHECK(interleaved == 3);
}

TEST_CASE("sharding, recompute and sp multiply the space as documented") {
  // 8 GPUs, llama2-7b-like shapes, seq 4096, gbs 8, only tp ∈ {1, 2}, pp1, cp1, mbs1:
  //  tp1 dp8: zero0, zero1, zero2, zero3, fsdp, hsdp with groups 8/(1·1) = 8 = dp → not below dp, none → 5 shardings,
  //           3 recompute, sp off only → 15.
  //  tp2 dp4: 5 shardings (hsdp group 8/2 = 4 = dp, none), 3 recompute, sp on/off → 30. Total 45.
  SpaceFilter f;
  f.tp = {1, 2};
  f.pp = {1};
  f.cp = {1};
  f.mbs = {1};
  const auto space = enumerate_space(test::llama2_7b(), test::node_of(8), 8, test::train(4096, 8), f);
  CHECK(space.size() == 45);
  // 16 GPUs: tp2 dp8 → hsdp group 8/2 = 4 divides 8, below it → hsdp4 joins: 6 shardings · 3 · 2 = 36 for tp2.
  SpaceFilter g = f;
  g.tp = {2};
  const auto space16 = enumerate_space(test::llama2_7b(), test::node_of(8), 16, test::train(4096, 16), g);
  CHECK(space16.size() == 36);
  bool saw_hsdp4 = false;
  for (const auto& c : space16) saw_hsdp4 |= c.plan.to_string() == "tp2pp1dp8hsdp4";
  CHECK(saw_hsdp4);
  for (const auto& c : space) CHECK((!c.train.sp || c.plan.tp > 1));
  // torchtitan's per-op checkpointing joins only when --recompute lists it, and only on the PyTorch stack's schemes
  // (zero2, zero3, fsdp: plan_error drops it for zero0/zero1, whose default stack is Megatron): tp1 3 + tp2 3·2 = 9.
  SpaceFilter o = f;
  o.recompute = {Recompute::Op};
  const auto op_space = enumerate_space(test::llama2_7b(), test::node_of(8), 8, test::train(4096, 8), o);
  CHECK(op_space.size() == 9);
  for (const auto& c : op_space) CHECK(c.train.stack == Stack::PyTorch);
}

TEST_CASE("llama3-70b on 512 GPUs: every candidate valid, unique, deterministic, filters honoured") {
  const auto m = test::llama3_70b();
  const auto hw = test::node_of(8);
  TrainingConfig base = test::train(8192, 512);
  const auto a = enumerate_space(m, hw, 512, base, {});
  const auto b = enumerate_space(m, hw, 512, base, {});
  REQUIRE(a.size() == b.size());
  CHECK(a.size() > 1000);  // "thousands of plans" (issue 4)
  std::set<std::string> keys;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(key(a[i]) == key(b[i]));  // same order every time
    keys.insert(key(a[i]));
    const auto& c = a[i];
    CHECK(c.plan.world() == 512);
    CHECK(c.plan.tp <= 8);  // max_tp_per_node defaults to the 8 GPUs of a node
    CHECK(plan_error(c.plan, m, hw, c.train) == std::nullopt);
    CHECK(c.train.schedule != Schedule::GPipe);  // GPipe only when listed
    if (c.plan.vpp > 1) CHECK(c.train.micro_batches(c.plan) % c.plan.pp == 0);
    if ((c.plan.sharding == Sharding::Zero2 || c.plan.sharding == Sharding::Zero3)) CHECK(c.plan.pp == 1);
    if (c.plan.sharding == Sharding::HSDP) CHECK(c.plan.hsdp_group == 8 / (c.plan.tp * c.plan.cp));
  }
  CHECK(keys.size() == a.size());  // no duplicates

  SpaceFilter f;
  f.tp = {4, 8};
  f.pp = {4};
  f.vpp = {1, 5};
  f.mbs = {1, 2};
  f.sharding = {Sharding::Zero1};
  f.recompute = {Recompute::Selective};
  f.sp = {1};
  f.schedule = {Schedule::GPipe, Schedule::Interleaved};
  const auto s = enumerate_space(m, hw, 512, base, f);
  CHECK(!s.empty());
  for (const auto& c : s) {
    CHECK((c.plan.tp == 4 || c.plan.tp == 8));
    CHECK(c.plan.pp == 4);
    CHECK((c.plan.vpp == 1 || c.plan.vpp == 5));
    CHECK((c.train.mbs == 1 || c.train.mbs == 2));
    CHECK(c.plan.sharding == Sharding::Zero1);
    CHECK(c.train.recompute == Recompute::Selective);
    CHECK(c.train.sp);
    CHECK(c.train.schedule == (c.plan.vpp > 1 ? Schedule::Interleaved : Schedule::GPipe));
  }
  // tp across nodes only when allowed: max_tp_per_node 16 lets tp16 in (llama3-70b: 64 heads, 8 KV heads → 2x copies).
  SpaceFilter wide;
  wide.max_tp_per_node = 16;
  wide.tp = {16};
  wide.pp = {1};
  const auto w = enumerate_space(m, hw, 512, base, wide);
  CHECK(!w.empty());
  for (const auto& c : w) CHECK(c.plan.tp == 16);
  // An explicit tp list is honoured without max_tp_per_node; an explicit cap below it empties the space.
  wide.max_tp_per_node = 0;
  CHECK(enumerate_space(m, hw, 512, base, wide).size() == w.size());
  wide.max_tp_per_node = 8;
  CHECK(enumerate_space(m, hw, 512, base, wide).empty());
  // Without a tp list, the default cap is the node: no tp16 anywhere in the full space (checked above, tp ≤ 8).
}

TEST_CASE("llama3-405b on 16,384 GPUs: the 126-layer interleaving of the Llama 3 run is in the space") {
  const auto space = enumerate_space(test::llama3_405b(), test::node_of(8), 16384, test::train(8192, 2048), [] {
    SpaceFilter f;
    f.tp = {8};
    f.cp = {1};
    f.pp = {8};
    f.mbs = {1};
    f.recompute = {Recompute::None};
    f.sharding = {Sharding::Zero1};
    return f;
  }());
  // pp8: (126 + 2) % (8·8) = 0 → vpp8 is a default; dp = 16384 / 64 = 256; m = 2048/256 = 8, 8 % pp8 = 0.
  bool found = false;
  for (const auto& c : space) found |= c.plan.to_string() == "tp8pp8dp256vpp8zero1" && c.train.sp;
  CHECK(found);
}

TEST_CASE("space errors: fp8 on a GPU without it, bad GPU count") {
  TrainingConfig t = test::train(4096, 64);
  t.precision = Precision::FP8;
  CHECK(test::error_of([&] { enumerate_space(test::llama2_7b(), test::node_of(8, false), 8, t, {}); }) ==
        doctest::Contains("fp8"));
  CHECK(test::error_of([&] { enumerate_space(test::llama2_7b(), test::node_of(8), 0, test::train(4096, 64), {}); }) ==
        doctest::Contains("--gpus"));
  // gbs 0 → the sweep default ⌈4,194,304 / 4096⌉ = 1024 for every candidate.
  const auto d = enumerate_space(test::llama2_7b(), test::node_of(8), 8, test::train(4096, 0), {});
  REQUIRE(!d.empty());
  for (const auto& c : d) CHECK(c.train.gbs == 1024);
}

// The scenario schema (plans/scenario.hpp): the option table's rules, "auto" values resolved in one function, and the
// three ways in (flags, JSON, flag strings) agreeing.
#include "fixtures.hpp"
#include "plans/scenario.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace parsim;
using parsim::test::error_of;

TEST_CASE("option table: keys are the flags without dashes, '-' → '_'; every row is documented") {
  for (const auto& o : scenario_options()) {
    CAPTURE(o.key);
    std::string k = o.flag.substr(2);
    for (char& c : k)
      if (c == '-') c = '_';
    CHECK(k == o.key);
    CHECK(!o.help.empty());
    CHECK(o.set);
    CHECK(o.get);
    CHECK((o.use & kUsePredict));  // every scenario option is a predict (and validate) option
  }
  // The sweep varies these per plan, so it does not take them as fixed inputs.
  for (const char* k : {"plan", "mbs", "recompute", "sp", "schedule"}) {
    CAPTURE(k);
    CHECK_FALSE((find_option(scenario_options(), k)->use & kUseSweep));
  }
}

TEST_CASE("resolve_training: every auto value, derived") {
  const ModelSpec m = test::llama2_7b();
  TrainingConfig in = ScenarioInput::input_defaults();
  // tp8pp2dp4, zero0: seq → the model's 4096; gbs → ⌈4,194,304 / 4096⌉ = 1024, a multiple of dp·mbs = 4;
  // schedule → 1F1B (vpp 1); stack → Megatron (zero0); sequence parallelism on (Megatron with tp > 1, 4096 % 8 = 0);
  // TP overlap off (Megatron-LM's default, recipes opt in); flash attention and both DP overlaps on; bucket →
  // Megatron-Core max(40M, 1M × dp·cp = 4M) = 40M elements × 4 B (fp32 main grads) = 160 MB.
  const TrainingConfig a = resolve_training(parse_plan("tp8pp2dp4"), m, in);
  CHECK(a.seq == 4096);
  CHECK(a.gbs == 1024);
  CHECK(a.schedule == Schedule::OneFOneB);
  CHECK(a.stack == Stack::Megatron);
  CHECK(a.sp);
  CHECK_FALSE(a.sp_auto);
  CHECK(a.flash_attention);
  CHECK(a.overlap_grad_reduce);
  CHECK(a.overlap_param_gather);
  CHECK_FALSE(a.tp_comm_overlap);
  CHECK_FALSE(a.tp_comm_overlap_auto);
  CHECK(a.bucket_bytes == 160e6);
  CHECK(is_resolved(a));
  CHECK_FALSE(is_resolved(in));
  // Idempotent.
  const TrainingConfig again = resolve_training(parse_plan("tp8pp2dp4"), m, a);
  CHECK(again.bucket_bytes == a.bucket_bytes);
  CHECK(again.tp_comm_overlap == a.tp_comm_overlap);
  // TE userbuffer overlap stays off with SP on too: only an explicit --tp-comm-overlap turns it on.
  CHECK_FALSE(resolve_training(parse_plan("tp8pp2dp4"), m, in).tp_comm_overlap);
  // No SP where it cannot apply or the stack does not default to it: tp1; 4100 tokens not divisible by tp8; the
  // PyTorch stack (fsdp); the legacy stack. An explicit --sp / --no-sp wins.
  CHECK_FALSE(resolve_training(parse_plan("dp8"), m, in).sp);
  TrainingConfig odd = in;
  odd.seq = 4100;
  CHECK_FALSE(resolve_training(parse_plan("tp8dp4"), m, odd).sp);
  CHECK_FALSE(resolve_training(parse_plan("tp8dp8fsdp"), m, in).sp);
  TrainingConfig nosp = in;
  nosp.sp_auto = false, nosp.sp = false;
  CHECK_FALSE(resolve_training(parse_plan("tp8pp2dp4"), m, nosp).sp);
  // The legacy stack (Megatron-LM 2021–22 / Megatron-DeepSpeed): no SP, unfused attention, gradients reduced after the
  // backward (no grad-reduce or param-gather overlap), DeepSpeed's 5e8-element buckets × 4 B fp32 grads = 2 GB.
  TrainingConfig leg = in;
  leg.stack = Stack::MegatronLegacy;
  const TrainingConfig l = resolve_training(parse_plan("tp8pp2dp4"), m, leg);
  CHECK_FALSE(l.sp);
  CHECK_FALSE(l.flash_attention);
  CHECK_FALSE(l.overlap_grad_reduce);
  CHECK_FALSE(l.overlap_param_gather);
  CHECK_FALSE(l.tp_comm_overlap);
  CHECK(l.bucket_bytes == 2e9);
  CHECK(is_resolved(l));
  in.sp_auto = false, in.sp = true;
  // vpp2 → interleaved; dp 50 at seq 4096 → gbs rounded up to a multiple of 50: ⌈1024/50⌉·50 = 1050.
  const TrainingConfig v = resolve_training(parse_plan("tp8pp2dp50vpp2"), m, in);
  CHECK(v.schedule == Schedule::Interleaved);
  CHECK(v.gbs == 1050);
  // Megatron with dp 64 × cp 2 = 128 ≥ 40: max(40M, 128M) = 128M elements × 4 B = 512 MB.
  CHECK(resolve_training(parse_plan("tp1pp1dp64cp2"), m, in).bucket_bytes == 512e6);
  // fsdp → the PyTorch stack: 25 MB buckets (DDP bucket_cap_mb), no TP overlap.
  const TrainingConfig f = resolve_training(parse_plan("tp8dp8fsdp"), m, in);
  CHECK(f.stack == Stack::PyTorch);
  CHECK(f.bucket_bytes == 25e6);
  CHECK_FALSE(f.tp_comm_overlap);
  // zero2 → DeepSpeed's 5e8-element buckets (domain-notes §4) of 2-byte elements = 1 GB.
  CHECK(resolve_training(parse_plan("tp8dp8zero2"), m, ScenarioInput::input_defaults()).bucket_bytes == 1e9);
  // Explicit values are kept.
  in.stack = Stack::PyTorch;
  in.bucket_bytes = 1e6;
  in.tp_comm_overlap_auto = false;
  in.tp_comm_overlap = true;
  const TrainingConfig e = resolve_training(parse_plan("tp8pp2dp4"), m, in);
  CHECK(e.stack == Stack::PyTorch);
  CHECK(e.bucket_bytes == 1e6);
  CHECK(e.tp_comm_overlap);
}

TEST_CASE("flags, JSON and flag strings fill the same ScenarioInput") {
  const ScenarioInput a = scenario_from_flag_string(
      "--model llama7b --plan tp8pp2dp4 --seq 2048 --gbs 64 --mbs 2 --recompute selective --sp --precision fp8 "
      "--stack pytorch --bucket-mb 12.5 --no-overlap-grad-reduce --tp-comm-overlap --attention unfused --fsdp-no-sync",
      "test");
  ScenarioInput b;
  apply_scenario_json(nlohmann::json::parse(R"({"model": "llama7b", "plan": "tp8pp2dp4", "seq": 2048, "gbs": 64,
      "mbs": 2, "recompute": "selective", "sp": true, "precision": "fp8", "stack": "pytorch", "bucket_mb": 12.5,
      "no_overlap_grad_reduce": true, "tp_comm_overlap": true, "attention": "unfused", "fsdp_no_sync": true})"),
                      "test.json", b);
  CHECK(options_to_json(scenario_options(), a) == options_to_json(scenario_options(), b));
  CHECK(b.train.bucket_bytes == 12.5e6);
  CHECK(b.train.recompute == Recompute::Selective);
  CHECK_FALSE(b.train.flash_attention);
  CHECK_FALSE(b.train.tp_comm_overlap_auto);
  // Writing back as flags and reading them again is the identity.
  std::vector<std::string> flags = options_to_flags(scenario_options(), b, kUsePredict);
  ScenarioInput c;
  apply_scenario_options(option_values_from_tokens(scenario_options(), flags, "round trip"), c);
  CHECK(options_to_json(scenario_options(), c) == options_to_json(scenario_options(), b));
  // Defaults are not written (except the identity: model, gpu).
  ScenarioInput d;
  d.model = "llama7b";
  d.plan = "tp8";
  CHECK(options_to_flags(scenario_options(), d, kUsePredict) ==
        std::vector<std::string>{"--model", "llama7b", "--plan", "tp8", "--gpu", "h100"});
}

TEST_CASE("bad values read the same from every front end") {
  using doctest::Contains;
  ScenarioInput x;
  CHECK(error_of([&] { apply_scenario_json(nlohmann::json::parse(R"({"seq": -4})"), "s.json", x); }) ==
        Contains("--seq must be a positive integer, got '-4'"));
  CHECK(error_of([&] { scenario_from_flag_string("--seq -4", "flags"); }) ==
        Contains("--seq must be a positive integer, got '-4'"));
  CHECK(error_of([&] { apply_scenario_json(nlohmann::json::parse(R"({"seq": 4096.5})"), "s.json", x); }) ==
        Contains("s.json: 'seq' must be a positive integer"));
  CHECK(error_of([&] { apply_scenario_json(nlohmann::json::parse(R"({"sequence": 4096})"), "s.json", x); }) ==
        Contains("s.json: unknown key 'sequence' (valid keys: model, plan,"));
  CHECK(error_of([&] { apply_scenario_json(nlohmann::json::parse(R"({"stack": "jax"})"), "s.json", x); }) ==
        Contains("--stack 'jax' is not valid (choose auto, megatron, megatron-legacy, pytorch)"));
  CHECK(error_of([&] { apply_scenario_json(nlohmann::json::parse(R"([1, 2])"), "s.json", x); }) ==
        Contains("s.json: expected a JSON object"));
  CHECK(error_of([&] { scenario_from_flag_string("--tp-comm-overlap --no-tp-comm-overlap", "flags"); }) ==
        Contains("contradict each other"));
  CHECK(error_of([&] { scenario_from_flag_string("--sp --no-sp", "flags"); }) ==
        Contains("--sp and --no-sp contradict each other"));
  CHECK(error_of([&] { scenario_from_flag_string("--plan tp8 --model x", "row", false); }) ==
        Contains("row: --model is not allowed"));
  CHECK(error_of([&] { scenario_from_flag_string("--gpus-per-node 2048", "flags"); }) ==
        Contains("--gpus-per-node 2048 is too large (at most 1024)"));
  CHECK(error_of([] { resolve_scenario(ScenarioInput{}); }) == Contains("--model is required"));
}

TEST_CASE("Megatron --deterministic-mode runs every NCCL collective as a ring (NCCL_ALGO=Ring)") {
  // Megatron-LM validate_args requires NCCL_ALGO in {Tree, Ring, CollnetDirect, CollnetChain, ^NVLS} under
  // --deterministic-mode and megatron/core set_deterministic_algorithms sets "Ring" when it is not; the deterministic
  // CI tests set NCCL_ALGO: Ring. resolve_scenario applies it to the hardware's NCCL algorithm set (CollectiveLibrary
  // algorithms = NCCL_ALGO).
  ScenarioInput in;
  in.model = "llama3-70b";
  in.plan = "tp8pp10dp1";
  in.gpu = "b200";
  const Scenario plain = resolve_scenario(in);
  CHECK(plain.hw.comm.algorithms == (kAlgoTree | kAlgoRing | kAlgoCollNet | kAlgoNVLS | kAlgoNVLSTree | kAlgoPAT));
  in.train.deterministic = true;
  const Scenario det = resolve_scenario(in);
  CHECK(det.hw.comm.algorithms == kAlgoRing);
  // What it changes: a 128 MiB TP all-reduce over the 8 B200s of a node. NCCL's tuner picks NVLS there
  // (hardware/nccl_model.cpp; 8 ≥ nvls_min_gpus 6); under NCCL_ALGO=Ring the same call is exactly the forced ring.
  GroupShape g;
  g.size = g.per_node = 8;
  const double S = 128.0 * 1024 * 1024;
  CHECK(collective_time(plain.hw, Collective::AllReduce, S, g).algo == CollAlgo::NVLS);
  const CollectiveCost ring = collective_time(det.hw, Collective::AllReduce, S, g);
  CHECK(ring.algo == CollAlgo::Ring);
  CHECK(ring.time_s == collective_time(plain.hw, Collective::AllReduce, S, g, CollAlgo::Ring).time_s);
  // The ring moves 2(n−1)/n of S per rank where NVLS reduces in the switch: slower on NVLink5 at this size.
  CHECK(ring.time_s > collective_time(plain.hw, Collective::AllReduce, S, g).time_s);
}

TEST_CASE("--moe-force-balance: random router logits load the busiest EP rank by the expected maximum of ep draws") {
  // Mixtral 8x7B (8 experts, top-2) on tp1pp1dp8ep8, seq 4096, mbs 1: T = 4,096 tokens per rank, T_g = 8 · 4,096 =
  // 32,768 over the EP group. One rank holds 1 of the 8 experts; its pairs: mean μ = T_g·k/ep = 8,192, variance
  // σ² = T_g·k·(1/8)·(7/8)·(E − k)/(E − 1) = 32,768 · 2 · 0.109375 · 6/7 = 6,144 → σ = 78.38, σ/μ = 0.009568.
  // z(8), the expected maximum of 8 standard normals: 1.4236 exactly, 1.435 by Blom's approximation that
  // expected_max_std_normal uses (tests/hardware/test_compute_cost.cpp). Imbalance 1 + 1.435 · 0.009568 = 1.01373.
  const ModelSpec m = test::mixtral_8x7b();
  TrainingConfig in = ScenarioInput::input_defaults();
  in.seq = 4096;
  in.mbs = 1;
  in.moe_force_balance = true;
  const TrainingConfig a = resolve_training(parse_plan("tp1pp1dp8ep8"), m, in);
  const double sigma_over_mu = std::sqrt(32768.0 * 2 * (1.0 / 8) * (7.0 / 8) * 6 / 7) / 8192;
  CHECK(sigma_over_mu == doctest::Approx(0.009568).epsilon(1e-3));
  CHECK(a.moe_imbalance == doctest::Approx(1 + expected_max_std_normal(8) * sigma_over_mu).epsilon(1e-12));
  CHECK(a.moe_imbalance == doctest::Approx(1.01373).epsilon(1e-5));
  // More tokens per micro-batch: closer to balanced (σ/μ ∝ 1/√T); no expert parallelism: balanced by definition.
  in.mbs = 4;
  CHECK(resolve_training(parse_plan("tp1pp1dp8ep8"), m, in).moe_imbalance - 1 ==
        doctest::Approx((a.moe_imbalance - 1) / 2).epsilon(1e-9));
  CHECK(resolve_training(parse_plan("tp1pp1dp8"), m, in).moe_imbalance == 1.0);
  // A stated --moe-imbalance must agree with it (a predict's settings fed back carry both); otherwise one line.
  in.mbs = 1;
  in.moe_imbalance = 1.0;
  in.moe_imbalance_given = true;
  CHECK(error_of([&] { (void)resolve_training(parse_plan("tp1pp1dp8ep8"), m, in); }) ==
        doctest::Contains("--moe-imbalance 1 with --moe-force-balance, which sets it to 1.01373 for this plan"));
  in.moe_imbalance = a.moe_imbalance;
  CHECK(resolve_training(parse_plan("tp1pp1dp8ep8"), m, in).moe_imbalance == a.moe_imbalance);
}

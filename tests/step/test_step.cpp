// Contract tests of the step simulator (the simulator issue's "Done means" list). Each expected value is derived in a
// comment before its assertion.
#include "helpers.hpp"
#include "sim/present/render.hpp"
#include "sim/step/analysis.hpp"
#include "sim/step/costs.hpp"

#include <doctest/doctest.h>

using namespace parsim;
using namespace parsim::testing;

namespace {

Scenario uniform_pipeline(int pp, int vpp, int m, Schedule sch, bool free_net = true) {
  Scenario sc;
  sc.model = uniform_model(32);
  sc.hw = resolve_hardware("h100");
  if (free_net) sc.hw = free_network(sc.hw);
  sc.plan = parse_plan("tp1pp" + std::to_string(pp) + "dp1" + (vpp > 1 ? "vpp" + std::to_string(vpp) : ""));
  sc.train.seq = 2048;
  sc.train.mbs = 1;
  sc.train.gbs = m;
  sc.train.schedule = sch;
  validate_plan(sc.plan, sc.model, sc.hw, sc.train);
  return sc;
}

}  // namespace

TEST_CASE("bubble of uniform stages with free communication matches the closed forms") {
  // Narayanan et al. 2021 §2.2: GPipe and 1F1B idle (p−1)/(m+p−1) of the window; interleaved (p−1)/(v·m+p−1).
  // p = 4, m = 8: 3/11 = 0.2727; v = 2: 3/19 = 0.1579. Embedding and LM head of a 128-token vocabulary add < 1 %.
  const StepReport gpipe = evaluate(uniform_pipeline(4, 1, 8, Schedule::GPipe));
  const StepReport ofob = evaluate(uniform_pipeline(4, 1, 8, Schedule::OneFOneB));
  const StepReport inter = evaluate(uniform_pipeline(4, 2, 8, Schedule::Interleaved));
  CHECK(gpipe.bubble_fraction == doctest::Approx(3.0 / 11).epsilon(0.03));
  CHECK(ofob.bubble_fraction == doctest::Approx(3.0 / 11).epsilon(0.03));
  CHECK(inter.bubble_fraction == doctest::Approx(3.0 / 19).epsilon(0.03));
  // Without pipelining there is no bubble by definition.
  CHECK(evaluate(uniform_pipeline(1, 1, 8, Schedule::OneFOneB)).bubble_fraction == 0.0);
}

TEST_CASE("GPipe keeps about twice the activations of 1F1B for p = 4, m = 8") {
  // GPipe: every stage holds all m = 8 micro-batches before the first backward; 1F1B stage 0 holds p = 4
  // (Narayanan 2021 §2.2; domain-notes §5). Ratio 8/4 = 2, less a little for the shared backward working set.
  const StepReport g = evaluate(uniform_pipeline(4, 1, 8, Schedule::GPipe));
  const StepReport f = evaluate(uniform_pipeline(4, 1, 8, Schedule::OneFOneB));
  const double ratio = g.memory.activations_gib / f.memory.activations_gib;
  CHECK(ratio > 1.7);
  CHECK(ratio < 2.1);
}

TEST_CASE("doubling the micro-batches less than doubles the step (the bubble is amortised)") {
  // Step ≈ (m + p − 1)·(tF + tB): m 8 → 16 gives 19/11 = 1.73 with free communication.
  const double t8 = evaluate(uniform_pipeline(4, 1, 8, Schedule::OneFOneB, false)).step_time_s;
  const double t16 = evaluate(uniform_pipeline(4, 1, 16, Schedule::OneFOneB, false)).step_time_s;
  CHECK(t16 / t8 > 1.5);
  CHECK(t16 / t8 < 2.0);
}

TEST_CASE("full recompute costs 1.12-1.45x and lifts HFU above MFU; selective sits between") {
  // Full recompute adds one forward (≈ 1/3 of fwd+bwd FLOPs) to the backward: ≤ 4/3 of the compute, less where
  // communication and the optimizer do not grow. Selective adds only the attention core's forward.
  auto run = [](const char* rc) {
    ScenarioInput a;
    a.model = "llama2-7b";
    a.plan = "tp8pp2dp4";
    a.train.recompute = parse_recompute(rc);
    return evaluate(resolve_scenario(a));
  };
  const StepReport none = run("none"), sel = run("selective"), full = run("full");
  const double ratio = full.step_time_s / none.step_time_s;
  CHECK(ratio >= 1.12);
  CHECK(ratio <= 1.45);
  CHECK(none.hfu == doctest::Approx(none.mfu));
  CHECK(full.hfu > full.mfu * 1.2);
  CHECK(sel.step_time_s > none.step_time_s);
  CHECK(sel.step_time_s < full.step_time_s);
  CHECK(sel.memory.activations_gib <= none.memory.activations_gib);
  CHECK(sel.memory.activations_gib > full.memory.activations_gib);
}

TEST_CASE("FSDP is never faster than DDP and always leaner") {
  for (const char* model : {"llama2-7b", "llama3-8b"}) {
    for (int dp : {8, 16, 32}) {
      for (std::int64_t mbs : {1, 2}) {
        const std::string d = "dp" + std::to_string(dp);
        // Both with each stack's defaults (DDP → Megatron, FSDP → PyTorch) and both on the PyTorch stack. There the
        // baseline is DeepSpeed ZeRO-1 (16-bit parameters, zero1), not DDP: PyTorch DDP trains fp32 parameters under
        // autocast (costs/layer.cpp ddp_autocast_work), which FSDP's 16-bit param_dtype avoids, so FSDP can beat it;
        // against ZeRO-1 the only difference is the sharding: FSDP adds per-layer gathers to the same compute.
        for (const char* stack : {"auto", "pytorch"}) {
          ScenarioInput a;
          a.model = model;
          a.plan = std::string(stack) == "pytorch" ? d + "zero1" : d;
          a.train.mbs = mbs;
          a.train.seq = 4096;
          a.train.stack = parse_stack(stack);
          const StepReport ddp = evaluate(resolve_scenario(a));
          a.plan = d + "fsdp";
          const StepReport fsdp = evaluate(resolve_scenario(a));
          CAPTURE(model);
          CAPTURE(dp);
          CAPTURE(mbs);
          CAPTURE(stack);
          CHECK(fsdp.step_time_s >= ddp.step_time_s);
          CHECK(fsdp.memory.peak_gib < ddp.memory.peak_gib);
        }
      }
    }
  }
}

TEST_CASE("multi-node data parallelism always exposes some communication (the last bucket)") {
  // The last bucket's all-reduce starts when the last layer's backward ends: nothing is left to hide it behind.
  for (const char* plan : {"dp16", "tp8dp4", "tp4pp2dp8", "dp16zero1", "dp32fsdp"}) {
    const StepReport r = evaluate(scenario("llama2-7b", plan, "h100", 0, 1, 4096));
    CAPTURE(plan);
    CHECK(r.exposed_by_kind_s[Axis::dp] > 0);
  }
}

TEST_CASE("TP spanning two 4-GPU nodes is much slower than TP inside one 8-GPU node") {
  // With sequence parallelism every TP collective is a ring all-gather / reduce-scatter. Inside an 8-GPU NVSwitch
  // node its bus bandwidth is ≈ 368 GB/s; split over two 4-GPU nodes the ring crosses the network and is bound by the
  // node's 4 NICs: 4 × 50 GB/s × 0.94 ≈ 188 GB/s — about half. All-reduces (no SP) suffer less: NCCL's 2-node tree
  // moves only S per node across the network (domain-notes §7), ≈ 1.4× slower than NVLS in one node.
  ScenarioInput a;
  a.model = "llama2-7b";
  a.plan = "tp8dp2";
  a.train.sp_auto = false;
  a.train.sp = true;
  // Eager, a 7B layer at tp8 and micro-batch 1 is host-bound (step 69.4 s = 4.2 ms per layer and micro-batch of
  // Megatron host issue, against 1.6 ms with CUDA graphs; sim/step/costs/host.cpp): the host would hide the network. CUDA graphs
  // take the host out (one launch per layer pass) so that the step shows the collectives.
  a.train.cuda_graphs = true;
  const StepReport inside = evaluate(resolve_scenario(a));
  a.gpus_per_node = 4;
  const StepReport spanning = evaluate(resolve_scenario(a));
  const double tp_in = inside.stages[0].comm_by_kind_s[Axis::tp], tp_span = spanning.stages[0].comm_by_kind_s[Axis::tp];
  CHECK(tp_span > 1.7 * tp_in);
  CHECK(spanning.step_time_s > 1.2 * inside.step_time_s);
  a.train.sp = false;
  const StepReport ar_span = evaluate(resolve_scenario(a));
  a.gpus_per_node = 0;
  const StepReport ar_in = evaluate(resolve_scenario(a));
  CHECK(ar_span.stages[0].comm_by_kind_s[Axis::tp] > 1.25 * ar_in.stages[0].comm_by_kind_s[Axis::tp]);
  CHECK(ar_span.step_time_s > ar_in.step_time_s);
}

TEST_CASE("a heavy LM head on the last stage widens the bubble") {
  Scenario light = uniform_pipeline(4, 1, 8, Schedule::OneFOneB);
  Scenario heavy = light;
  heavy.model.vocab = 256000;  // LM head: 2·h·V = 2.1 GFLOP/token, ≈ 1.1 layers' worth, all on stage 3
  const double b_light = evaluate(light).bubble_fraction, b_heavy = evaluate(heavy).bubble_fraction;
  CHECK(b_heavy > b_light + 0.02);
}

TEST_CASE("fp8 is faster than bf16 but by less than 2x") {
  ScenarioInput a;
  a.model = "llama3-8b";
  a.plan = "tp2dp4";
  const double bf16 = evaluate(resolve_scenario(a)).step_time_s;
  a.train.precision = Precision::FP8;
  const double fp8 = evaluate(resolve_scenario(a)).step_time_s;
  CHECK(fp8 < bf16);
  CHECK(bf16 / fp8 < 2.0);
}

TEST_CASE("sequence parallelism cuts activations by about tp; cp2 halves them") {
  // Korthikanti 2022 Table 2: TP+SP stores sbh/t·(34 + …) — 1/t of the unparallelised layer (flash attention:
  // the selective row 34·sbh/t). Compare per-layer activation bytes through the memory report's activations.
  auto act = [](const std::string& plan, bool sp) {
    ScenarioInput a;
    a.model = "llama2-7b";
    a.plan = plan;
    a.train.sp_auto = false;
    a.train.sp = sp;
    a.train.gbs = 64;
    return evaluate(resolve_scenario(a)).memory.activations_gib;
  };
  const double tp1 = act("tp1dp8", false), tp8sp = act("tp8dp1", true), tp8 = act("tp8dp1", false);
  CHECK(tp1 / tp8sp == doctest::Approx(8.0).epsilon(0.2));
  CHECK(tp8 > tp8sp * 2);
  const double cp1 = act("tp1dp8", false), cp2 = act("tp1cp2dp4", false);
  CHECK(cp1 / cp2 == doctest::Approx(2.0).epsilon(0.1));
}

TEST_CASE("FSDP's exposed share shrinks as sequences grow") {
  // Per-layer gathers scale with parameters (fixed), compute with tokens per micro-batch: longer sequences hide more.
  double prev = 1.0;
  for (std::int64_t seq : {1024, 4096, 16384}) {
    const StepReport r = evaluate(scenario("llama2-7b", "dp16fsdp", "h100", 64, 1, seq));
    const double share = r.exposed_comm_s / r.step_time_s;
    CAPTURE(seq);
    CHECK(share < prev);
    prev = share;
  }
}

TEST_CASE("identical runs give identical output") {
  const Scenario sc = scenario("llama2-7b", "tp8pp2dp4");
  const auto a = report_to_json(sc, evaluate(sc), std::nullopt).dump();
  const auto b = report_to_json(sc, evaluate(sc), std::nullopt).dump();
  CHECK(a == b);
}

TEST_CASE("model state memory falls strictly from ZeRO-0 to 3, FSDP equals ZeRO-3; 7B unsharded does not fit") {
  auto state = [](const char* plan) {
    const StepReport r = evaluate(scenario("llama2-7b", plan, "h100", 64, 1, 4096));
    return r.memory.weights_gib + r.memory.grads_gib + r.memory.optimizer_gib;
  };
  const double z0 = state("dp8"), z1 = state("dp8zero1"), z2 = state("dp8zero2"), z3 = state("dp8zero3"),
               fs = state("dp8fsdp");
  // 6.74e9 params: 18 B → 113 GiB; 6 + 12/8 = 7.5 B → 47 GiB; 2 + 14/8 = 3.75 B → 23.5 GiB; 16/8 = 2 B → 12.6 GiB.
  CHECK(z0 == doctest::Approx(6.738e9 * 18 / kGiB).epsilon(0.02));
  CHECK(z1 < z0);
  CHECK(z2 < z1);
  CHECK(z3 < z2);
  CHECK(fs == doctest::Approx(z3));
  // One H100 (79.2 GiB usable) cannot hold 113 GiB of model state.
  const StepReport one = evaluate(scenario("llama2-7b", "dp1", "h100", 1, 1, 4096));
  CHECK_FALSE(one.memory.fits);
}

TEST_CASE("long pipelines: extending the periodic steady state equals simulating every micro-batch") {
  // evaluate() plays out 2p and 3p micro-batches and extends linearly (evaluate.cpp); keep_timeline forces the full
  // simulation. Both are event simulations of the same step, so they must agree to rounding.
  struct Case {
    const char* model;
    const char* plan;
    std::int64_t gbs, mbs;
  };
  const Case cases[] = {
      {"llama2-7b", "tp8pp2dp4", 1024, 1},       // 1F1B, 256 micro-batches, DDP across nodes
      {"llama3-70b", "tp8pp4dp4vpp5", 512, 1},   // interleaved, 128 micro-batches
      {"llama3-70b", "tp8pp8dp2zero1", 512, 2},  // ZeRO-1 gathers before the first forward
      {"llama2-7b", "tp2dp8fsdp", 512, 2},       // FSDP, no pipeline: 32 micro-batches of per-layer gathers
      {"llama2-7b", "tp4dp4zero2", 256, 2},      // ZeRO-2 reduce-scatter every micro-batch
      {"llama2-13b", "tp4pp5dp2", 200, 1},       // 40 layers on 5 stages, 100 micro-batches
      {"llama3-70b", "tp8pp3dp4vpp2", 480, 1},   // 80 layers on 6 uneven chunks (LM head on the last)
      {"llama3-8b", "tp2cp2pp4dp2", 256, 1},     // context parallel ring inside pipeline stages
      {"llama3-8b", "tp4pp2dp8hsdp4", 1024, 1},  // HSDP, explicitly with a pipeline
      {"llama2-7b", "tp1pp8dp8", 512, 1},        // pipeline across nodes, 64 micro-batches
  };
  for (const Case& c : cases) {
    CAPTURE(c.plan);
    const Scenario sc = scenario(c.model, c.plan, "h100", c.gbs, c.mbs, 4096);
    Evaluator ev;
    const StepReport ext = ev.run(sc);
    EvalOptions full_opt;
    full_opt.keep_timeline = true;
    const StepReport full = ev.run(sc, full_opt);
    REQUIRE(ext.simulated_microbatches < full.simulated_microbatches);
    CHECK(ext.step_time_s == doctest::Approx(full.step_time_s).epsilon(1e-9));
    CHECK(ext.bubble_fraction == doctest::Approx(full.bubble_fraction).epsilon(1e-6));
    CHECK(ext.exposed_comm_s == doctest::Approx(full.exposed_comm_s).epsilon(1e-6));
    CHECK(ext.stages[0].compute_s == doctest::Approx(full.stages[0].compute_s).epsilon(1e-9));
    CHECK(ext.memory.peak_gib == doctest::Approx(full.memory.peak_gib).epsilon(1e-12));
    CHECK(ext.mfu == doctest::Approx(full.mfu).epsilon(1e-9));
  }
}

TEST_CASE("overlapping the gradient reduction with the last backward hides most of it") {
  // --no-overlap-grad-reduce: every bucket waits for the whole backward, so the all-reduce of all 4Ψ bytes of fp32
  // gradients is exposed; with overlap (default) only the buckets produced last remain exposed.
  ScenarioInput a;
  a.model = "llama2-7b";
  a.plan = "tp2pp2dp8";
  a.train.gbs = 64;
  const StepReport overlap = evaluate(resolve_scenario(a));
  a.train.overlap_grad_reduce = false;
  const StepReport serial = evaluate(resolve_scenario(a));
  const Axis dp = Axis::dp;
  CHECK(serial.exposed_by_kind_s[dp] > 2 * overlap.exposed_by_kind_s[dp]);
  CHECK(serial.step_time_s > overlap.step_time_s);
  // The communication itself is the same work either way, up to bucket rounding: overlapped, each layer group's
  // gradients go out in ⌊bytes / 25 MB⌋ buckets of their own; serial, the stage's gradients are cut once.
  CHECK(serial.stages[0].comm_by_kind_s[dp] == doctest::Approx(overlap.stages[0].comm_by_kind_s[dp]).epsilon(0.02));
}

TEST_CASE("activation offloading: the offloaded layers' activations leave the GPU, the waits lengthen the step") {
  // 8 uniform layers (h 4096, seq 4096, mbs 1) on 8 GB200 (NVLink-C2C, 450 GB/s each way), Megatron-Core, dp8; the
  // first 3 layers offloaded. Memory: at most 8 − 3 = 5 layers' activation sets stay on the GPU (Transformer Engine's
  // limit), so the allocated peak — at the end of the forward, one micro-batch in flight at pp 1 — is lower by exactly
  // 3 layers' stored activations (layer_activation_bytes, what memory.cpp counts per layer).
  ScenarioInput in;
  in.model = "llama2-7b";
  in.plan = "dp8";
  in.gpu = "gb200";
  in.train.gbs = 16;
  in.train.mbs = 1;
  in.train.seq = 4096;
  in.train.stack = Stack::Megatron;
  Scenario base = resolve_scenario(in);
  base.model = uniform_model(8);
  Scenario off = base;
  off.train.cpu_offload_layers = 3;
  const StepReport r0 = evaluate(base), r3 = evaluate(off);
  const double layer_gib = layer_activation_bytes(base, base.model.layer(0)) / (1024.0 * 1024.0 * 1024.0);
  CHECK(r0.memory.allocated_peak_gib - r3.memory.allocated_peak_gib == doctest::Approx(3 * layer_gib).epsilon(1e-6));
  REQUIRE(r3.cpu_offload.has_value());
  CHECK_FALSE(r0.cpu_offload.has_value());
  CHECK(r3.cpu_offload->layers == 3);
  CHECK(r3.cpu_offload->gib_per_microbatch == doctest::Approx(3 * layer_gib));
  // Time: the waits the schedule plays (costs/offload.cpp) sit on the compute stream; the step grows by them, less what
  // the data-parallel reduction's tail already covered (it can only shrink, never grow, the difference).
  CHECK(r3.step_time_s >= r0.step_time_s);
  CHECK(r3.step_time_s <= r0.step_time_s + r3.cpu_offload->exposed_s + 1e-9);
  // Over PCIe Gen5 (a B200's 64 GB/s each way) the same copies take 7× longer: the waits grow.
  Scenario pcie = off;
  pcie.hw.node.host_link_gbytes_per_s = 64;
  const StepReport rp = evaluate(pcie);
  CHECK(rp.cpu_offload->exposed_s > r3.cpu_offload->exposed_s);
  // Host memory: the gb200 preset states 240 GB per GPU (one Grace's 480 GB LPDDR5X per two GPUs) = 240e9 / 2^30
  // = 223.52 GiB, far above 3 layers' activations: it fits, no warning.
  CHECK(r3.cpu_offload->host_capacity_gib == doctest::Approx(240e9 / (1024.0 * 1024.0 * 1024.0)));
  CHECK(r3.cpu_offload->host_fits());
  CHECK(r3.warnings.empty());
  // A host with less memory per GPU than the 3 offloaded layers (half of them) cannot hold them: the report says so
  // in its first warning (the device still fits), naming the option and the hardware field.
  Scenario small_host = off;
  small_host.hw.node.host_memory_gbytes_per_gpu = 1.5 * layer_gib * (1024.0 * 1024.0 * 1024.0) / 1e9;
  const StepReport rs = evaluate(small_host);
  CHECK(rs.memory.fits);
  CHECK_FALSE(rs.cpu_offload->host_fits());
  REQUIRE_FALSE(rs.warnings.empty());
  CHECK(rs.warnings.front().rfind("HOST MEMORY: --cpu-offloading-num-layers 3", 0) == 0);
  CHECK(rs.warnings.front().find("node.host_memory_gbytes_per_gpu") != std::string::npos);
  // Not stated by the hardware (0): not checked.
  Scenario unstated = small_host;
  unstated.hw.node.host_memory_gbytes_per_gpu = 0;
  const StepReport ru = evaluate(unstated);
  CHECK(ru.cpu_offload->host_capacity_gib == 0);
  CHECK(ru.cpu_offload->host_fits());
}

TEST_CASE("Llama 4 chunked attention beyond one chunk: the chunked layers' attention core, a quarter of the global's") {
  // Llama 4 Scout (36 chunked layers in 8,192-token chunks, 12 global) at s = 32,768 = 4 chunks on H100s, tp 4,
  // Megatron-Core (cuDNN curve: forward eff·s/(s + 160)). A chunked layer computes 4 · 8192²/2 pairs, a quarter of a
  // global layer's 32768²/2 (AttentionShape::forward_flops), in key loops a chunk long: its forward attention time is
  // ¼ × (the global's ramp / the chunk's) = 0.25 × (32768/32928) / (8192/8352) = 0.25 × 0.995141 / 0.980843 =
  // 0.253645 of the global layer's (the 2 µs launch gap each, negligible at these ms). The rest of the layer — the
  // projections, the experts — is the same.
  ScenarioInput in;
  in.model = std::string(PARSIM_TEST_DATA) + "/models/llama-4-scout-17b-16e.config.json";
  in.plan = "tp4pp1dp16ep16etp1zero1";
  in.gpu = "h100";
  in.train.seq = 32768;
  in.train.gbs = 64;
  in.train.mbs = 1;
  in.train.recompute = Recompute::Full;
  const Scenario sc = resolve_scenario(in);
  const std::vector<LayerKindReport> kinds = layer_kind_reports(sc, compute_step_costs(sc));
  const LayerKindReport* chunked = nullptr;
  const LayerKindReport* global = nullptr;
  for (const auto& k : kinds) (k.attention == AttentionKind::Chunked ? chunked : global) = &k;
  REQUIRE(chunked != nullptr);
  REQUIRE(global != nullptr);
  CHECK(chunked->layers == 36);
  CHECK(global->layers == 12);
  CHECK(chunked->forward.parts.attention_s / global->forward.parts.attention_s ==
        doctest::Approx(0.25 * (32768.0 / 32928) / (8192.0 / 8352)).epsilon(0.002));
  CHECK(chunked->forward.parts.gemm_s == global->forward.parts.gemm_s);
}

// Derived-number tests of the cost functions (sim/step/costs/): each expected value is derived in a comment from the
// formula and its inputs, then checked against what compute_step_costs composes.
#include "helpers.hpp"
#include "sim/step/costs.hpp"

#include <doctest/doctest.h>

using namespace parsim;
using namespace parsim::testing;

namespace {

// llama2-7b (h 4096, 32 layers, V 32000), seq 4096, mbs 1 on H100, the given plan; settings resolved.
Scenario llama(const std::string& plan, bool sp = false, Recompute rc = Recompute::None) {
  ScenarioInput in;
  in.model = "llama2-7b";
  in.plan = plan;
  in.train.seq = 4096;
  in.train.gbs = 64;
  in.train.sp_auto = false;  // SP as the test says, not the stack default (on for tp > 1)
  in.train.sp = sp;
  in.train.recompute = rc;
  in.train.tp_comm_overlap_auto = false;  // TP communication fully exposed: the totals are the exposed parts
  in.train.tp_comm_overlap = false;
  return resolve_scenario(in);
}

// One GPU (world 1: no slowest-of-N factor), plan tp1pp1dp1, one sequence of `seq` tokens per step (gbs 1, mbs 1);
// every other setting the scenario default.
ScenarioInput one_gpu_input(const std::string& model, std::int64_t seq = 4096) {
  ScenarioInput in;
  in.model = model;
  in.plan = "tp1pp1dp1";
  in.train.seq = seq;
  in.train.gbs = 1;
  return in;
}

}  // namespace

TEST_CASE("activation tensor, pipeline message and the TP collectives of one layer") {
  // A = b·(s/c)·h·2 B = 1·4096·4096·2 = 33,554,432 B (domain-notes §6).
  const Scenario sc = llama("tp8pp2dp1");
  CHECK(activation_bytes(sc) == 33554432.0);
  const StepCosts k = compute_step_costs(sc);
  // Without SP the pipeline sends A per micro-batch and boundary; with SP A/t = 4,194,304 B.
  CHECK(k.p2p_bytes == 33554432.0);
  CHECK(compute_step_costs(llama("tp8pp2dp1", true)).p2p_bytes == 4194304.0);
  // TP without SP: 2 all-reduces of A forward and 2 backward (Shoeybi 2019 §3) on the 8-GPU NVLink group; exposed in
  // full without userbuffer overlap.
  const Hardware te = megatron_compute(sc.hw);
  const GroupShape tp = group_shape(sc.plan, GroupKind::TP, 8);
  const double ar = collective_time(te, Collective::AllReduce, 33554432.0, tp).time_s;
  CHECK(k.layer.fwd.tp_s == doctest::Approx(2 * ar).epsilon(1e-12));
  CHECK(k.layer.fwd.tp_exposed_s == k.layer.fwd.tp_s);
  CHECK(k.layer.bwd.tp_s == doctest::Approx(2 * ar).epsilon(1e-12));
  // With SP: forward 2·(AG + RS) of A; backward the same plus 2 AG re-gathering the layer inputs (MCore).
  const StepCosts s = compute_step_costs(llama("tp8pp2dp1", true));
  const double ag = collective_time(te, Collective::AllGather, 33554432.0, tp).time_s;
  const double rs = collective_time(te, Collective::ReduceScatter, 33554432.0, tp).time_s;
  CHECK(s.layer.fwd.tp_s == doctest::Approx(2 * (ag + rs)).epsilon(1e-12));
  CHECK(s.layer.bwd.tp_s == doctest::Approx(2 * (ag + rs) + 2 * ag).epsilon(1e-12));
  // The split backward: B carries the dX reduction (2·(AG+RS)), W the re-gather (2·AG).
  CHECK(s.layer.bwd_input.tp_s == doctest::Approx(2 * (ag + rs)).epsilon(1e-12));
  CHECK(s.layer.bwd_weight.tp_s == doctest::Approx(2 * ag).epsilon(1e-12));
  // No TP, no TP communication.
  CHECK(compute_step_costs(llama("tp1pp2dp8")).layer.fwd.tp_s == 0);
}

TEST_CASE("recompute: full adds the whole forward, selective the attention core's forward") {
  // Korthikanti 2022 §5. Selective reruns QKᵀ/softmax/·V: the flash forward of one layer on one TP rank —
  // heads a/t = 32/8 = 4, s = 4096, d = 128, causal (layer_work's attention shape), on the Megatron stack's kernels.
  const StepCosts none = compute_step_costs(llama("tp8pp2dp1"));
  const StepCosts full = compute_step_costs(llama("tp8pp2dp1", false, Recompute::Full));
  const StepCosts sel = compute_step_costs(llama("tp8pp2dp1", false, Recompute::Selective));
  CHECK(full.layer.bwd.compute_s == doctest::Approx(none.layer.bwd.compute_s + none.layer.fwd.compute_s).epsilon(1e-12));
  CHECK(full.layer.bwd.tp_s == doctest::Approx(none.layer.bwd.tp_s + none.layer.fwd.tp_s).epsilon(1e-12));
  const Scenario sc = llama("tp8pp2dp1");
  const LayerWork lw = layer_work(sc.model, 1, 4096, 8, 1, false, Precision::BF16);
  CHECK(lw.attention.heads == 4);
  const double attn_f = attention_fwd_time_s(megatron_compute(sc.hw), lw.attention.forward_flops(), 4096, 128,
                                             Precision::BF16, true);
  // Every compute time of the step runs at the slowest of the plan's 16 GPUs (slowest_gpu_factor, calibration.json's
  // gpu_speed_spread_pct): the recomputed attention too.
  const double slow = slowest_gpu_factor(sc.hw, 16);
  CHECK(sel.layer.bwd.compute_s - none.layer.bwd.compute_s == doctest::Approx(attn_f * slow).epsilon(1e-9));
  // The forward does not change.
  CHECK(full.layer.fwd.compute_s == none.layer.fwd.compute_s);
  // Recompute precedes the input gradient: it lands in B, not in W.
  CHECK(full.layer.bwd_weight.compute_s == none.layer.bwd_weight.compute_s);
  CHECK(full.layer.bwd_input.compute_s ==
        doctest::Approx(none.layer.bwd_input.compute_s + none.layer.fwd.compute_s).epsilon(1e-12));
}

TEST_CASE("recompute: PyTorch's non-reentrant checkpoint stops before the block's last GEMM") {
  // torch.utils.checkpoint with use_reentrant=False (FSDP's checkpoint wrappers: torchtitan, llm-foundry) stops the
  // recompute once the last saved tensor is saved again (early stop, PyTorch >= 2.1, pytorch/pytorch#96866): the
  // inputs of the FFN down-projection, which aten mm saves before it runs. So on the PyTorch stack a full recompute
  // adds the layer forward less the down-projection's forward GEMM: llama2-7b, dp8, mbs 1, seq 4096 → the GEMM
  // m = 4096 tokens, n = h = 4096, k = f = 11008, bf16, on the stack's kernels, at the slowest of the plan's 8 GPUs.
  auto pt = [](Recompute rc, Precision p, bool reentrant = false, bool compile = false) {
    ScenarioInput in;
    in.model = "llama2-7b";
    in.plan = "dp8fsdp";
    in.train.seq = 4096;
    in.train.gbs = 64;
    in.train.stack = Stack::PyTorch;
    in.train.precision = p;
    in.train.recompute = rc;
    in.train.reentrant_checkpoint = reentrant;
    in.train.compile = compile;
    return resolve_scenario(in);
  };
  const Scenario sc = pt(Recompute::Full, Precision::BF16);
  const StepCosts none = compute_step_costs(pt(Recompute::None, Precision::BF16));
  const StepCosts full = compute_step_costs(sc);
  const double down = gemm_time_s(hardware_for_stack(sc.hw, "pytorch"), 4096, 4096, 11008, Precision::BF16, true) *
                      slowest_gpu_factor(sc.hw, 8);
  CHECK(down > 0);
  CHECK(full.layer.bwd.compute_s ==
        doctest::Approx(none.layer.bwd.compute_s + none.layer.fwd.compute_s - down).epsilon(1e-9));
  CHECK(full.layer.bwd_input.compute_s ==
        doctest::Approx(none.layer.bwd_input.compute_s + none.layer.fwd.compute_s - down).epsilon(1e-9));
  // fp8 linears are custom autograd Functions (torchao Float8Linear, TE), which save their tensors after their GEMM
  // has run: the whole forward is recomputed.
  const StepCosts none8 = compute_step_costs(pt(Recompute::None, Precision::FP8));
  const StepCosts full8 = compute_step_costs(pt(Recompute::Full, Precision::FP8));
  CHECK(full8.layer.bwd.compute_s ==
        doctest::Approx(none8.layer.bwd.compute_s + none8.layer.fwd.compute_s).epsilon(1e-12));
  // Compiled (--compile), AOTAutograd's partitioner traces through the fp8 Function and recomputes only what the
  // backward reads: the down-projection's fp8 GEMM (the same shape, fp8, fast accumulation) is skipped again.
  const Scenario sc8c = pt(Recompute::Full, Precision::FP8, false, true);
  const StepCosts none8c = compute_step_costs(pt(Recompute::None, Precision::FP8, false, true));
  const StepCosts full8c = compute_step_costs(sc8c);
  const double down8 = gemm_time_s(hardware_for_stack(sc8c.hw, "pytorch"), 4096, 4096, 11008, Precision::FP8, true) *
                       slowest_gpu_factor(sc8c.hw, 8);
  CHECK(full8c.layer.bwd.compute_s ==
        doctest::Approx(none8c.layer.bwd.compute_s + none8c.layer.fwd.compute_s - down8).epsilon(1e-9));
  // --reentrant-checkpoint (use_reentrant=True, Hugging Face Trainer / DeepSpeed): the whole forward again.
  const StepCosts reent = compute_step_costs(pt(Recompute::Full, Precision::BF16, true));
  CHECK(reent.layer.bwd.compute_s ==
        doctest::Approx(none.layer.bwd.compute_s + none.layer.fwd.compute_s).epsilon(1e-12));

  // torchtitan's per-op checkpointing (--recompute op): the backward re-runs wk, wo and w3 — Llama-2-7B (a = kv = 32
  // heads of 128): wk and wo 4096×4096×4096, w3 4096×11008×4096 (m = s = 4096 tokens) — and every element-wise kernel
  // of the forward, not the attention core nor wq, wv, w1, w2. The element-wise time E is what the forward spends
  // beyond its GEMMs G (qkv 4096×12288×4096, out 4096², gate+up 4096×22016×4096, down 4096×4096×11008) and the
  // attention core, the latter being exactly what selective recompute adds: E = fwd − G − (sel − none).
  const Hardware pth = hardware_for_stack(sc.hw, "pytorch");
  const double slow8 = slowest_gpu_factor(sc.hw, 8);
  auto g = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    return gemm_time_s(pth, m, n, k, Precision::BF16, true) * slow8;
  };
  const StepCosts sel = compute_step_costs(pt(Recompute::Selective, Precision::BF16));
  const StepCosts op = compute_step_costs(pt(Recompute::Op, Precision::BF16));
  const double G = g(4096, 12288, 4096) + g(4096, 4096, 4096) + g(4096, 22016, 4096) + g(4096, 4096, 11008);
  const double attn = sel.layer.bwd.compute_s - none.layer.bwd.compute_s;
  const double elem = none.layer.fwd.compute_s - G - attn;
  CHECK(attn > 0);
  CHECK(elem > 0);
  CHECK(op.layer.bwd.compute_s - none.layer.bwd.compute_s ==
        doctest::Approx(g(4096, 4096, 4096) + g(4096, 4096, 4096) + g(4096, 11008, 4096) + elem).epsilon(1e-9));
  // It re-runs no communication on tp1, and the forward is unchanged.
  CHECK(op.layer.bwd.tp_s == none.layer.bwd.tp_s);
  CHECK(op.layer.fwd.compute_s == none.layer.fwd.compute_s);
}

TEST_CASE("GEMM work of a layer: forward, dgrad and wgrad from the shapes") {
  // Each forward GEMM C[m×n] = A[m×k]·B[k×n] has a dgrad dA[m×k] = dC·Bᵀ and a wgrad dB[k×n] = Aᵀ·dC of the same FLOPs
  // (2mnk), so with the compute of everything else removed the backward GEMMs cost what gemm_time_s says for the
  // transposed shapes. Checked on tp1 (no communication): W's compute = Σ wgrad GEMMs + the per-pass overhead.
  const Scenario sc = llama("tp1pp2dp8");
  const StepCosts k = compute_step_costs(sc);
  const Hardware te = megatron_compute(sc.hw);
  const LayerWork lw = layer_work(sc.model, 1, 4096, 1, 1, false, Precision::BF16);
  double wgrad = 0;
  for (const GemmShape& g : lw.gemms) wgrad += gemm_time_s(te, g.k, g.n, g.m, Precision::BF16);
  // × the slowest of the plan's 16 GPUs (slowest_gpu_factor).
  const double slow = slowest_gpu_factor(sc.hw, 16);
  CHECK(k.layer.bwd_weight.compute_s ==
        doctest::Approx((wgrad + te.gpu.compute.layer_overhead_s) * slow).epsilon(1e-12));
  // Llama-2-7B's layer: QKV 4096→3·4096, out 4096→4096, gate+up 4096→2·11008, down 11008→4096: 2·s·(4096·12288 +
  // 4096·4096 + 4096·22016 + 11008·4096) = 2·4096·(50.33M + 16.78M + 90.18M + 45.09M) = 1.6576 TFLOP per layer forward.
  double flops = 0;
  for (const GemmShape& g : lw.gemms) flops += g.flops();
  CHECK(flops == doctest::Approx(2.0 * 4096 * (4096.0 * 12288 + 4096.0 * 4096 + 4096.0 * 22016 + 11008.0 * 4096)));
}

TEST_CASE("embedding and LM head: costs and placement") {
  // Embedding forward: write A and read the rows = 2A of HBM traffic in 2 kernels, plus the per-pass overhead;
  // backward scatter-add 3A. On tp8 without SP the vocab-parallel partial sums are all-reduced: AR(A).
  const Scenario sc = llama("tp8pp2dp1");
  const StepCosts k = compute_step_costs(sc);
  const Hardware te = megatron_compute(sc.hw);
  const double A = 33554432.0;
  const double slow = slowest_gpu_factor(sc.hw, 16);  // the slowest of the plan's 16 GPUs sets the compute
  CHECK(k.embed.fwd.compute_s ==
        doctest::Approx((memory_bound_time_s(te, 2 * A, 2) + te.gpu.compute.layer_overhead_s) * slow).epsilon(1e-12));
  CHECK(k.embed.bwd.compute_s ==
        doctest::Approx((memory_bound_time_s(te, 3 * A, 2) + te.gpu.compute.layer_overhead_s) * slow).epsilon(1e-12));
  CHECK(k.embed.fwd.tp_s ==
        doctest::Approx(collective_time(te, Collective::AllReduce, A, group_shape(sc.plan, GroupKind::TP, 8)).time_s)
            .epsilon(1e-12));
  // Placement (edge_work): virtual stage 0 of 4 carries the embedding on its forward's first segment and its
  // backward's last; the last virtual stage carries the head on its forward's last and backward's first segment.
  CHECK(edge_work(0, 4, true, true, false).embedding);
  CHECK_FALSE(edge_work(0, 4, true, false, true).embedding);
  CHECK(edge_work(0, 4, false, false, true).embedding);
  CHECK(edge_work(3, 4, true, false, true).head);
  CHECK(edge_work(3, 4, false, true, false).head);
  CHECK_FALSE(edge_work(1, 4, true, true, true).embedding);
  CHECK_FALSE(edge_work(1, 4, true, true, true).head);
  // One virtual stage holds both ends of the model.
  const EdgeWork both = edge_work(0, 1, true, true, true);
  CHECK(both.embedding);
  CHECK(both.head);
  // AdamW: read master, m, v, fp32 grad (16 B), write master, m, v (12 B) and the 16-bit copy (2 B), read the grad
  // again for clipping (4 B): 34 B per owned parameter.
  CHECK(k.optimizer_bytes_per_param == 34);
  // bf16 moments (--adam-moments bf16): m and v read and written at 2 B instead of 4: 34 − 2 × 2 × 2 = 26 B. The bf16
  // optimizer (--bf16-optimizer) also makes the bf16 weights the master (read + write 2 + 2 B instead of 4 + 4, no
  // separate 16-bit copy): 4 + 4 + 8 + 0 + 4 = 20 B.
  {
    Scenario pa = llama("tp1pp1dp8zero1");
    pa.train.bf16_moments = true;
    CHECK(compute_step_costs(pa).optimizer_bytes_per_param == 26);
    pa.train.bf16_moments = false;
    pa.train.bf16_optimizer = true;
    CHECK(compute_step_costs(pa).optimizer_bytes_per_param == 20);
  }
  // DP×CP group and shard degree: tp1 dp8 zero1 → 8 ranks, optimizer sharded 8 ways.
  const StepCosts z = compute_step_costs(llama("tp1pp1dp8zero1"));
  CHECK(z.dp_group.size == 8);
  CHECK(z.shard_degree == 8);
  CHECK(compute_step_costs(llama("tp1pp1dp8")).shard_degree == 1);
}

TEST_CASE("FlashAttention-1 kernels run the flash curves at half speed; a fused classifier moves 6 B per logit") {
  // One GPU (world 1: no slowest-of-N factor), llama2-7b, seq 4096, mbs 1, bf16, the default Megatron stack.
  auto one_gpu = [](const std::string& attention, bool fused_ce) {
    ScenarioInput in = one_gpu_input("llama2-7b");
    if (!attention.empty()) {
      in.train.attention_auto = false;
      in.train.flash_attention = attention != "unfused";
      in.train.flash_v1 = attention == "flash1";
    }
    in.train.cross_entropy_fusion = fused_ce;
    return resolve_scenario(in);
  };
  const Scenario fa2 = one_gpu("", false), fa1 = one_gpu("flash1", false), fused = one_gpu("", true);
  const StepCosts k2 = compute_step_costs(fa2), k1 = compute_step_costs(fa1), kf = compute_step_costs(fused);
  const Hardware te = megatron_compute(fa2.hw);
  const double gap = te.gpu.compute.kernel_overhead_s;

  // Attention: the causal flash forward of one layer, b·a·s²·d·2 = 1·32·4096²·128·2 = 1.374e11 FLOP counted causal
  // (half of 4·b·s²·h); FA1 takes 2× its kernel time (Dao 2023: FA2 ≈ 2× FA1; PyTorch 2.2 notes: SDPA FA1 → FA2
  // ≈ 2×), the launch gap once. The layer's forward grows by (t_fwd − gap), its backward by (t_bwd − gap); nothing
  // else in the layer moves.
  const LayerWork lw = layer_work(fa2.model, 1, 4096, 1, 1, false, Precision::BF16);
  const double flops = lw.attention.forward_flops();
  CHECK(flops == doctest::Approx(2.0 * 32 * 4096.0 * 4096.0 * 128 * 2 / 2).epsilon(1e-3));
  const double t_f = attention_fwd_time_s(te, flops, 4096, 128, Precision::BF16, true);
  const double t_b = attention_bwd_time_s(te, flops, 4096, 128, Precision::BF16, true);
  CHECK(k1.layer.fwd.compute_s - k2.layer.fwd.compute_s == doctest::Approx(t_f - gap).epsilon(1e-9));
  CHECK(k1.layer.bwd.compute_s - k2.layer.bwd.compute_s == doctest::Approx(t_b - gap).epsilon(1e-9));
  CHECK(k1.head.fwd.compute_s == k2.head.fwd.compute_s);  // the LM head does not use attention

  // Cross-entropy: L = b·s·V = 1·4096·32000 = 131,072,000 logits. Unfused: fp32 logits, 14 B per logit forward (4
  // kernels, with the final norm output A = 1·4096·4096·2 B read once) and 14 B backward (3 kernels). Fused (llm.c
  // fused_classifier): the 2-byte logits read once forward (1 kernel) and read + written once backward (counted in
  // the same launch) — 6 B in all instead of 28 B.
  const double L = 4096.0 * 32000.0, A = 4096.0 * 4096.0 * 2;
  const double unfused_f = memory_bound_time_s(te, 14 * L + A, 4), fused_f = memory_bound_time_s(te, 2 * L + A, 1);
  const double unfused_b = memory_bound_time_s(te, 14 * L, 3), fused_b = memory_bound_time_s(te, 4 * L, 0);
  CHECK(k2.head.fwd.compute_s - kf.head.fwd.compute_s == doctest::Approx(unfused_f - fused_f).epsilon(1e-9));
  CHECK(k2.head.bwd.compute_s - kf.head.bwd.compute_s == doctest::Approx(unfused_b - fused_b).epsilon(1e-9));
  // On H100 (3,350 GB/s × the preset's HBM efficiency) the 22 B/logit saved are 2.88 GB per micro-batch: ≥ 0.9 ms.
  CHECK(k2.head.fwd.compute_s + k2.head.bwd.compute_s - kf.head.fwd.compute_s - kf.head.bwd.compute_s > 0.9e-3);
  CHECK(kf.layer.fwd.compute_s == k2.layer.fwd.compute_s);  // the layers do not change
}

TEST_CASE("--cross-entropy-fusion-impl te: Transformer Engine's Triton parallel cross entropy over the 16-bit logits") {
  // One H100 (world 1), llama2-7b (vocab 32,000), seq 4096, mbs 1, bf16 (e = 2 B), the Megatron stack.
  // L = 4096 · 32,000 = 131,072,000 logits; the final norm's output A = 4096 · 4096 · 2 B is read once forward.
  // Native (Megatron's vocab-parallel loss over fp32 logits): 14 B per logit forward in 4 kernels, 14 B backward in 3.
  // TE (edges.cpp): online softmax reads the logits (e), the loss kernel reads them again and writes the gradient in
  // place (2e): 3e = 6 B forward in 2 kernels; the backward scales the gradient in place, 2e = 4 B in 1 kernel.
  auto one_gpu = [](bool te_ce) {
    ScenarioInput in = one_gpu_input("llama2-7b");
    in.train.te_cross_entropy = te_ce;
    return resolve_scenario(in);
  };
  const Scenario native = one_gpu(false), te_sc = one_gpu(true);
  const StepCosts kn = compute_step_costs(native), kt = compute_step_costs(te_sc);
  const Hardware te = megatron_compute(native.hw);
  const double L = 4096.0 * 32000.0, A = 4096.0 * 4096.0 * 2;
  CHECK(kn.head.fwd.compute_s - kt.head.fwd.compute_s ==
        doctest::Approx(memory_bound_time_s(te, 14 * L + A, 4) - memory_bound_time_s(te, 6 * L + A, 2)).epsilon(1e-9));
  CHECK(kn.head.bwd.compute_s - kt.head.bwd.compute_s ==
        doctest::Approx(memory_bound_time_s(te, 14 * L, 3) - memory_bound_time_s(te, 4 * L, 1)).epsilon(1e-9));
  // The backward starts with torch.equal(grad_output, 1.0): a device-to-host sync the GPU idles through, with the
  // launch of the next kernel (host.cpp add_edge_host); none on the native loss.
  CHECK(kt.head.bwd.host_wait_s == doctest::Approx(kt.host.sync_s + kt.host.op_s));
  CHECK(kn.head.bwd.host_wait_s == 0);
  // With llm.c's fused classifier it is one or the other: a one-line error.
  ScenarioInput both = one_gpu_input("llama2-7b");
  both.train.te_cross_entropy = true;
  both.train.cross_entropy_fusion = true;
  CHECK_THROWS_WITH_AS(resolve_scenario(both), doctest::Contains("give one of them"), InputError);
}

TEST_CASE("a residual add fused with its norm and an activation in the GEMM epilogue save one read each") {
  // gpt3-175b (h 12288, f 49152, GeLU, ungated, two norms per layer), seq 2048, mbs 1, bf16, one GPU (no slowest-of-N
  // factor), the default Megatron stack; T = 2048 tokens, e = 2 B.
  auto gpt3 = [](bool fused_norm, bool epilogue) {
    ScenarioInput in = one_gpu_input("gpt3-175b", 2048);
    in.train.fused_residual_norm = fused_norm;
    in.train.activation_epilogue = epilogue;
    return resolve_scenario(in);
  };
  const Scenario base = gpt3(false, false);
  const StepCosts k0 = compute_step_costs(base), kn = compute_step_costs(gpt3(true, false)),
                  ka = compute_step_costs(gpt3(false, true));
  const Hardware te = megatron_compute(base.hw);
  const double Bps = te.gpu.hbm_bandwidth_Bps * te.gpu.compute.hbm_efficiency;
  // Residual + norm: 2 adds per layer, each saving the norm's read of the sum, T·h·e = 2048·12288·2 = 50,331,648 B:
  // 100,663,296 B less forward, twice that backward (the elementwise backward moves 2× the forward's bytes); on H100
  // (3,350 GB/s × 0.87) 34.5 µs and 69.1 µs.
  const double norm_saved = 2.0 * 2048 * 12288 * 2;
  CHECK(norm_saved == 100663296.0);
  CHECK(k0.layer.fwd.compute_s - kn.layer.fwd.compute_s == doctest::Approx(norm_saved / Bps).epsilon(1e-6));
  CHECK(k0.layer.bwd.compute_s - kn.layer.bwd.compute_s == doctest::Approx(2 * norm_saved / Bps).epsilon(1e-6));
  CHECK(norm_saved / Bps == doctest::Approx(34.5e-6).epsilon(0.01));
  // GeLU in FC1's epilogue: the activation kernel's read of the pre-activation, T·f·e = 2048·49152·2 = 201,326,592 B.
  const double act_saved = 2048.0 * 49152 * 2;
  CHECK(k0.layer.fwd.compute_s - ka.layer.fwd.compute_s == doctest::Approx(act_saved / Bps).epsilon(1e-6));
  CHECK(k0.layer.bwd.compute_s - ka.layer.bwd.compute_s == doctest::Approx(2 * act_saved / Bps).epsilon(1e-6));
  // A gated FFN (SwiGLU) has no cuBLASLt epilogue for its product of two GEMM outputs: nothing changes.
  ScenarioInput in = one_gpu_input("llama2-7b");
  const StepCosts g0 = compute_step_costs(resolve_scenario(in));
  in.train.activation_epilogue = true;
  CHECK(compute_step_costs(resolve_scenario(in)).layer.fwd.compute_s == g0.layer.fwd.compute_s);
}

TEST_CASE("the PyTorch stack's eager ops against torch.compile's fused kernels") {
  // llama2-7b (h 4096, a = kv = 32 heads of d 128, f 11008, RMSNorm, RoPE, SwiGLU), seq 4096, mbs 1, bf16 (e = 2 B),
  // one H100, the PyTorch stack; T = 4096 tokens per layer pass.
  auto llama = [](Stack stack, bool compile) {
    ScenarioInput in = one_gpu_input("llama2-7b");
    in.train.stack = stack;
    in.train.compile = compile;
    return resolve_scenario(in);
  };
  const Scenario eager = llama(Stack::PyTorch, false);
  const StepCosts ke = compute_step_costs(eager), kc = compute_step_costs(llama(Stack::PyTorch, true));
  const double Bps = eager.hw.gpu.hbm_bandwidth_Bps * eager.hw.gpu.compute.hbm_efficiency;
  const double gap = eager.hw.gpu.compute.kernel_overhead_s;
  // Eager ATen ops beyond the fused kernels (costs/layer.cpp pytorch_eager_work), per layer forward:
  //   2 RMSNorms, (2e + 28) B more per element of T·h:  2 · 4096 · 4096 · 32 = 1,073,741,824 B, 2 · 7 kernels
  //   RoPE on q and k, 16 B more per element of T·(a + kv)·d:  16 · 4096 · 64 · 128 = 536,870,912 B, 4 kernels
  //   SwiGLU's activation and product apart, 2e more per element of T·f:  4 · 4096 · 11008 = 180,355,072 B, 1 kernel
  // = 1,790,967,808 B in 19 kernels. torch.compile also fuses the attention residual add with the FFN norm: the
  // norm's read of the sum, T·h·e = 4096 · 4096 · 2 = 33,554,432 B. The plan is DDP, which trains under autocast
  // (ddp_autocast_work): eager, each of the 2 norms also writes fp32 and the next linear casts it (8 B more per
  // element, 1 kernel), which Inductor writes in 16 bits directly: 2 · 8 · 4096 · 4096 = 268,435,456 B, 2 kernels.
  const double eager_bytes = 1073741824.0 + 536870912.0 + 180355072.0;
  CHECK(eager_bytes == 1790967808.0);
  const double diff_bytes = eager_bytes + 33554432.0 + 268435456.0;
  CHECK(ke.layer.fwd.compute_s - kc.layer.fwd.compute_s == doctest::Approx(diff_bytes / Bps + 21 * gap).epsilon(1e-6));
  // The backward moves twice the forward's elementwise bytes in twice the kernels.
  CHECK(ke.layer.bwd.compute_s - kc.layer.bwd.compute_s ==
        doctest::Approx(2 * diff_bytes / Bps + 42 * gap).epsilon(1e-6));
  // On H100 (3,350 GB/s × 0.87) that is ≈ 0.72 ms of the layer's forward.
  CHECK(diff_bytes / Bps == doctest::Approx(0.718e-3).epsilon(0.01));
  // The host: a compiled block is one call of the compiled function with its kernels launched from Inductor's
  // wrapper, cheaper than the eager block's Python ops.
  CHECK(kc.layer.fwd.host_s < ke.layer.fwd.host_s);
  CHECK(kc.layer.fwd.kernels < ke.layer.fwd.kernels);
  // The Megatron stacks fuse through Transformer Engine and their own kernels: --compile changes nothing there.
  const StepCosts m0 = compute_step_costs(llama(Stack::Megatron, false)), m1 = compute_step_costs(llama(Stack::Megatron, true));
  CHECK(m0.layer.fwd.compute_s == m1.layer.fwd.compute_s);
  CHECK(m0.layer.fwd.host_s == m1.layer.fwd.host_s);
  // --fused-rmsnorm (torchtitan's 2024 Triton RMSNorm, Liger, Apex) in eager mode: the two norms' composite is gone —
  // 1,073,741,824 B and 14 kernels less per layer forward (twice that backward); RoPE and SwiGLU stay eager.
  Scenario fused = eager;
  fused.train.fused_rmsnorm = true;
  const StepCosts kf = compute_step_costs(fused);
  CHECK(ke.layer.fwd.compute_s - kf.layer.fwd.compute_s == doctest::Approx(1073741824.0 / Bps + 14 * gap).epsilon(1e-6));
  CHECK(ke.layer.bwd.compute_s - kf.layer.bwd.compute_s ==
        doctest::Approx(2 * 1073741824.0 / Bps + 28 * gap).epsilon(1e-6));
  // Compiled, the norms are fused already: the flag changes nothing.
  Scenario fused_c = llama(Stack::PyTorch, true);
  fused_c.train.fused_rmsnorm = true;
  CHECK(compute_step_costs(fused_c).layer.fwd.compute_s == kc.layer.fwd.compute_s);
}

TEST_CASE("--no-rope-fusion: Megatron-Core's unfused rotary embedding (rope_utils.py) against TE's fused kernel") {
  // llama3-8b (h 4096, a = 32 query heads, kv = 8 KV heads of d 128, RoPE), seq 4096, mbs 1, bf16 (e = 2 B), one
  // H100 (world 1: no slowest-GPU factor), the Megatron stack; T = 4096 tokens per layer pass.
  auto llama = [](bool fusion, Stack stack = Stack::Megatron) {
    ScenarioInput in = one_gpu_input("llama3-8b");
    in.train.stack = stack;
    in.train.rope_fusion = fusion;
    return resolve_scenario(in);
  };
  const Scenario fused = llama(true);
  const StepCosts kf = compute_step_costs(fused), ku = compute_step_costs(llama(false));
  const double Bps = fused.hw.gpu.hbm_bandwidth_Bps * fused.hw.gpu.compute.hbm_efficiency;
  const double gap = fused.hw.gpu.compute.kernel_overhead_s;
  // Rotated elements: T · (a + kv) · d = 4096 · 40 · 128 = 20,971,520. Beyond the fused kernel's 2e each way
  // (costs/layer.cpp unfused_rope_work): forward 10e = 20 B per element, 419,430,400 B, in 2 · 11 = 22 kernels (per
  // tensor the 6 small cos/sin kernels and 5 of the 6 ops on the tensor); backward 12e = 24 B, 503,316,480 B, in
  // 2 · 6 = 12 kernels — its own traffic, not the generic 2× of the forward's.
  const double rotated = 4096.0 * 40 * 128;
  CHECK(rotated == 20971520.0);
  CHECK(ku.layer.fwd.compute_s - kf.layer.fwd.compute_s == doctest::Approx(419430400.0 / Bps + 22 * gap).epsilon(1e-6));
  CHECK(ku.layer.bwd.compute_s - kf.layer.bwd.compute_s == doctest::Approx(503316480.0 / Bps + 12 * gap).epsilon(1e-6));
  // The input-gradient half carries it (the RoPE backward is on the path to the previous layer), the weight half not.
  CHECK(ku.layer.bwd_input.compute_s - kf.layer.bwd_input.compute_s ==
        doctest::Approx(503316480.0 / Bps + 12 * gap).epsilon(1e-6));
  CHECK(ku.layer.bwd_weight.compute_s == kf.layer.bwd_weight.compute_s);
  // On H100 (3,350 GB/s × 0.87) the forward's bytes are ≈ 0.144 ms of the layer's forward.
  CHECK(419430400.0 / Bps == doctest::Approx(0.1439e-3).epsilon(0.01));
  // The host issues 2 · 11 ops and kernels more forward (12 ops per tensor instead of TE's 1) and 12 kernels more
  // backward (7 per tensor instead of 1).
  CHECK(ku.layer.fwd.kernels - kf.layer.fwd.kernels == doctest::Approx(22));
  CHECK(ku.layer.bwd.kernels - kf.layer.bwd.kernels == doctest::Approx(12));
  CHECK(ku.layer.fwd.host_s > kf.layer.fwd.host_s);
  // Other stacks price their own RoPE: the flag changes nothing on the PyTorch stack.
  CHECK(compute_step_costs(llama(false, Stack::PyTorch)).layer.fwd.compute_s ==
        compute_step_costs(llama(true, Stack::PyTorch)).layer.fwd.compute_s);
  // A model without a rotary embedding, on the Megatron stack: a one-line error.
  ScenarioInput gpt;
  gpt.model = "gpt3-175b";
  gpt.plan = "tp8pp8dp1";
  gpt.train.rope_fusion = false;
  CHECK_THROWS_WITH_AS(resolve_scenario(gpt), doctest::Contains("has no rotary embedding"), InputError);
}

TEST_CASE("PyTorch DDP: autocast over fp32 parameters — the fp32 residual stream and the weights' 16-bit copies") {
  // llama2-7b, dp8 on H100, PyTorch stack, bf16 (e = 2), seq 4096, mbs 1, compiled (no eager ops), T = 4096 tokens.
  // DDP (zero0: fp32 parameters under autocast, plans/sharding.cpp torch_ddp_bytes) against DeepSpeed ZeRO-1
  // (zero1: 16-bit parameters): the layers differ only by costs/layer.cpp ddp_autocast_work.
  auto pt = [](const std::string& plan) {
    ScenarioInput in;
    in.model = "llama2-7b";
    in.plan = plan;
    in.train.seq = 4096;
    in.train.gbs = 8;
    in.train.stack = Stack::PyTorch;
    in.train.compile = true;
    return resolve_scenario(in);
  };
  const Scenario ddp = pt("dp8");
  const StepCosts kd = compute_step_costs(ddp), kz = compute_step_costs(pt("dp8zero1"));
  const Hardware hw = hardware_for_stack(ddp.hw, "pytorch");
  const double Bps = hw.gpu.hbm_bandwidth_Bps * hw.gpu.compute.hbm_efficiency, gap = hw.gpu.compute.kernel_overhead_s;
  const double slow = slowest_gpu_factor(ddp.hw, 8);
  // Stream, per hidden element: 2 adds × (8 + e − 3e) + 2 norms × (4 − e) (compiled: no fp32 norm output or cast)
  // = 8 + 4 = 12 B; × T·h = 4096 · 4096 → 201,326,592 B.
  const double stream = 12.0 * 4096 * 4096;
  CHECK(stream == 201326592.0);
  // Weights, Σ k·n of the linears: QKV 4096·12288 + O 4096·4096 + gate/up 4096·22016 + down 11008·4096 = 202,375,168;
  // forward copies (4 + e) = 6 B each in 4 kernels; backward, gbs 8 over dp 8 is m = 1 micro-batch, so the gradient's
  // cast back to fp32 alone, (4 + e) + 12·(m − 1)/m = 6 B, in 8 kernels.
  const double kn = 4096.0 * 12288 + 4096.0 * 4096 + 4096.0 * 22016 + 11008.0 * 4096;
  CHECK(kn == 202375168.0);
  CHECK(kd.layer.fwd.compute_s - kz.layer.fwd.compute_s ==
        doctest::Approx(slow * ((stream + 6 * kn) / Bps + 4 * gap)).epsilon(1e-6));
  // Backward: the stream's 2× and the weight gradients' casts and accumulation (in the weight-gradient half too).
  CHECK(kd.layer.bwd.compute_s - kz.layer.bwd.compute_s ==
        doctest::Approx(slow * ((2 * stream + 6 * kn) / Bps + 8 * gap)).epsilon(1e-6));
  CHECK(kd.layer.bwd_weight.compute_s - kz.layer.bwd_weight.compute_s ==
        doctest::Approx(slow * (6 * kn / Bps + 8 * gap)).epsilon(1e-6));
  // With gbs 64 (m = 8 micro-batches) the backward adds 12·7/8 = 10.5 B per weight element: 16.5 B in all.
  ScenarioInput in;
  in.model = "llama2-7b";
  in.plan = "dp8";
  in.train.seq = 4096;
  in.train.gbs = 64;
  in.train.stack = Stack::PyTorch;
  in.train.compile = true;
  const StepCosts kd8 = compute_step_costs(resolve_scenario(in));
  in.plan = "dp8zero1";
  const StepCosts kz8 = compute_step_costs(resolve_scenario(in));
  CHECK(kd8.layer.bwd_weight.compute_s - kz8.layer.bwd_weight.compute_s ==
        doctest::Approx(slow * (16.5 * kn / Bps + 8 * gap)).epsilon(1e-6));
}

TEST_CASE("--attention cudnn: the PyTorch stack's attention on cuDNN's fused kernels (the megatron-profile curves)") {
  // llama2-7b, one H100, PyTorch stack, bf16, seq 4096, mbs 1: the layer's attention core is priced by
  // attention_fwd_time_s / attention_bwd_time_s on the preset's "pytorch" profile (FlashAttention-2 curves) with
  // --attention flash, on its "megatron" profile (cuDNN fused attention, FA3-class) with --attention cudnn; nothing
  // else in the layer changes.
  auto pt = [](bool cudnn) {
    ScenarioInput in = one_gpu_input("llama2-7b");
    in.train.stack = Stack::PyTorch;
    in.train.compile = true;
    in.train.attention_auto = false;
    in.train.flash_attention = true;
    in.train.attention_cudnn = cudnn;
    return resolve_scenario(in);
  };
  const Scenario fa2 = pt(false), cud = pt(true);
  const StepCosts kf = compute_step_costs(fa2), kc = compute_step_costs(cud);
  const Hardware hw = hardware_for_stack(fa2.hw, "pytorch");
  const KernelProfile& megatron = fa2.hw.gpu.kernels.at("megatron");
  const LayerWork lw = layer_work(fa2.model, 1, 4096, 1, 1, false, Precision::BF16);
  const double flops = lw.attention.forward_flops();
  // Causal forward: 4·b·a·s·s/2·d = 4 · 32 · 4096 · 2048 · 128 FLOPs.
  CHECK(flops == doctest::Approx(4.0 * 32 * 4096 * 2048 * 128).epsilon(1e-12));
  const double df = attention_fwd_time_s(hw, flops, 4096, 128, Precision::BF16, true, &megatron) -
                    attention_fwd_time_s(hw, flops, 4096, 128, Precision::BF16, true, nullptr);
  const double db = attention_bwd_time_s(hw, flops, 4096, 128, Precision::BF16, true, &megatron) -
                    attention_bwd_time_s(hw, flops, 4096, 128, Precision::BF16, true, nullptr);
  CHECK(df < 0);  // cuDNN's curves are faster than FlashAttention-2's on H100 (0.665 vs 0.375 forward at long s)
  CHECK(kc.layer.fwd.compute_s - kf.layer.fwd.compute_s == doctest::Approx(df).epsilon(1e-9));
  CHECK(kc.layer.bwd.compute_s - kf.layer.bwd.compute_s == doctest::Approx(db).epsilon(1e-9));
}

TEST_CASE("a Mamba-2 mixer's memory-bound kernels (mamba_work) and a hybrid model's single-block layers") {
  // Nemotron-3-Nano on one H100, mbs 1, seq 8192, bf16 (tp 1: H 64, P 64, N 128, G 8, Q 128, conv channels
  // C = 4096 + 2048 = 6144, in_proj width W = 10,304, L = 8192; e = 2 B). mamba_work's per-token counts (layer.cpp):
  //   forward  conv 4C = 24,576; cumsum 10H = 640; chunk states 2HP + 2GN + 8H + 4HPN/Q = 27,136; state passing
  //            6HPN/Q + 4H/Q + 4HPN/L = 24,576 + 2 + 256 = 24,834; C·Bᵀ 4GN + 4GQ = 8,192; chunk scan
  //            4GQ + 8HP + 8H + 2GN + 2HPN/Q = 47,616; norm 4HP + 4G = 16,416 → 149,410 B in 11 launches (no
  //            rearrange copies at b = 1);
  //   backward 50HP + 74GN + 32GQ + 34HPN/Q + 158H + 4G + 20H/Q + 8HQ/64 + 4HPN/L = 204,800 + 75,776 + 32,768 +
  //            139,264 + 10,112 + 32 + 10 + 1,024 + 256 = 464,042 B in 53 launches.
  // The scan's matmuls: forward 4HPN + 2GQN + HP(Q + 64) = 2,097,152 + 262,144 + 786,432 = 3,145,728 FLOPs per token,
  // backward 10HPN + 6GQN + 3HP(Q + 64) = 5,242,880 + 786,432 + 2,359,296 = 8,388,608.
  ScenarioInput in = one_gpu_input(std::string(PARSIM_TEST_DATA) + "/models/nemotron-3-nano-30b-a3b.config.json", 8192);
  const Scenario sc = resolve_scenario(in);
  const LayerKind mamba{AttentionKind::Mamba, FfnKind::None};
  const LayerWork lw = layer_work(sc.model, mamba, 1, 8192, 1, 1, false, Precision::BF16, {});
  const MambaWork w = mamba_work(sc, lw);
  CHECK(w.fwd_bytes / 8192 == doctest::Approx(149'410.0));
  CHECK(w.bwd_bytes / 8192 == doctest::Approx(464'042.0));
  CHECK((w.fwd_kernels == 11 && w.bwd_kernels == 53));
  // Of these, the chunked scan's Triton kernels (moved at kSsdBandwidthShare of the achievable bandwidth): forward
  // cumsum + chunk states + state passing + C·Bᵀ + chunk scan = 640 + 27,136 + 24,834 + 8,192 + 47,616 = 108,418 B
  // (the rest: conv 24,576 and norm 16,416); backward everything but the norm (4HP + 4G = 24,608), the conv's
  // recompute (4C = 24,576) and backward (6C = 36,864) and the PyTorch glue (80H + 12H/Q = 5,126):
  // 464,042 − 91,174 = 372,868 B.
  CHECK(w.ssd_fwd_bytes / 8192 == doctest::Approx(108'418.0));
  CHECK(w.ssd_bwd_bytes / 8192 == doctest::Approx(372'868.0));
  CHECK(w.fwd_flops / 8192 == doctest::Approx(3'145'728.0));
  CHECK(w.bwd_flops / 8192 == doctest::Approx(8'388'608.0));
  // With mbs 2 the two rearrange(...).contiguous() copies are real: 2e·W + 2e·HP = 41,216 + 16,384 = 57,600 B per
  // token more, in 2 more launches.
  ScenarioInput in2 = in;
  in2.train.mbs = 2;
  in2.train.gbs = 2;
  const Scenario sc2 = resolve_scenario(in2);
  const MambaWork w2 = mamba_work(sc2, layer_work(sc2.model, mamba, 2, 8192, 1, 1, false, Precision::BF16, {}));
  CHECK(w2.fwd_bytes / (2 * 8192) == doctest::Approx(149'410.0 + 57'600));
  CHECK(w2.fwd_kernels == 13);

  // The costed kinds: a Mamba block has no attention core and no FFN; its forward is its two GEMMs, its memory-bound
  // mixer kernels at H100's HBM speed (the bytes dominate: 1.22 GB against 26 GFLOP of small matmuls) and the norm /
  // residual traffic — at least the mixer's bytes at 3.35 TB/s.
  const StepCosts k = compute_step_costs(sc);
  REQUIRE(k.kinds.size() == 3);  // M, E, * in order of first appearance
  CHECK(k.kinds[0].kind == mamba);
  CHECK(k.kinds[1].kind == LayerKind{AttentionKind::None, FfnKind::MoE});
  CHECK(k.kinds[2].kind == LayerKind{AttentionKind::Full, FfnKind::None});
  // The scan kernels' bytes count 1/0.42 times: forward at least (149,410 + 108,418 · (1/0.42 − 1)) · 8192 B =
  // 2.45 GB at 3.35 TB/s = 0.73 ms, backward (464,042 + 372,868 · 1.381) · 8192 B = 8.02 GB = 2.39 ms.
  const double stretch = 1.0 / kSsdBandwidthShare - 1.0;
  CHECK(kSsdBandwidthShare == doctest::Approx(0.42));
  CHECK(k.kinds[0].pass.fwd.compute_s > (w.fwd_bytes + stretch * w.ssd_fwd_bytes) / 3.35e12);
  CHECK(k.kinds[0].pass.bwd.compute_s > (w.bwd_bytes + stretch * w.ssd_bwd_bytes) / 3.35e12);
  CHECK(k.kinds[0].params.expert == 0.0);
  CHECK(k.kinds[1].params.expert > 0.0);
}

TEST_CASE("TP collectives of a hybrid model's blocks: one half each, none for an MoE block without shared experts") {
  // Nemotron-3-Nano at tp 2 with SP (seq 8192, mbs 1): A = 8192·2688·2 B. A transformer layer issues two halves of
  // all-gather + reduce-scatter forward (attention, MLP); a Mamba block and an attention block one each, and an MoE
  // block with a shared expert one (the shared expert is a TP-split MLP; the routed tokens take the dispatcher).
  ScenarioInput in = one_gpu_input(std::string(PARSIM_TEST_DATA) + "/models/nemotron-3-nano-30b-a3b.config.json", 8192);
  in.plan = "tp2pp1dp1ep2etp1";
  in.gpu = "h100";
  in.train.gbs = 1;
  in.train.sp_auto = false;
  in.train.sp = true;
  in.train.tp_comm_overlap_auto = false;
  in.train.tp_comm_overlap = false;
  const Scenario sc = resolve_scenario(in);
  const StepCosts k = compute_step_costs(sc);
  const Hardware te = megatron_compute(sc.hw);
  const GroupShape tp = group_shape(sc.plan, GroupKind::TP, sc.hw.node.gpus_per_node);
  const double A = 8192.0 * 2688 * 2;
  const double half = collective_time(te, Collective::AllGather, A, tp).time_s +
                      collective_time(te, Collective::ReduceScatter, A, tp).time_s;
  for (const LayerKindCosts& kc : k.kinds) CHECK(kc.pass.fwd.tp_s == doctest::Approx(half).epsilon(1e-9));
}

TEST_CASE("where a layer's passes spend their time: the parts of compute_s (predict's layer_kinds)") {
  // llama2-7b on one GPU (tp1: no TP communication, world 1: no slowest-GPU factor), bf16, seq 4096, mbs 1.
  const Scenario sc = llama("tp1pp1dp1");
  const StepCosts k = compute_step_costs(sc);
  REQUIRE(k.kinds.size() == 1);
  const PassParts& f = k.kinds[0].fwd_parts;
  const PassParts& b = k.kinds[0].bwd_parts;
  // The parts add up to the pass's compute time (other = what lies beyond the priced kernels: the preset's per-layer
  // overhead, 0 on the H100 preset's Megatron profile).
  CHECK(f.sum() == doctest::Approx(k.layer.fwd.compute_s).epsilon(1e-12));
  CHECK(b.sum() == doctest::Approx(k.layer.bwd.compute_s).epsilon(1e-12));
  const Hardware te = megatron_compute(sc.hw);
  CHECK(f.other_s == doctest::Approx(te.gpu.compute.layer_overhead_s).epsilon(1e-12));
  // GEMM part of the forward = the four GEMMs of the layer (tokens m = 4096, h = 4096, f = 11008, SwiGLU), each timed
  // by the hardware model (hardware/compute_cost.cpp gemm_time_s): QKV 4096×12288×4096 (q, k, v of 32 heads × 128),
  // output projection 4096×4096×4096, FC1 4096×22016×4096 (gate and up), FC2 4096×4096×11008.
  const double gemms = gemm_time_s(te, 4096, 12288, 4096, Precision::BF16) +
                       gemm_time_s(te, 4096, 4096, 4096, Precision::BF16) +
                       gemm_time_s(te, 4096, 22016, 4096, Precision::BF16) +
                       gemm_time_s(te, 4096, 4096, 11008, Precision::BF16);
  CHECK(f.gemm_s == doctest::Approx(gemms).epsilon(1e-9));
  // The backward runs dgrad and wgrad of each GEMM: twice the forward's 2mnk FLOPs each at shapes of the same size, so
  // between 1.8× and 2.2× the forward's GEMM time (their tile and wave efficiencies differ by a few percent).
  CHECK(b.gemm_s > 1.8 * f.gemm_s);
  CHECK(b.gemm_s < 2.2 * f.gemm_s);
  // The causal flash-attention backward: 2.5× the forward's FLOPs (domain notes §2) at its own efficiency, more time.
  CHECK(b.attention_s > 2 * f.attention_s);
  // bf16: no fp8 casts; no recompute.
  CHECK(f.fp8_cast_s == 0);
  CHECK(b.fp8_cast_s == 0);
  CHECK(b.recompute_s == 0);
  // Full recompute (Megatron's reentrant checkpoint) re-runs the whole forward before the backward: its compute is the
  // forward's, to the last bit, and the other parts of the backward do not change.
  const StepCosts r = compute_step_costs(llama("tp1pp1dp1", false, Recompute::Full));
  CHECK(r.kinds[0].bwd_parts.recompute_s == doctest::Approx(r.layer.fwd.compute_s).epsilon(1e-12));
  CHECK(r.kinds[0].bwd_parts.gemm_s == doctest::Approx(b.gemm_s).epsilon(1e-12));
  // fp8 (Transformer Engine): the operand casts appear as their own part.
  ScenarioInput in = one_gpu_input("llama2-7b");
  in.train.precision = Precision::FP8;
  const StepCosts e = compute_step_costs(resolve_scenario(in));
  CHECK(e.kinds[0].fwd_parts.fp8_cast_s > 0);
  CHECK(e.kinds[0].bwd_parts.fp8_cast_s > e.kinds[0].fwd_parts.fp8_cast_s);
  CHECK(e.kinds[0].fwd_parts.sum() == doctest::Approx(e.layer.fwd.compute_s).epsilon(1e-12));
}

TEST_CASE("Megatron's scale-mask-softmax: its fused kernel's shapes, and the eager fp32 ops elsewhere") {
  // FusedScaleMaskSoftmax.is_kernel_available (layer.cpp megatron_softmax): the fused causal kernel needs
  // attn_batches = mbs × heads/tp to be a multiple of 4 and of the kernel's batches per block (128 threads, warps of
  // min(2^⌈log2 sk⌉, 32) lanes, 2 rows per warp when 2^⌈log2 sk⌉ ≤ 128): 4 for sk = 1,024, (128/32)·2 = 8 for
  // sk = 128; and 16 < sk ≤ 2,048 in the legacy program (Megatron-DeepSpeed), ≤ 4,096 in Megatron-Core's local spec.
  Scenario sc;
  sc.model.heads = 16;
  sc.model.dropout = true;
  sc.plan = parse_plan("tp8pp1dp1");
  sc.train.stack = Stack::MegatronLegacy;
  sc.train.flash_attention = false;
  sc.train.precision = Precision::FP16;
  sc.train.seq = 1024;
  sc.train.mbs = 1;
  // tp 8, mbs 1: 16/8 · 1 = 2 rows — not a multiple of 4: the eager path. In fp16 it runs float(), the layer-scaling
  // multiply, masked_fill_, softmax and half(): 5 kernels for the fused one, 4 more each way. Bytes per score
  // (e = 2, f = 4): forward 6 + 8 + 8 + 8 + 6 = 36 against the fused 4 → +32; backward 6 + 12 + 8 + 8 + 6 = 40 against
  // the fused 6 → +34; kept: the fp32 softmax output (4) instead of the fused 16-bit one (2) → +2 (the 16-bit copy after
  // half() feeds the dropout, which keeps only its mask).
  SoftmaxPath p = megatron_softmax(sc);
  CHECK(p.fallback);
  CHECK(p.extra_kernels_fwd == 4);
  CHECK(p.extra_kernels_bwd == 4);
  CHECK(p.extra_bytes_fwd == 32);
  CHECK(p.extra_bytes_bwd == 34);
  CHECK(p.extra_saved_bytes == 2);
  // Without dropout the P·V GEMM keeps the 16-bit copy too: +2 + 2 = 4.
  sc.model.dropout = false;
  CHECK(megatron_softmax(sc).extra_saved_bytes == 4);
  sc.model.dropout = true;
  // mbs 2 (4 rows) and tp 4 at mbs 1 (4 rows): the fused kernel.
  sc.train.mbs = 2;
  CHECK_FALSE(megatron_softmax(sc).fallback);
  sc.train.mbs = 1;
  sc.plan = parse_plan("tp4pp1dp2");
  CHECK_FALSE(megatron_softmax(sc).fallback);
  // sk = 128: 8 rows per block; 12 heads at tp 1 (12 rows: a multiple of 4, not of 8) fall back, 16 do not.
  sc.plan = parse_plan("tp1pp1dp8");
  sc.train.seq = 128;
  CHECK_FALSE(megatron_softmax(sc).fallback);
  sc.model.heads = 12;
  CHECK(megatron_softmax(sc).fallback);
  sc.model.heads = 16;
  // Rows longer than the kernel's: 4,096 keys fall back in the legacy program, not in Megatron-Core's local spec.
  sc.train.seq = 4096;
  CHECK(megatron_softmax(sc).fallback);
  sc.train.stack = Stack::Megatron;
  sc.train.local_layers = true;
  CHECK_FALSE(megatron_softmax(sc).fallback);
  // Megatron-Core's TE spec and any flash kernel: not this module.
  sc.train.local_layers = false;
  sc.plan = parse_plan("tp8pp1dp1");
  sc.train.seq = 1024;
  CHECK_FALSE(megatron_softmax(sc).fallback);
  sc.train.stack = Stack::MegatronLegacy;
  sc.train.flash_attention = true;
  CHECK_FALSE(megatron_softmax(sc).fallback);
  // bf16 in the legacy program: no layer scaling and softmax_in_fp32 off — masked_fill_ and softmax in 16 bits, one
  // kernel more each way; forward 4 + 4 against 4 → +4, backward 6 + 4 against 6 → +4; nothing more kept.
  sc.train.flash_attention = false;
  sc.train.precision = Precision::BF16;
  p = megatron_softmax(sc);
  CHECK(p.fallback);
  CHECK(p.extra_kernels_fwd == 1);
  CHECK(p.extra_bytes_fwd == 4);
  CHECK(p.extra_bytes_bwd == 4);
  CHECK(p.extra_saved_bytes == 0);
}

TEST_CASE("Megatron's softmax fallback: its traffic in the attention core, its ops on the host") {
  // GPT-3 175B (96 heads) on one GPU, fp16, unfused attention, seq 4,096, mbs 1: 96 rows, a multiple of 4, but 4,096
  // keys are beyond the legacy program's fused kernel (≤ 2,048) and within Megatron-Core's local spec's (≤ 4,096).
  // Both run the same batched GEMMs at the same (Megatron) sustained fraction, so their attention cores differ by the
  // eager ops alone: scores = 1 · 96 · 4096² = 1.6106e9; forward + memory_bound(32 B · scores, 4 kernels), backward
  // + memory_bound(34 B · scores, 4 kernels).
  auto costs = [](Stack stack) {
    ScenarioInput in = one_gpu_input("gpt3-175b", 4096);
    in.train.stack = stack;
    in.train.precision = Precision::FP16;
    in.train.attention_auto = false;
    in.train.flash_attention = false;
    in.train.local_layers = stack == Stack::Megatron;
    const Scenario sc = resolve_scenario(in);
    return std::make_pair(sc, compute_step_costs(sc));
  };
  const auto [legacy, kl] = costs(Stack::MegatronLegacy);
  const auto [local, kc] = costs(Stack::Megatron);
  REQUIRE(megatron_softmax(legacy).fallback);
  REQUIRE_FALSE(megatron_softmax(local).fallback);
  const double scores = 96.0 * 4096.0 * 4096.0;
  const Hardware hw = legacy_compute(legacy.hw);
  CHECK(kl.kinds[0].fwd_parts.attention_s - kc.kinds[0].fwd_parts.attention_s ==
        doctest::Approx(memory_bound_time_s(hw, 32 * scores, 4)).epsilon(1e-9));
  CHECK(kl.kinds[0].bwd_parts.attention_s - kc.kinds[0].bwd_parts.attention_s ==
        doctest::Approx(memory_bound_time_s(hw, 34 * scores, 4)).epsilon(1e-9));
  // On the host (the legacy program's inventory, host.cpp): 4 more ATen ops forward at kOp = 8 µs, 4 more autograd
  // nodes backward at 2 × 8 µs, × the program's host factor: forward +32 µs · factor, against the same run at 2,048
  // tokens (the fused kernel; nothing else in a layer's issue depends on the sequence).
  ScenarioInput in = one_gpu_input("gpt3-175b", 2048);
  in.train.stack = Stack::MegatronLegacy;
  in.train.precision = Precision::FP16;
  const Scenario fused = resolve_scenario(in);
  REQUIRE_FALSE(megatron_softmax(fused).fallback);
  const StepCosts kf = compute_step_costs(fused);
  CHECK(kl.layer.fwd.host_s - kf.layer.fwd.host_s == doctest::Approx(32e-6 * kl.host.factor).epsilon(1e-9));
  CHECK(kl.layer.bwd.host_s - kf.layer.bwd.host_s == doctest::Approx(64e-6 * kl.host.factor).epsilon(1e-9));
}

TEST_CASE("activation offloading: Transformer Engine's slot limit, played for one micro-batch (costs/offload.cpp)") {
  // 4 layers, the first N = 2 offloaded, so S = 4 − 2 = 2 layers' activations may be on the GPU. A hand-made cost
  // table:
  // every layer's forward 1 s and backward 2 s, no embedding or head work; each offloaded layer moves 3 GB over a
  // 1 GB/s link (3 s each way).
  Scenario sc;
  sc.model.layers = 4;
  sc.train.cpu_offload_layers = 2;
  sc.hw.node.host_link_gbytes_per_s = 1.0;
  StepCosts k;
  LayerKindCosts kc;
  kc.pass.fwd.compute_s = 1.0;
  kc.pass.bwd.compute_s = 2.0;
  k.kinds = {kc};
  k.layer = kc.pass;
  const std::vector<double> bytes(4, 3e9);
  // Forward: layer 0 on [0, 1], its copy on [1, 4]; layer 1 on [1, 2], its copy on [4, 7] (one copy stream). Layer 2
  // needs copy 0 done (at most 2 sets on the GPU): it waits 4 − 2 = 2 s, runs [4, 5]; layer 3 waits for copy 1,
  // 7 − 5 = 2 s, runs [7, 8]. Forward wait: 4 s.
  // Backward: layer 3 on [0, 2], layer 2 on [2, 4]. Each frees a slot: the reload of layer 1 starts at 2 (after the
  // first backward) and ends at 5, that of layer 0 starts at max(5, 4) and ends at 8. Layer 1 waits 5 − 4 = 1 s, runs
  // [5, 7]; layer 0 waits 8 − 7 = 1 s. Backward wait: 2 s. Bytes each way: 2 · 3 GB.
  const StepCosts::Offload slow = offload_schedule(sc, k, bytes);
  CHECK(slow.layers == 2);
  CHECK(slow.bytes == doctest::Approx(6e9));
  CHECK(slow.fwd_wait_s == doctest::Approx(4.0));
  CHECK(slow.bwd_wait_s == doctest::Approx(2.0));
  // A link 6× faster (0.5 s per copy): copy 0 ends at 1.5 ≤ 2 (layer 2's start), copy 1 at 2.5 ≤ 3; reloads end at
  // 2.5 ≤ 4 and at 4.5 ≤ 6: the copies hide behind the layers, no wait.
  sc.hw.node.host_link_gbytes_per_s = 6.0;
  const StepCosts::Offload fast = offload_schedule(sc, k, bytes);
  CHECK(fast.fwd_wait_s == doctest::Approx(0.0));
  CHECK(fast.bwd_wait_s == doctest::Approx(0.0));
  // No offloading, or every layer (Megatron-Core refuses N ≥ L): nothing.
  sc.train.cpu_offload_layers = 4;
  CHECK(offload_schedule(sc, k, bytes).layers == 0);
}

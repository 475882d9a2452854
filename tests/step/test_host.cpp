// The host in the simulation (sim/step/costs/host.cpp, docs/host-model.md): derived-number tests of the issue costs of
// one layer, and the two regimes the event engine must produce from them — a layer whose kernels are shorter than
// their launches runs at the host's pace (the step is the launch chain), a layer whose kernels are long hides the host
// (the host runs ahead and the factor does not matter).
#include "helpers.hpp"
#include "sim/step/accuracy.hpp"
#include "sim/step/costs.hpp"

#include <doctest/doctest.h>

using namespace parsim;
using namespace parsim::testing;

namespace {

// A tiny Llama-style model (RoPE, SwiGLU, RMSNorm, no biases, no dropout): h 256, 4 heads of 64, FFN 1024, 4 layers,
// vocabulary 128. Its GEMMs at 512 tokens are 2·512·256·1024 ≈ 0.27 GFLOP at most — well under 5 µs on an H100,
// shorter than any launch.
Scenario tiny(int layers = 4) {
  Scenario sc;
  sc.model = uniform_model(layers);
  sc.model.hidden = 256;
  sc.model.heads = 4;
  sc.model.kv_heads = 4;
  sc.model.head_dim = 64;
  sc.model.ffn_hidden = 1024;
  sc.model.seq_len = 512;
  sc.hw = resolve_hardware("h100");
  sc.plan = parse_plan("tp1pp1dp1");
  sc.train.seq = 512;
  sc.train.mbs = 1;
  sc.train.gbs = 1;
  sc.train.stack = Stack::Megatron;
  sc.train = resolve_training(sc.plan, sc.model, sc.train);
  validate_plan(sc.plan, sc.model, sc.hw, sc.train);
  return sc;
}

// The host time one micro-batch's step issues on the single stage (tp1 pp1 dp1: no collectives, no pipeline p2p):
// the step's fixed work, get_batch, every pass of embedding, layers and head, the loss checks and the optimizer.
double host_chain_s(const Scenario& sc) {
  const StepCosts k = compute_step_costs(sc);
  const HostModel& h = k.host;
  const double L = sc.model.layers;
  return h.step_begin_s + h.data_s + k.embed.fwd.host_s + L * k.layer.fwd.host_s + k.head.fwd.host_s +
         h.loss_syncs * h.sync_s + k.head.bwd.host_s + L * k.layer.bwd.host_s + k.embed.bwd.host_s + h.grad_check_s +
         h.pre_step_s + k.stage_host_optimizer_s[0] + h.post_step_s;
}

}  // namespace

TEST_CASE("host: the issue cost of a Megatron-Core + TE layer is its kernel inventory × the unit costs") {
  // Forward of one layer (host.cpp, docs/host-model.md §4.1): two TE LayerNormLinear (QKV, FC1) at 40 µs, two TE
  // Linear (proj, FC2) at 36 µs, three compiled fusions (bias-dropout-add ×2, bias-SwiGLU) at 39 µs, fused RoPE 2 ops
  // at 8 µs, the layer's Python 50 µs and TE flash attention 60 µs:
  //   2·40 + 2·36 + 3·39 + 2·8 + 50 + 60 = 80 + 72 + 117 + 16 + 50 + 60 = 395 µs on the reference host,
  // for 6 + 3 + 2 + 1 = 12 kernels (no dropout: no RNG-seed kernels; tp1: no collectives). Real host time = 395 µs ×
  // the stack's calibrated factor × the H100 node's host_time_factor (1.0: the DGX H100 Xeon 8480C is the reference).
  const Scenario sc = tiny();
  const StepCosts k = compute_step_costs(sc);
  const double f = sc.hw.calib.host_megatron * sc.hw.node.host_time_factor;
  CHECK(sc.hw.node.host_time_factor == 1.0);
  CHECK(k.host.factor == doctest::Approx(f));
  CHECK(k.layer.fwd.host_s == doctest::Approx(395e-6 * f));
  CHECK(k.layer.fwd.kernels == doctest::Approx(12));
  // Deterministic mode adds one NaN-fill per explicit TE allocation (host.cpp): 18 forward → 18 · 8 = 144 µs more.
  Scenario det = sc;
  det.train.deterministic = true;
  CHECK(compute_step_costs(det).layer.fwd.host_s == doctest::Approx((395e-6 + 144e-6) * f));
  CHECK(compute_step_costs(det).layer.fwd.kernels == doctest::Approx(12 + 18));
}

TEST_CASE("host: context parallelism runs Transformer Engine's ring loop in Python, a fused-attention call per step") {
  // TE's AttnFuncWithCPAndKVP2P (host.cpp, counted from transformer_engine/pytorch/attention/dot_product_attention/
  // context_parallel.py @d0067d0da) at CP r = 2, per layer and micro-batch, on top of the layer without CP:
  //   forward:  (r − 1) = 1 more fused-attention call at 60 µs, 2r − 1 = 3 compiled LSE / output corrections at 39 µs,
  //             3 kernel ops at 8 µs (the ring buffer's concatenation, the first LSE's clone, the output cast) and
  //             5 + 14r = 33 launch-free ops at 3 µs: 60 + 117 + 24 + 99 = 300 µs for 1 + 3 + 3 = 7 kernels, plus the
  //             r − 1 = 1 KV send/recv pair: 2 collectives at kColl = 15 µs on the reference host (no program factor);
  //   backward: 1 more fused-attention call (60 µs), 3 + 4r = 11 kernel ops (setup 3; per step dQ 1.5, dK/dV 2.5) at
  //             8 µs, 8 + 19r = 46 launch-free ops at 3 µs: 60 + 88 + 138 = 286 µs for 2 + 11 = 13 kernels, plus r = 2
  //             send/recv pairs of the KV‖dKV buffer: 4 collectives.
  Scenario sc = tiny();
  Scenario cp = sc;
  cp.plan = parse_plan("tp1pp1dp1cp2");
  validate_plan(cp.plan, cp.model, cp.hw, cp.train);
  const StepCosts k1 = compute_step_costs(sc), k2 = compute_step_costs(cp);
  const double f = sc.hw.calib.host_megatron * sc.hw.node.host_time_factor;
  CHECK(k2.layer.fwd.host_s - k1.layer.fwd.host_s == doctest::Approx(300e-6 * f + 2 * 15e-6));
  CHECK(k2.layer.fwd.kernels - k1.layer.fwd.kernels == doctest::Approx(7 + 2));
  CHECK(k2.layer.bwd.host_s - k1.layer.bwd.host_s == doctest::Approx(286e-6 * f + 4 * 15e-6));
  CHECK(k2.layer.bwd.kernels - k1.layer.bwd.kernels == doctest::Approx(13 + 4));
}

TEST_CASE("host: a collective's issue takes the node's CPU factor, not the program's constant") {
  // kColl (15 µs on the reference host: the NCCL launch and ProcessGroupNCCL's bookkeeping, C++ timed inside training
  // processes) is issued at host_time_factor alone (docs/host-model.md §7.17): 15 µs on the DGX H100 reference host
  // (factor 1.0) and 15 × 1.53 = 22.95 µs on a DGX A100's EPYC 7742, whatever host_megatron is; an eager op (kOp 8 µs)
  // carries both factors: 8 µs × host_megatron × 1.53 on the A100 node.
  Scenario sc = tiny();
  const StepCosts k = compute_step_costs(sc);
  CHECK(k.host.coll_s == doctest::Approx(15e-6));
  Scenario doubled = sc;
  doubled.hw.calib.host_megatron *= 2;
  CHECK(compute_step_costs(doubled).host.coll_s == doctest::Approx(15e-6));
  CHECK(compute_step_costs(doubled).host.op_s == doctest::Approx(2 * k.host.op_s));
  Scenario a100 = sc;
  a100.hw.node.host_time_factor = 1.53;
  const StepCosts ka = compute_step_costs(a100);
  CHECK(ka.host.coll_s == doctest::Approx(22.95e-6));
  CHECK(ka.host.op_s == doctest::Approx(8e-6 * sc.hw.calib.host_megatron * 1.53));
}

TEST_CASE("host: Megatron-Core's local spec issues torch linears and compiled fusions, not Transformer Engine modules") {
  // --transformer-impl local (host.cpp, gpt_layer_specs.py get_gpt_layer_local_spec): per layer forward two fused
  // LayerNorms (an op + 5 µs of Python each: 2·13 = 26 µs, 2 kernels), four Megatron linears through
  // LinearWithGradAccumulationAndAsyncCommunication (torch Linear 13.5 µs + 10 µs of Python: 4·23.5 = 94 µs; QKV and
  // FC1 add their bias in a second kernel: 4 + 2 = 6 kernels), three compiled fusions (3·39 = 117 µs, 3 kernels), the
  // fused RoPE on q and k (2·8 = 16 µs, 2 kernels), the layer's Python 50 µs and the attention core 60 µs (1 kernel):
  //   26 + 94 + 117 + 16 + 50 + 60 = 363 µs for 2 + 6 + 3 + 2 + 1 = 14 kernels,
  // against the TE spec's 395 µs for 12 (previous test): more, cheaper launches.
  Scenario sc = tiny();
  sc.train.local_layers = true;
  const StepCosts k = compute_step_costs(sc);
  const double f = sc.hw.calib.host_megatron * sc.hw.node.host_time_factor;
  CHECK(k.host.stack == HostStack::MegatronCoreLocal);
  CHECK(k.layer.fwd.host_s == doctest::Approx(363e-6 * f));
  CHECK(k.layer.fwd.kernels == doctest::Approx(14));
  // The training loop stays Megatron-Core's: the loss is checked twice per micro-batch (NaN, Inf), a sync each.
  CHECK(k.host.loss_syncs == 2);
  // megatron-legacy is the same modules with TorchScript fusions (3·20 = 60 µs) and Megatron's unfused RoPE (12 ops:
  // 96 µs, 12 kernels): 26 + 94 + 60 + 96 + 50 + 60 = 386 µs for 2 + 6 + 3 + 12 + 1 = 24 kernels, no loss syncs —
  // scaled by the legacy program's own host constant (calibration.json host_legacy: one per stack).
  Scenario legacy = tiny();
  legacy.train.stack = Stack::MegatronLegacy;
  legacy.train.flash_attention = true;
  const StepCosts kl = compute_step_costs(legacy);
  const double fl = legacy.hw.calib.host_legacy * legacy.hw.node.host_time_factor;
  CHECK(kl.host.stack == HostStack::MegatronLocal);
  CHECK(kl.host.factor == doctest::Approx(fl));
  CHECK(kl.layer.fwd.host_s == doctest::Approx(386e-6 * fl));
  CHECK(kl.layer.fwd.kernels == doctest::Approx(24));
  CHECK(kl.host.loss_syncs == 0);
}

TEST_CASE("host: a reentrant full recompute issues the checkpointed forward under torch.no_grad()") {
  // Megatron's CheckpointFunction runs the layer's first forward under torch.no_grad() (host.cpp add_layer_host): an
  // eager op records no autograd node, ≈ 5 instead of ≈ 7 µs [P4], and a torch.compile'd call costs 14 instead of 39 µs
  // [P6]. The TE layer's 395 µs (first test) hold 3 compiled fusions (117 µs), so its first forward costs
  //   (395 − 117) · 5/7 + 3 · 14 = 198.571 + 42 = 240.571 µs × f,
  // and the backward re-issues the forward with grad enabled, 395 µs, plus the checkpoint's RNG save/restore (4 ops,
  // 32 µs): 427 µs × f more than without recompute.
  Scenario none = tiny(), full = tiny();
  full.train.recompute = Recompute::Full;
  const StepCosts k0 = compute_step_costs(none), k1 = compute_step_costs(full);
  const double f = none.hw.calib.host_megatron * none.hw.node.host_time_factor;
  CHECK(k1.layer.fwd.host_s == doctest::Approx(240.571e-6 * f).epsilon(1e-5));
  CHECK(k1.layer.fwd.kernels == doctest::Approx(k0.layer.fwd.kernels));
  CHECK(k1.layer.bwd.host_s - k0.layer.bwd.host_s == doctest::Approx(427e-6 * f));
  // The legacy program's 386 µs (previous test) are TorchScript calls and eager ops: 386 · 5/7 = 275.714 µs × f_legacy.
  Scenario legacy = tiny();
  legacy.train.stack = Stack::MegatronLegacy;
  legacy.train.flash_attention = true;
  legacy.train.recompute = Recompute::Full;
  const StepCosts kl = compute_step_costs(legacy);
  CHECK(kl.layer.fwd.host_s == doctest::Approx(275.714e-6 * legacy.hw.calib.host_legacy * legacy.hw.node.host_time_factor)
                                   .epsilon(1e-5));
  // The PyTorch stack's default full recompute is the non-reentrant checkpoint: its forward runs with grad enabled.
  Scenario pt = tiny(), pt_full = tiny();
  pt.train.stack = pt_full.train.stack = Stack::PyTorch;
  pt_full.train.recompute = Recompute::Full;
  CHECK(compute_step_costs(pt_full).layer.fwd.host_s == doctest::Approx(compute_step_costs(pt).layer.fwd.host_s));
}

TEST_CASE("host: TorchScript fusions (jit_fuser before torch 2.2) and --no-gradient-accumulation-fusion") {
  // --jit-fuser torchscript (megatron/core/jit.py @88ddc36ec7: jit_fuser = torch.jit.script below torch 2.2): the local
  // spec's three fusions cost a TorchScript call (20 µs, host.cpp kScripted) instead of a compiled-function call
  // (39 µs): forward 363 − 3·(39 − 20) = 363 − 57 = 306 µs (previous test's 363 µs), same 14 kernels (the tiny model
  // has no dropout: no RNG-seed kernels either way). The backward re-enters each fusion at kBwdRatio = 2 × its forward:
  // 2·57 = 114 µs less.
  Scenario local = tiny();
  local.train.local_layers = true;
  Scenario script = local;
  script.train.jit_torchscript = true;
  const double f = local.hw.calib.host_megatron * local.hw.node.host_time_factor;
  const StepCosts kc = compute_step_costs(local), ks = compute_step_costs(script);
  CHECK(ks.layer.fwd.host_s == doctest::Approx(306e-6 * f));
  CHECK(ks.layer.fwd.kernels == doctest::Approx(kc.layer.fwd.kernels));
  CHECK(kc.layer.bwd.host_s - ks.layer.bwd.host_s == doctest::Approx(114e-6 * f));
  // The TE spec's fusions follow the same jit_fuser: 395 − 57 = 338 µs forward (first test's 395 µs).
  Scenario te_script = tiny();
  te_script.train.jit_torchscript = true;
  CHECK(compute_step_costs(te_script).layer.fwd.host_s == doctest::Approx(338e-6 * f));
  // --no-gradient-accumulation-fusion: the tiny model's layer has 4 weights and 2 RMSNorm weights (no biases). With
  // fusion (Megatron's default) only the 2 norm weights go through the DDP hook's main_grad.add_ (20 µs and 1 kernel
  // each); without, all 6: 4 hooks more = 80 µs and 4 kernels in the weight-gradient half of the backward.
  Scenario nofuse = tiny();
  nofuse.train.no_grad_accum_fusion = true;
  const StepCosts k0 = compute_step_costs(tiny()), k1 = compute_step_costs(nofuse);
  CHECK(k1.layer.bwd_weight.host_s - k0.layer.bwd_weight.host_s == doctest::Approx(80e-6 * f));
  CHECK(k1.layer.bwd_weight.kernels - k0.layer.bwd_weight.kernels == doctest::Approx(4));
  CHECK(k1.layer.bwd.host_s - k0.layer.bwd.host_s == doctest::Approx(80e-6 * f));
  CHECK(k1.layer.fwd.host_s == doctest::Approx(k0.layer.fwd.host_s));
}

TEST_CASE("host: --timing-log-level 2 synchronizes around every pass and the step's level-1 timers") {
  // Megatron's Timer.start()/stop() call torch.cuda.synchronize() (megatron/timers.py). At level 2 the forward pass is
  // wrapped by forward-compute and batch-generator (4 syncs: 3 before its kernels, 1 after), the backward by
  // backward-compute (2); level 1 adds 11 step timers (22 syncs, host.cpp) and the logging of the active timers every
  // log step: one all-gather (kColl 15 µs, issued at the host CPU's factor c alone: host.cpp host_model) + its copy to
  // the CPU (20 µs) + a TensorBoard scalar per timer (14 at pp1: 14·20 = 280 µs), i.e. 300 µs × f + 15 µs × c per log
  // step — the tiny scenario keeps Megatron-LM's default log interval of 100 steps. For the tiny model (tp1 pp1, one
  // micro-batch: one forward and one backward pass) the host does
  //   (4 + 2 + 22)·20 µs × f + (300 µs × f + 15 µs × c) / 100 = 563 µs × f + 0.15 µs × c
  // more, and each timer sync first waits for the GPU to drain (a few µs of GPU tail in this launch-bound step).
  const Scenario sc = tiny();
  Scenario timed = sc;
  timed.train.timing_log_level = 2;
  const StepCosts k = compute_step_costs(timed);
  CHECK(k.host.timer_syncs_fwd == 4);
  CHECK(k.host.timer_syncs_bwd == 2);
  const double c = sc.hw.node.host_time_factor, f = sc.hw.calib.host_megatron * c;
  const double added = evaluate(timed).step_time_s - evaluate(sc).step_time_s;
  CHECK(sc.train.log_interval == 100);
  const double expect = 563e-6 * f + 0.15e-6 * c;
  CHECK(added >= expect * (1 - 1e-6));  // 1e-6: the sums of the event engine round (1 ns here)
  CHECK(added <= expect + 50e-6);
  // Level 0 (Megatron-LM's default) adds nothing.
  Scenario zero = sc;
  zero.train.timing_log_level = 0;
  CHECK(evaluate(zero).step_time_s == doctest::Approx(evaluate(sc).step_time_s));
}

TEST_CASE("host: --test-mode's real-time checks sync every attention forward of a model with q/k norms") {
  // Megatron --test-mode with --qk-layernorm (attention.py run_realtime_tests; host.cpp test_mode_checks): per
  // attention forward, over n = dp + tp compared ranks (tp1 dp1: n = 2), 1 + 8·n = 17 ops with a kernel (stack, and per
  // rank 4 × (eq, all)) at kOp 8 µs, 2·n = 4 without (empty_like, unbind) at 3 µs, n = 2 all-gather output copies at
  // kCublas 4 µs, 4·n = 8 device-to-host syncs at kSync 20 µs, all × f, and 2 all-gathers at kColl 15 µs × the host
  // CPU's factor c alone (host.cpp host_model):
  //   (17·8 + 4·3 + 2·4 + 8·20) µs × f + 2·15 µs × c = 316 µs × f + 30 µs × c of host,
  // for 1 + 9·n + 2 = 21 kernels (the collectives' included).
  Scenario qk = tiny();
  qk.model.qk_norm = QkNorm::PerHead;
  Scenario tm = qk;
  tm.train.test_mode = true;
  const StepCosts k0 = compute_step_costs(qk), k1 = compute_step_costs(tm);
  const double c = qk.hw.node.host_time_factor, f = qk.hw.calib.host_megatron * c;
  const double check = 316e-6 * f + 30e-6 * c;
  CHECK(k1.layer.fwd.host_s - k0.layer.fwd.host_s == doctest::Approx(check));
  CHECK(k1.layer.fwd.kernels - k0.layer.fwd.kernels == doctest::Approx(21));
  // The syncs keep the host from running ahead: the GPU idles through the whole check (its host time; the groups of
  // one rank gather nothing) after catching up with the host, so in this launch-bound step each of the 4 layer
  // forwards lasts its host time plus the check's: the step grows by 4 × that. The backward does not check.
  CHECK(k1.layer.fwd.host_wait_s >= check);
  CHECK(k1.layer.bwd.host_s == doctest::Approx(k0.layer.bwd.host_s));
  const double added = evaluate(tm).step_time_s - evaluate(qk).step_time_s;
  CHECK(added >= 4 * check * (1 - 1e-6));
  CHECK(added <= 4 * check + 50e-6);
  // Without q/k norms the method returns at once (Megatron: `if not self.config.qk_layernorm: return`): no change.
  Scenario plain = tiny();
  plain.train.test_mode = true;
  CHECK(compute_step_costs(plain).layer.fwd.host_s == doctest::Approx(compute_step_costs(tiny()).layer.fwd.host_s));
}

TEST_CASE("host: Megatron-Core DDP's forward pre-hooks under --overlap-param-gather with the distributed optimizer") {
  // use_forward_hook (distributed_data_parallel.py): a pre-hook on every submodule, run on every forward (host.cpp
  // layer_inventory): ≈ 13 module calls per layer at kModuleHook 7 µs and the layer's own parameter tensors at
  // kParamPython 3 µs — the tiny model's 4 weights and 2 RMSNorm weights: 13·7 + 6·3 = 91 + 18 = 109 µs × f per layer
  // forward, no kernels; the embedding's forward carries the model-level modules once per micro-batch: 8·7 + 4·3 =
  // 68 µs × f. Without the distributed optimizer (zero0: Megatron's DDP gathers nothing) or with
  // --no-overlap-param-gather there are no hooks. (dp2: the distributed optimizer needs a data-parallel group.)
  auto with = [](const std::string& plan, bool overlap) {
    Scenario sc = tiny();
    sc.plan = parse_plan(plan);
    sc.train.gbs = 2;
    sc.train.overlap_param_gather = overlap;
    return compute_step_costs(sc);
  };
  const double f = tiny().hw.calib.host_megatron * tiny().hw.node.host_time_factor;
  const StepCosts hooked = with("tp1pp1dp2zero1", true), plain = with("tp1pp1dp2zero1", false);
  CHECK(hooked.layer.fwd.host_s - plain.layer.fwd.host_s == doctest::Approx(109e-6 * f));
  CHECK(hooked.layer.fwd.kernels == doctest::Approx(plain.layer.fwd.kernels));
  CHECK(hooked.embed.fwd.host_s - plain.embed.fwd.host_s == doctest::Approx(68e-6 * f));
  CHECK(hooked.layer.bwd.host_s == doctest::Approx(plain.layer.bwd.host_s));
  const StepCosts ddp = with("tp1pp1dp2", true);
  CHECK(ddp.layer.fwd.host_s == doctest::Approx(plain.layer.fwd.host_s));
}

TEST_CASE("host: --no-check-for-nan-in-loss-and-grad drops the loss and gradient-bucket NaN checks") {
  // Megatron-Core checks the loss twice per micro-batch (isnan, isinf: a device-to-host sync each) and every gradient
  // bucket once per step (a norm and a sync: 2 ops + kSync) — the tiny model's gradients fit one bucket. Megatron-LM's
  // --no-check-for-nan-in-loss-and-grad (and Megatron-Bridge's performance scripts) turn both off.
  Scenario on = tiny(), off = tiny();
  off.train.nan_checks = false;
  const StepCosts k_on = compute_step_costs(on), k_off = compute_step_costs(off);
  const double f = on.hw.calib.host_megatron * on.hw.node.host_time_factor;
  CHECK(k_on.host.loss_syncs == 2);
  CHECK(k_off.host.loss_syncs == 0);
  CHECK(k_on.host.grad_check_syncs == 1);
  CHECK(k_on.host.grad_check_s == doctest::Approx((2 * 8 + 20) * 1e-6 * f));  // 2 kOp + kSync
  CHECK(k_off.host.grad_check_syncs == 0);
  CHECK(k_off.host.grad_check_s == 0);
  // The step loses the syncs' host time and the drains they force (at least the two loss syncs' 40 µs × f).
  CHECK(evaluate(on).step_time_s - evaluate(off).step_time_s >= (2 * 20 + 36) * 1e-6 * f * (1 - 1e-6));
}

TEST_CASE("host: a layer whose kernels are shorter than their launches is launch-bound through the engine") {
  // The tiny model's GPU work per pass is a few µs per kernel against ≈ 30 µs × f of issue per kernel (395 µs / 12
  // kernels forward): the GPU waits for every launch, so the step is the host's chain of issue — Σ of the host costs
  // of every pass and per-step item (host_chain_s) — plus the GPU tail after each drain (the last kernel before a
  // sync: a few µs). Doubling the host factor therefore adds that chain once more: Δstep = chain(f) within the tails.
  const Scenario sc = tiny();
  const double chain = host_chain_s(sc);
  const double step = evaluate(sc).step_time_s;
  CHECK(step >= chain);
  CHECK(step <= 1.05 * chain);
  Scenario slow = sc;
  slow.hw.calib.host_megatron *= 2;
  const double step2 = evaluate(slow).step_time_s;
  CHECK(step2 - step == doctest::Approx(chain).epsilon(0.05));
  // A twice faster GPU changes nothing a launch-bound step does (within the same few-µs tails).
  Scenario fast_gpu = sc;
  fast_gpu.hw.gpu.peak_bf16 *= 2;
  CHECK(evaluate(fast_gpu).step_time_s == doctest::Approx(step).epsilon(0.02));
}

TEST_CASE("host: long kernels hide the host — the factor does not move a GPU-bound step") {
  // llama2-7b at tp1, seq 4096, mbs 1 on an H100: one layer's forward is 24·4096·4096² + 4·4096²·4096 ≈ 1.9 TFLOP
  // (+ the SwiGLU FFN) ≈ 3 ms of GPU at ~600 TFLOP/s, against ≈ 0.4 ms × f of issue: the host runs ahead (its queue
  // never drains inside a pass), so doubling the host factor moves the step by well under 1 %.
  const Scenario sc = scenario("llama2-7b", "tp1pp1dp8", "h100", 64, 1, 4096);
  Scenario slow = sc;
  slow.hw.calib.host_megatron *= 2;
  const double a = evaluate(sc).step_time_s, b = evaluate(slow).step_time_s;
  CHECK(b >= a);
  CHECK(b <= 1.01 * a);
}

TEST_CASE("host: GPT-OSS's clamped quick-GEGLU syncs every MoE layer forward and moe_act recompute once more") {
  // Megatron-Core's weighted_bias_quick_geglu_impl (fused_bias_geglu.py) builds its linear offset with
  // torch.tensor(…, device=cuda) on each call: a blocking host-to-device copy, i.e. a stream sync (costs/host.cpp
  // geglu_sync). An MoE layer's forward already waits at the dispatcher's token-count sync for the round trip, the
  // relaunch and the host's catch-up: sync_s + op_s + max(0, H − G), H the forward's host time and G its GPU time.
  // The clamped activation (GPT-OSS "activation_clamp") adds one more sync_s + op_s — no second catch-up.
  Scenario moe = tiny();
  moe.model.experts = 4;
  moe.model.experts_per_token = 2;
  moe.model.expert_ffn_hidden = 512;
  moe.train = resolve_training(moe.plan, moe.model, moe.train);
  Scenario clamp = moe;
  clamp.model.activation_clamp = 7.0;
  for (const Scenario* sc : {&moe, &clamp}) {
    const StepCosts k = compute_step_costs(*sc);
    const PassCost& f = k.layer.fwd;
    const double catch_up = std::max(0.0, f.host_s - (f.duration_s() - f.host_wait_s));
    const int syncs = sc == &clamp ? 2 : 1;
    CAPTURE(syncs);
    CHECK(f.host_wait_s == doctest::Approx(syncs * (k.host.sync_s + k.host.op_s) + catch_up).epsilon(1e-12));
    // No recompute: the backward does not run the activation's forward again.
    CHECK(k.layer.bwd.host_wait_s == 0);
  }
  // Selective recompute of moe_act alone re-runs the clamped activation in the backward: one sync there.
  Scenario act = clamp;
  act.train.recompute = Recompute::Selective;
  act.train.recompute_modules = RecomputeModules{static_cast<unsigned>(RecomputeModule::MoeAct)};
  const StepCosts k = compute_step_costs(act);
  CHECK(k.layer.bwd.host_wait_s == doctest::Approx(k.host.sync_s + k.host.op_s).epsilon(1e-12));
  CHECK(k.layer.bwd_input.host_wait_s == doctest::Approx(k.host.sync_s + k.host.op_s).epsilon(1e-12));
}

// The expected error predict reports (sim/step/accuracy.hpp, hardware/accuracy.json): the regime a step falls in.
// tiny() issues a host chain many times its GPU time (its kernels are shorter than their launches, first test case),
// so its step is the host chain: between the probe factors 1 and 3 it grows by about 3× (> 10 %: host-bound). A 4-layer
// h 4096 model at 4 × 4096 tokens runs GEMMs of 2·16,384·4,096·11,008 ≈ 1.5 TFLOP per FFN projection — milliseconds
// each against ≈ 0.3 ms of issue per layer at factor 3 — so the host runs ahead and its step moves < 10 %.
TEST_CASE("accuracy regime: host-bound by the probe, then MoE, then the program; figures from hardware/accuracy.json") {
  const Scenario small = tiny();
  CHECK(host_bound(small));
  const double lo = [&] {
    Scenario s = small;
    s.hw.calib.host_megatron = kHostProbeLo;
    return evaluate(s).step_time_s;
  }();
  const double hi = [&] {
    Scenario s = small;
    s.hw.calib.host_megatron = kHostProbeHi;
    return evaluate(s).step_time_s;
  }();
  CHECK(hi > 2 * lo);  // the host chain scales with the factor: ≈ 3× less the few µs of GPU tail
  Scenario big = tiny();
  big.model = uniform_model(4);
  big.model.vocab = 128;
  big.train.seq = 4096;
  big.train.mbs = 4;
  big.train.gbs = 4;
  big.train = resolve_training(big.plan, big.model, big.train);
  CHECK_FALSE(host_bound(big));
  CHECK(accuracy_regime(small, true) == AccuracyRegime::HostBound);
  CHECK(accuracy_regime(big, false) == AccuracyRegime::Megatron);
  Scenario legacy = big;
  legacy.train.stack = Stack::MegatronLegacy;
  CHECK(accuracy_regime(legacy, false) == AccuracyRegime::Megatron);  // one regime for both Megatron programs
  Scenario eager = small;
  eager.train.stack = Stack::PyTorch;
  CHECK_FALSE(host_bound(eager));  // the PyTorch-native program has no fitted host factor: not probed
  CHECK(accuracy_regime(eager, false) == AccuracyRegime::PyTorch);
  Scenario moe = big;
  moe.model.experts = 8;
  moe.model.experts_per_token = 2;
  moe.model.expert_ffn_hidden = moe.model.ffn_hidden;
  CHECK(accuracy_regime(moe, false) == AccuracyRegime::Moe);
  CHECK(accuracy_regime(moe, true) == AccuracyRegime::HostBound);  // host-bound first
  // Each regime has its measured figure (the cross-validation and the held-out MoE file keep them true:
  // test_cross_validation, test_validation); the host-bound one is the largest.
  for (AccuracyRegime r : {AccuracyRegime::HostBound, AccuracyRegime::Moe, AccuracyRegime::Megatron,
                           AccuracyRegime::PyTorch, AccuracyRegime::NewGeneration}) {
    const ExpectedError e = expected_error(r);
    CAPTURE(e.regime);
    CHECK(e.regime == regime_key(r));
    CHECK(e.typical_pct > 0);
    CHECK(e.typical_pct < 50);
    CHECK(!e.label.empty());
    CHECK(!e.basis.empty());
    if (r != AccuracyRegime::HostBound) CHECK(e.typical_pct < expected_error(AccuracyRegime::HostBound).typical_pct);
  }
  CHECK(expected_error(small).regime == "host_bound");
  CHECK(expected_error(big).regime == "megatron");
  // A GPU generation no measured run was taken on (CDNA4: MI355X; test_cross_validation keeps the list of validated
  // generations true to the data): the GPU-bound step gets the new-generation figure, or its program's where that is
  // larger; a host-bound step keeps the host-bound figure (its error is the host model's, whatever the GPU).
  CHECK(generation_validated(GpuArch::Hopper));
  CHECK_FALSE(generation_validated(GpuArch::CDNA4));
  Scenario mi355 = big;
  mi355.hw = resolve_hardware("mi355x");
  REQUIRE(mi355.hw.gpu.arch == GpuArch::CDNA4);
  CHECK_FALSE(host_bound(mi355));
  const ExpectedError newgen = expected_error(AccuracyRegime::NewGeneration);
  CHECK(expected_error(mi355).regime == "new_generation");
  CHECK(expected_error(mi355).typical_pct ==
        std::max(newgen.typical_pct, expected_error(AccuracyRegime::Megatron).typical_pct));
  Scenario mi355_eager = mi355;
  mi355_eager.train.stack = Stack::PyTorch;
  CHECK(expected_error(mi355_eager).regime == "new_generation");
  CHECK(expected_error(mi355_eager).typical_pct ==
        std::max(newgen.typical_pct, expected_error(AccuracyRegime::PyTorch).typical_pct));
  Scenario mi355_small = small;
  mi355_small.hw = resolve_hardware("mi355x");
  CHECK(expected_error(mi355_small).regime == "host_bound");
  // GB300, measured only on held-out runs (test_validation recomputes its figure from them): its own figure, or the
  // program's where larger; GB200 (in the fits) has none.
  CHECK_FALSE(held_out_gpu_error(resolve_hardware("gb200")).has_value());
  const std::optional<ExpectedError> gb3 = held_out_gpu_error(resolve_hardware("gb300"));
  REQUIRE(gb3.has_value());
  Scenario on_gb300 = big;
  on_gb300.hw = resolve_hardware("gb300");
  CHECK(expected_error(on_gb300).regime == "gpu_held_out");
  CHECK(expected_error(on_gb300).typical_pct ==
        std::max(gb3->typical_pct, expected_error(AccuracyRegime::Megatron).typical_pct));
}

// The host in the simulation (docs/host-model.md): what one rank's CPU thread spends to issue each pass, collective,
// device→host sync and the per-step fixed work of its software stack, and how many GPU operations it issues. The
// engine plays these against the GPU (sim/engine): a kernel shorter than its launch becomes launch-bound there, a
// sync drains the queue and exposes the issue of what follows.
//
// Unit costs are seconds on the REFERENCE HOST (an x86 server CPU of 2023–25, Xeon Platinum 8480C in a DGX H100,
// PyTorch 2.x, no profiler) and carry their source: [P…]/[T…]/[C…] are the sources of docs/host-model.md §9, [E] an
// estimate with no source (kept few). Real host time = unit cost × HostModel::factor, where factor = the stack's
// calibrated host factor (hardware/calibration.json: the one fitted host constant per stack — what a real training
// process spends per op beyond the micro-benchmarks) × the node's host_time_factor (its CPU against the reference,
// hardware presets). One exception: issuing a collective (kColl) is C++ timed inside training processes, so it takes
// the node's host_time_factor alone (HostModel::coll_s; docs/host-model.md §7.17).
//
// Kernel inventories (per layer and micro-batch) are docs/host-model.md §4.2a, from the code of Megatron-Core + TE,
// legacy Megatron-LM and Hugging Face / torchtitan; the optimizer's launch counts follow multi_tensor_apply's chunking
// rule (§4.5); the per-step work and sync points are §5.
#include "sim/step/costs.hpp"

#include <algorithm>
#include <cmath>

namespace parsim {

namespace {

constexpr double kUs = 1e-6;
// ---- unit costs on the reference host (µs) ----
constexpr double kOp = 8.0;            // eager ATen op with its launch [P4 ≈ 7 µs with requires_grad; P5 8 µs per CUDA op]
constexpr double kTorchLinear = 13.5;  // torch.nn.Linear forward, BF16, DGX H100 host [P9 TE#2053: 13.48 µs]
constexpr double kTeLinear = 36.0;     // Transformer Engine Linear forward: 2.7 × torch's [P9]
constexpr double kTeLnLinear = 40.0;   // TE LayerNormLinear: the same + its fused norm [E: + ½ op]
constexpr double kCompiled = 39.0;     // call of a torch.compile'd function with requires_grad inputs [P6 pytorch#122029]
constexpr double kCompiledNoGrad = 14.0;  // the same call without requires_grad inputs (under torch.no_grad()) [P6]
constexpr double kNoGradOpRatio = 5.0 / 7.0;  // an eager op under torch.no_grad() / with requires_grad: ≈ 5 / ≈ 7 µs
                                              // (no autograd node recorded) [P4 pytorch#41383]
constexpr double kScripted = 20.0;     // a TorchScript fusion (legacy Megatron's bias-gelu / bias-dropout-add) [E]
constexpr double kBwdRatio = 2.0;      // backward host time / forward host time of a module [T4: AddmmBackward0 / linear
                                       // 2.1, NativeLayerNormBackward0 / layer_norm 1.7]
constexpr double kHook = 20.0;         // Megatron DDP per-parameter grad hook with its main_grad.add_ [T4: AccumulateGrad
                                       // 22 µs; T6: 40 µs with the DDP hook]
constexpr double kColl = 15.0;         // issuing one c10d collective: the NCCL launch call 7–9 µs [T2 7.1, T4 9 µs] + the
                                       // dispatcher / ProcessGroupNCCL bookkeeping ≈ 5 µs [E]. The torch-level 8×H200
                                       // all-reduce floor (38–40 µs vs NCCL's ≈ 14 µs [P16]) leaves ≈ 24 µs, but that bench
                                       // synchronizes after every call: a drained-queue sync costs 3–8 µs and launch-to-
                                       // start ≈ 3–5 µs [§2.5, §2.7], which are not issue time (docs/host-model.md §7.10)
constexpr double kSync = 20.0;         // device→host sync on a drained queue (.item(): D2H copy + sync) [T1, T4: 3–8 µs
                                       // stream sync + the copy and Python]
constexpr double kModuleHook = 7.0;    // an nn.Module call through its forward pre-hook: _call_impl's hook path and the
                                       // hook's own Python up to its per-parameter loop [E: the fast path is skipped]
constexpr double kOpNoKernel = 3.0;    // an ATen op that launches nothing (empty_like, unbind's views) [E: kOp less its
                                       // 3–5 µs launch, docs/host-model.md §2]
constexpr double kP2P = 50.0;          // batch_isend_irecv of a send/recv pair (2 ops + group start/end) [E]
constexpr double kGraph = 10.0;        // cudaGraphLaunch + PyTorch's replay wrapper [P12: 3.5–8 µs CPU per replay; E]
constexpr double kData = 300.0;        // next(data_iterator) + pinned H2D copies of one micro-batch [E]
constexpr double kFlashAttnTe = 60.0;  // TE DotProductAttention forward (flash / cuDNN) [E from P9's module costs]
constexpr double kAttnUnfused = 100.0; // unfused core attention: baddbmm, scale-mask-softmax, dropout, bmm, permute [E:
                                       // 5–7 ops × kOp + module Python]
constexpr double kSdpa = 77.0;         // aten::scaled_dot_product_attention (flash), profiled [T1: 77 µs median]
constexpr double kLayerGlue = 50.0;    // the transformer layer's Python: views/splits of QKV, module dispatch [E]
constexpr double kParamPython = 3.0;   // Python per parameter tensor in the optimizer/grad-norm loops [E]
constexpr double kTbScalar = 20.0;     // one TensorBoard add_scalar [E]
constexpr double kCublas = 4.0;        // one cuBLAS(Lt) GEMM or TE kernel launched from C++ inside a module (no Python
                                       // op of its own): cudaLaunchKernel 2–3 µs + the library's setup [E, P-class
                                       // launch costs of docs/host-model.md §2]
constexpr double kFsdpHook = 100.0;    // FSDP per-unit pre/post hook Python [P14: 0.1–1 ms per unit in FSDP2]

HostStack host_stack(const TrainingConfig& t) {
  // Megatron-Core issues Transformer Engine's fused modules, or with --transformer-impl local its own (local spec);
  // the 2021–23 Megatron-LM / Megatron-DeepSpeed stack (--stack megatron-legacy) its local implementation (unfused
  // ops, TorchScript fusions); the rest PyTorch eager.
  switch (t.stack) {
    case Stack::Megatron: return t.local_layers ? HostStack::MegatronCoreLocal : HostStack::MegatronCoreTE;
    case Stack::MegatronLegacy: return HostStack::MegatronLocal;
    default: return HostStack::PyTorchEager;
  }
}

bool megatron(HostStack s) { return s != HostStack::PyTorchEager; }

// Parameter tensors of one dense layer (what the per-parameter hooks and the multi-tensor optimizer walk).
int layer_param_tensors(const ModelSpec& m) {
  int n = 4;                                                      // QKV, proj, FC1 (fused gate+up), FC2 weights
  n += (m.has_qkv_bias() ? 1 : 0) + (m.has_out_bias() ? 1 : 0) + (m.has_ffn_bias() ? 2 : 0);
  n += m.norm_layers * m.norm_tensors();                            // norm weight (+ bias)
  if (m.qk_norm != QkNorm::None) n += 2 * m.norm_tensors();         // q and k norm weights (+ biases)
  return n;
}

// Megatron-Core DDP's forward pre-hooks (layer_inventory, add_edge_host): registered on every submodule when the
// distributed optimizer overlaps its parameter all-gather with the forward (use_forward_hook).
bool ddp_forward_hooks(const Scenario& sc) {
  return megatron_core(host_stack(sc.train)) && sc.plan.sharding == Sharding::Zero1 && sc.train.overlap_param_gather;
}

// One host inventory piece: reference-host µs, GPU kernels, NCCL calls (each adds kColl of host and one kernel).
struct Piece {
  double us = 0, kernels = 0, colls = 0;
  Piece& operator+=(const Piece& o) {
    us += o.us, kernels += o.kernels, colls += o.colls;
    return *this;
  }
};

struct LayerInventory {
  Piece fwd, dgrad, wgrad;  // forward; backward split into input-gradient (B) and weight-gradient (W) halves
  Piece attn_fwd;           // the attention core's forward (what selective recompute re-issues)
  double compiled_fwd_us = 0;  // the part of fwd.us that is calls of torch.compile'd functions (kCompiled each)
};

// Megatron-Core's RoPE on q and k: Transformer Engine's fused kernel, one op and kernel each way per tensor; with
// --no-rope-fusion rope_utils.py's unfused ops (layer.cpp unfused_rope_work): per tensor 6 ops on [s, d] for cos and
// sin, 6 on the tensor forward (5 beyond the fused 1); backward 7 kernels (6 beyond 1), launched by the C++ autograd
// engine from the nodes of the forward's ops — kCublas each, no Python (the layer's other elementwise backward
// kernels are likewise counted without host time of their own).
struct FwdBwd {
  Piece fwd, bwd;
};
FwdBwd megatron_rope(const TrainingConfig& tr) {
  if (tr.rope_fusion) return {Piece{2 * kOp, 2, 0}, Piece{0, 2, 0}};
  return {Piece{2 * 12 * kOp, 2 * 12, 0}, Piece{2 * 7 * kCublas, 2 * 7, 0}};
}
// Transformer Engine's DotProductAttention: one fused (flash / cuDNN) call, or the unfused core's ops.
FwdBwd te_attention_core(const TrainingConfig& tr, bool dropout) {
  if (tr.flash_attention) return {Piece{kFlashAttnTe, 1, 0}, Piece{kBwdRatio * kFlashAttnTe, 2, 0}};
  return {Piece{kAttnUnfused, 5.0 + (dropout ? 1 : 0), 0}, Piece{kBwdRatio * kAttnUnfused, 8, 0}};
}
// The q and k norms of a --qk-layernorm model: one op each forward, two kernels each backward.
constexpr FwdBwd kQkNorms{Piece{2 * kOp, 2, 0}, Piece{2 * kBwdRatio * kOp, 4, 0}};

// One dense layer, one micro-batch (docs/host-model.md §4.1–4.3, §4.2a).
LayerInventory layer_inventory(const CostContext& c, HostStack st) {
  const Scenario& sc = c.sc;
  const ModelSpec& m = sc.model;
  const TrainingConfig& tr = sc.train;
  const int t = sc.plan.tp, cp = sc.plan.cp;
  const bool flash = tr.flash_attention, rope = m.position == PositionKind::RoPE, drop = m.dropout;
  const bool fp8 = tr.precision == Precision::FP8;
  LayerInventory L;
  Piece& f = L.fwd;
  Piece attn_b;
  // Megatron's three jit_fuser fusions (bias-dropout-add ×2, bias-activation): as torch.compile functions one compiled
  // call each plus an RNG-seed kernel per dropout fusion; as TorchScript (jit_fuser before torch 2.2) one call and one
  // kernel each. The per-call host cost of either, for the backward's fusions.
  const bool scripted = tr.jit_torchscript || st == HostStack::MegatronLocal;
  const double fuse = scripted ? kScripted : kCompiled;
  const Piece fusions = scripted ? Piece{3 * kScripted, 3, 0} : Piece{3 * kCompiled, 3.0 + (drop ? 2 : 0), 0};
  const FwdBwd rope_pieces = megatron_rope(tr);
  const Piece& rope_fwd = rope_pieces.fwd;
  const Piece& rope_bwd = rope_pieces.bwd;
  switch (st) {
    case HostStack::MegatronCoreTE: {
      // TE spec [C1 @adc69dba2d]: LayerNormLinear QKV and FC1 (norm fused: 2 kernels each), Linear proj and FC2,
      // TEDotProductAttention, bias-dropout-add ×2 and bias-activation as jit_fuser = torch.compile functions.
      f += {2 * kTeLnLinear + 2 * kTeLinear, 6, 0};
      f += fusions;  // (torch.compile, or TorchScript before torch 2.2: see `fusions`)
      if (!scripted) L.compiled_fwd_us += 3 * kCompiled;
      if (rope) f += rope_fwd;                         // TE fused RoPE on q and k (or unfused: rope_fwd)
      const FwdBwd core = te_attention_core(tr, drop);
      L.attn_fwd = core.fwd;
      attn_b = core.bwd;
      // Backward: per TE linear dgrad and wgrad GEMMs (+ a bias-gradient reduction where the layer has biases),
      // norm backward 2 kernels each, the compiled fusions' backward 1 each, residual-gradient adds 2, RoPE 2.
      const double bias_red = (m.has_qkv_bias() ? 1 : 0) + (m.has_out_bias() ? 1 : 0) + (m.has_ffn_bias() ? 2 : 0);
      L.dgrad += {kBwdRatio * (kTeLnLinear + kTeLinear + 3 * fuse) + kLayerGlue, 4 + 4 + 3 + 2, 0};
      if (rope) L.dgrad += rope_bwd;
      L.wgrad += {kBwdRatio * (kTeLnLinear + kTeLinear), 4 + bias_red, 0};
      break;
    }
    case HostStack::MegatronCoreLocal:
    case HostStack::MegatronLocal: {
      // Legacy ParallelTransformerLayer (local implementation) [C1 tensor_parallel/layers.py]: fused LayerNorm ×2,
      // column-parallel QKV and FC1 as matmul + bias add (2 kernels each), row-parallel proj and FC2 with
      // skip_bias_add, bias-dropout-add ×2 and bias-GeLU as TorchScript fusions, unfused RoPE ≈ 12 ops.
      // Megatron-Core's local spec (gpt_layer_specs.py get_gpt_layer_local_spec → LocalSpecProvider [C1]) has the
      // same modules — FusedLayerNorm, ColumnParallelLinear / RowParallelLinear through
      // LinearWithGradAccumulationAndAsyncCommunication, DotProductAttention (unfused: baddbmm, FusedScaleMaskSoftmax,
      // dropout, bmm) — with its fusions as jit_fuser = torch.compile functions (megatron/core/jit.py, torch ≥ 2.2):
      // one compiled call each, and an RNG-seed kernel per dropout fusion as in the TE spec; RoPE through the fused
      // apply_rotary_pos_emb (--apply-rope-fusion, the default; TE's fused kernel, 1 per q and k) as in the TE spec.
      // Megatron-Core's jit_fuser is torch.jit.script before torch 2.2 (megatron/core/jit.py @88ddc36ec7, 2024-01:
      // "nvFuser is deprecated in PyTorch JIT starting from 2.2"): the 2023–24 containers (pytorch:23.04, torch
      // 2.1.0a0) ran the local spec's fusions as TorchScript, one call each and no separate RNG-seed kernel.
      const bool core = st == HostStack::MegatronCoreLocal;
      f += {2 * (kOp + 5) + 4 * (kTorchLinear + 10), 2 + 2 * 2 + 2, 0};
      f += fusions;  // (legacy Megatron-LM: always TorchScript)
      if (!scripted) L.compiled_fwd_us += 3 * kCompiled;
      if (rope) f += core ? rope_fwd : Piece{12 * kOp, 12, 0};
      L.attn_fwd = flash ? Piece{kFlashAttnTe, 1, 0} : Piece{kAttnUnfused, 5.0 + (drop ? 1 : 0), 0};
      attn_b = flash ? Piece{kBwdRatio * kFlashAttnTe, 3, 0} : Piece{kBwdRatio * kAttnUnfused, 8, 0};
      // FusedScaleMaskSoftmax on a shape its kernel does not take (layer.cpp megatron_softmax): eager ops instead of
      // the fused one — each an ATen op forward and an autograd node backward (kBwdRatio × its forward).
      if (const SoftmaxPath sm = megatron_softmax(sc); sm.fallback) {
        L.attn_fwd += {sm.extra_kernels_fwd * kOp, static_cast<double>(sm.extra_kernels_fwd), 0};
        attn_b += {kBwdRatio * sm.extra_kernels_bwd * kOp, static_cast<double>(sm.extra_kernels_bwd), 0};
      }
      L.dgrad += {kBwdRatio * (2 * (kOp + 5) + 2 * (kTorchLinear + 10) + 3 * fuse) + kLayerGlue,
                  2 * 2 + 4 + 3 + 2 + (rope && !core ? 12.0 : 0), 0};
      if (rope && core) L.dgrad += rope_bwd;
      L.wgrad += {kBwdRatio * 2 * (kTorchLinear + 10), 4 + 4, 0};
      break;
    }
    case HostStack::PyTorchEager: {
      const int linears = 4 + (m.gated() ? 3 : 2);
      if (tr.compile) {
        // torch.compile per block (--compile; torchtitan compiles each TransformerBlock, nanoGPT and fms-fsdp the
        // model): the block's forward is one call of the compiled function (kCompiled [P6]) whose Inductor wrapper
        // launches, from C++-backed calls without a Python op each, the linears (extern mm), the attention and the
        // fused Triton kernels — the pre-attention norm, RoPE (1 for q and k), the residual add with the FFN norm,
        // the activation, the last add [E: ≈ 5, the fusion groups of pytorch_eager_work] — at kCublas each. The
        // backward is AOTAutograd's compiled backward: one call launching the linears' dgrad and wgrad GEMMs, the
        // attention backward and ≈ 2 fused kernels per forward one.
        const double fused = 5;
        f += {kCompiled + (linears + fused) * kCublas, linears + fused, 0};
        L.compiled_fwd_us += kCompiled;
        L.attn_fwd = flash ? Piece{kCublas, 1, 0} : Piece{5 * kCublas, 5.0 + (drop ? 1 : 0), 0};
        attn_b = flash ? Piece{kCublas, 3, 0} : Piece{8 * kCublas, 8, 0};
        L.dgrad += {kCompiled + (linears + 2 * fused) * kCublas, linears + 2 * fused, 0};
        L.wgrad += {linears * kCublas, static_cast<double>(linears), 0};
        break;
      }
      // Hugging Face / torchtitan Llama-style block [T1 measured, §4.3]: 7 (or 4 + gated) nn.Linear, two fused norms,
      // RoPE ≈ 5 ops on q and on k, SDPA, activation ×2, residual adds ×2, contiguous copies ≈ 2.
      f += {linears * kTorchLinear + (2 + 2 + 2 + 2) * kOp, linears + 2.0 + 2 + 2 + 2, 0};
      if (rope) f += {10 * kOp, 10, 0};
      L.attn_fwd = flash ? Piece{kSdpa, 1, 0} : Piece{kAttnUnfused, 5.0 + (drop ? 1 : 0), 0};
      attn_b = flash ? Piece{kBwdRatio * kSdpa, 3, 0} : Piece{kBwdRatio * kAttnUnfused, 8, 0};
      // Autograd: one node per op at kBwdRatio × its forward host time, ≈ 2 kernels per forward kernel [T4: 1.56
      // launches per node; §4.3]; the weight gradients are one GEMM per linear.
      L.dgrad += {kBwdRatio * (f.us - linears * kTorchLinear / 2) + kLayerGlue, 2 * f.kernels - linears, 0};
      L.wgrad += {kBwdRatio * linears * kTorchLinear / 2, static_cast<double>(linears), 0};
      break;
    }
  }
  f += {kLayerGlue, 0, 0};
  f += L.attn_fwd;
  L.dgrad += attn_b;
  if (m.qk_norm != QkNorm::None) {
    f += kQkNorms.fwd;
    L.dgrad += kQkNorms.bwd;
  }
  // Megatron DDP grad hooks (distributed_data_parallel.py): main_grad.add_(grad) per parameter tensor that the wgrad
  // GEMM did not accumulate itself. Gradient-accumulation fusion (Megatron's default) covers the 4 weights; with
  // --no-gradient-accumulation-fusion the wgrad GEMM writes param.grad and the hook adds it like any other
  // (LinearWithGradAccumulationAndAsyncCommunication.backward, tensor_parallel/layers.py; TE's fuse_wgrad_accumulation
  // follows the same flag) [C1]: a hook and an add kernel per weight more.
  if (megatron(st)) {
    const double hooks = std::max(0, layer_param_tensors(m) - (tr.no_grad_accum_fusion ? 0 : 4));
    L.wgrad += {hooks * kHook, hooks, 0};
  }
  // Megatron-Core DDP with the distributed optimizer and --overlap-param-gather (use_forward_hook): every submodule
  // carries a forward pre-hook (distributed_data_parallel.py enable_forward_pre_hook registers it on
  // self.module.modules()), run on every forward of every micro-batch: it iterates the module's own parameters
  // (parameters(recurse=False)) and, per parameter, looks up its bucket group and calls finish_param_sync (which returns
  // once the bucket's all-gather has been waited on) [C1 @d98e8a64dd]. A layer of the TE or local spec calls ≈ 13
  // modules (TransformerLayer, the norms or their IdentityOps, SelfAttention, linear_qkv, core_attention and its
  // backend, linear_proj, the cross-attention IdentityOps, MLP, linear_fc1, linear_fc2; 2 more with q/k norms)
  // [D, counted from gpt_layer_specs.py]: kModuleHook each and kParamPython per parameter tensor. No kernels.
  if (ddp_forward_hooks(sc)) {
    const double modules = 13 + (m.qk_norm != QkNorm::None ? 2 : 0);
    f += {modules * kModuleHook + layer_param_tensors(m) * kParamPython, 0, 0};
  }
  // fp8 (TE): per GEMM operand an amax/scale/cast, transposes for the backward [E: §4.1, +12 fwd, +25 bwd].
  // A compiled PyTorch block (--compile) runs them as kernels of its Inductor graph, launched from the wrapper.
  if (fp8) {
    const double op = st == HostStack::PyTorchEager && tr.compile ? kCublas : kOp;
    f += {12 * op, 12, 0};
    L.dgrad += {13 * op, 13, 0};
    L.wgrad += {12 * op, 12, 0};
  }
  // Deterministic mode (torch.use_deterministic_algorithms(True)): one NaN-fill kernel per empty / empty_like /
  // empty_strided allocation [P13] — the explicit allocations, not the structured ATen outputs. Counted per layer from
  // where the stack allocates (docs/host-model.md §4.1a):
  //  - Transformer Engine: every output its C++ extensions allocate with at::empty — LayerNormLinear ln_out, mu,
  //    rsigma, GEMM out (4 × 2), Linear out (1 × 2), fused attention out, softmax stats, RNG state (3), and the
  //    Inductor-generated jit_fuser kernels' empty_strided outputs: bias-dropout-add out + mask (2 × 2), bias-GeLU out
  //    (1) — 18 forward; backward dgrad (4) and wgrad (4) outputs, LayerNorm dx/dgamma/dbeta/workspace (4 × 2),
  //    attention dq/dk/dv/accumulator (4), the compiled backward outputs (3), bias gradients (up to 4, with biases).
  //  - Megatron local / PyTorch eager: mostly structured ATen ops (not filled); the explicit empties are the global
  //    memory buffer of the attention scores, the fused-softmax and fused-LayerNorm outputs and the matmul outputs of
  //    the linear autograd functions [E: ≈ 5 forward, ≈ 10 backward].
  // Each fill costs an eager op. The CI rows without --deterministic-mode (C0026, C0030, C0039, C0053, C0055, C0061,
  // C0067, C0068) test this count: with the TE counts the factor fitted on the deterministic rows predicts them
  // within the same error as the rest (docs/host-model.md §7.3).
  if (tr.deterministic) {
    if (st == HostStack::MegatronCoreTE) {
      const double bias_grads = (m.has_qkv_bias() ? 1 : 0) + (m.has_out_bias() ? 1 : 0) + (m.has_ffn_bias() ? 2 : 0);
      f += {18 * kOp, 18, 0};
      L.dgrad += {(4 + 8 + 4 + 3) * kOp, 19, 0};
      L.wgrad += {(4 + bias_grads) * kOp, 4 + bias_grads, 0};
    } else {
      f += {5 * kOp, 5, 0};
      L.dgrad += {6 * kOp, 6, 0};
      L.wgrad += {4 * kOp, 4, 0};
    }
  }
  // Collectives inside the layer, as layer_costs issues them: TP 2 all-reduces forward and 2 backward, or with SP 2
  // all-gathers + 2 reduce-scatters each way plus the backward re-gather of the 2 layer inputs for wgrad; the CP ring
  // a send/recv pair per step forward, two pairs backward (K/V and dK/dV) [§4.4].
  if (t > 1) {
    f.colls += tr.sp ? 4 : 2;
    L.dgrad.colls += tr.sp ? 4 : 2;
    if (tr.sp) L.wgrad.colls += 2;
  }
  if (cp > 1 && st == HostStack::MegatronCoreTE && flash) {
    // Transformer Engine's p2p ring (AttnFuncWithCPAndKVP2P, transformer_engine/pytorch/attention/
    // dot_product_attention/context_parallel.py @d0067d0da; load-balanced causal, sbhd, fused attention) replaces the
    // layer's one fused-attention call by a Python loop over the c ring steps [C, counted from the code]:
    //   forward  setup: K and V viewed and concatenated into the ring buffer (1 kernel, 5 views);
    //            per step: wait on the last receive (2), the next buffer (empty_like) and the KV send/recv pair
    //            (c − 1 pairs), K/V and the section's q/k/v views (7), the stream switch (1) — 11 launch-free ops —
    //            and a fused_attn_fwd call (c − 1 more than without CP);
    //            corrections: the first step's LSE cloned (1 kernel), each later step's LSE merged (c − 1
    //            jit_fuser = torch.compile calls) with its squeeze_ and stream events (3 launch-free ops per step),
    //            then every step's output merged (c compiled calls) and cast back (1 kernel);
    //   backward setup: dout, the second-half LSE and the ring buffer filled (3 kernels, 8 views);
    //            per step: one send/recv pair of the KV‖dKV buffer (c pairs: 2c collectives, not 4(c − 1)), waits,
    //            views and the section's inputs (19 launch-free ops), a fused_attn_bwd call (c − 1 more), dQ
    //            accumulated (1.5 kernels: copy_ or add_ of one or both halves) and dK, dV (2.5 kernels).
    // A fused-attention call costs the module's kFlashAttnTe (its Python wrapper, the cuDNN graph lookup and launch
    // from C++), the backward's kBwdRatio × that already being the one call of the layer without CP. 2c − 1
    // compiled calls per forward, at kCompiled. (r: the ring degree c.)
    const double r = cp;
    const Piece cp_fwd{(r - 1) * kFlashAttnTe + (2 * r - 1) * kCompiled + 3 * kOp + (5 + 14 * r) * kOpNoKernel,
                       (r - 1) + (2 * r - 1) + 3, 2 * (r - 1)};
    f += cp_fwd;
    L.attn_fwd += cp_fwd;  // (selective recompute of the core attention re-runs the ring)
    L.compiled_fwd_us += (2 * r - 1) * kCompiled;
    L.dgrad += {(r - 1) * kFlashAttnTe + (3 + 4 * r) * kOp + (8 + 19 * r) * kOpNoKernel, 2 * (r - 1) + 3 + 4 * r,
                2 * r};
  } else if (cp > 1) {
    f.colls += 2.0 * (cp - 1);
    f += {3.0 * (cp - 1) * kOp, 3.0 * (cp - 1), 0};  // softmax-LSE and output corrections per step
    L.dgrad.colls += 4.0 * (cp - 1);
    L.dgrad += {6.0 * (cp - 1) * kOp, 6.0 * (cp - 1), 0};
  }
  return L;
}

PassCost to_pass(const HostModel& h, const Piece& p) {
  PassCost c;
  c.host_s = (p.us * kUs) * h.factor + p.colls * h.coll_s;
  c.kernels = p.kernels + p.colls;
  return c;
}

// The host part of a pass that runs as a CUDA graph: one replay per layer pass, its kernels unchanged (captured
// collectives need no host either).
PassCost graphed(const HostModel& h, const Piece& p) {
  PassCost c;
  c.host_s = kGraph * kUs * h.factor;
  c.kernels = p.kernels + p.colls;
  return c;
}

void add_host(PassCost& dst, const PassCost& h) {
  dst.host_s += h.host_s;
  dst.kernels += h.kernels;
}

}  // namespace

const char* host_stack_name(HostStack s) {
  switch (s) {
    case HostStack::MegatronCoreTE: return "megatron-core-te";
    case HostStack::MegatronCoreLocal: return "megatron-core-local";
    case HostStack::MegatronLocal: return "megatron-local";
    case HostStack::PyTorchEager: return "pytorch-eager";
  }
  return "?";
}

double multi_tensor_launches(double tensors, double elements, int depth) {
  // PyTorch aten/src/ATen/native/cuda/MultiTensorApply.cuh (apex, TE and DeepSpeed use the same limits): a launch
  // whenever 320 chunk-blocks of 65,536 elements or depth_to_max_tensors[depth − 1] = 110/64/48/36/30 tensors are
  // full [C2]. The blocks are ≈ elements/65,536 + tensors/2 (a partial last chunk per tensor).
  static constexpr double kMaxTensors[] = {110, 64, 48, 36, 30};
  if (tensors <= 0) return 0;
  const double blocks = elements / 65536.0 + tensors / 2;
  const double by_tensors = tensors / kMaxTensors[std::clamp(depth, 1, 5) - 1], by_blocks = blocks / 320.0;
  // Whichever limit fills first sets the launches (tests/data/host/optimizer_launches.csv: CI GPT tp1 Adam 4 + 3 = 7,
  // l2norm 4 + 1, scale 4; 7B tp4 Adam 82 + 8 vs 89 by the exact rule).
  return std::ceil(std::max(by_tensors, by_blocks));
}

HostConstant host_constant(HostStack st) {
  // One constant per Megatron program: Megatron-Core (TE or local spec) and the legacy Megatron-LM / Megatron-DeepSpeed
  // program. The data set them ≈ 1.6× apart (docs/host-model.md §7.8: the 2025 Megatron-LM CI, S53, against vTrain's
  // Megatron-DeepSpeed runs, S56). Keying them on the process's generation instead (Megatron-Core with TorchScript
  // fusions → the legacy constant) gains 0.1 point of cross-validation and costs vTrain's held-out runs a point
  // (docs/host-model.md §7.16 (b)); it once left Megatron-Core's constant unidentified without S53 (59 %, §7.9).
  if (!megatron(st)) return HostConstant::Pytorch;
  return st == HostStack::MegatronLocal ? HostConstant::Legacy : HostConstant::Megatron;
}

HostConstant host_constant(const TrainingConfig& t) { return host_constant(host_stack(t)); }

double FittedConstants::*host_constant_field(HostConstant c) {
  switch (c) {
    case HostConstant::Megatron: return &FittedConstants::host_megatron;
    case HostConstant::Legacy: return &FittedConstants::host_legacy;
    case HostConstant::Pytorch: break;
  }
  return &FittedConstants::host_pytorch;
}

HostModel host_model(const Scenario& sc) {
  const TrainingConfig& tr = sc.train;
  const HostStack st = host_stack(tr);
  HostModel h;
  h.stack = st;
  h.cuda_graphs = tr.cuda_graphs;
  const FittedConstants& k = sc.hw.calib;
  h.factor = k.*host_constant_field(host_constant(st)) * sc.hw.node.host_time_factor;
  h.launch_queue = 1024;  // engine::kDefaultLaunchQueue (docs/host-model.md §2.6)
  h.op_s = kOp * kUs * h.factor;
  // A collective's issue is C++ — ProcessGroupNCCL's bookkeeping and the NCCL launch, timed inside training processes
  // [T2, T4] — so it runs at the host CPU's speed (host_time_factor) without the program's fitted constant, which
  // stands for what a training process's Python spends beyond the micro-benchmarks (docs/host-model.md §7.17).
  h.coll_s = kColl * kUs * sc.hw.node.host_time_factor;
  h.sync_s = kSync * kUs * h.factor;
  h.p2p_s = kP2P * kUs * h.factor;
  const int t = sc.plan.tp, p = sc.plan.pp;
  if (megatron(st)) {
    // get_batch on the first and last stages [§5.1]: MCore broadcasts 5 tensors over TP (get_batch_on_this_tp_rank);
    // legacy broadcast_data first broadcasts their sizes and copies them back to the CPU (a sync).
    h.data_s = kData * kUs * h.factor + (t > 1 ? 5 * h.coll_s : 0);
    h.data_sync = st == HostStack::MegatronLocal && t > 1;
    // Megatron-Core validates the loss twice per micro-batch (torch.isnan / isinf through
    // rerun_state_machine.validate_result, a device→host sync each; --check-for-nan-in-loss-and-grad, default on;
    // none with --no-check-for-nan-in-loss-and-grad).
    h.loss_syncs = megatron_core(st) && tr.nan_checks ? 2 : 0;
    // Non-interleaved pipelines batch each send/recv and call torch.cuda.synchronize() after it
    // (p2p_communication.py batch_p2p_sync; overlap_p2p_comm is forced off without virtual stages).
    h.p2p_sync = p > 1 && sc.plan.vpp == 1;
    // --timing-log-level 2: Timer.start() and Timer.stop() each call torch.cuda.synchronize() (megatron/timers.py,
    // megatron/core/timers.py [C1]) for the level-2 timers around every pass: forward-compute and, inside the forward
    // step, batch-generator (pretrain_gpt.py forward_step); backward-compute (schedules.py forward_step /
    // backward_step). Four syncs per forward pass (three before its kernels, one after), two per backward.
    if (tr.timing_log_level >= 2) {
      h.timer_syncs_fwd = 4;
      h.timer_syncs_bwd = 2;
    }
  } else {
    h.data_s = kData * kUs * h.factor;
    // FSDP: per sharded unit and collective, the pre/post hooks and the copy-in/copy-out kernels [C5, P14].
    if (sharding_traits(sc.plan.sharding).param_gather == ParamGather::PerLayer) {
      h.dp_call_extra_s = kFsdpHook * kUs * h.factor;
      h.dp_call_extra_kernels = 2;
    }
  }
  return h;
}

namespace {

// The FFN half of an MoE layer as Megatron-Core issues it (megatron/core/transformer/moe/: moe_layer.py MoELayer,
// router.py TopKRouter, token_dispatcher.py, experts.py TEGroupedMLP, moe_utils.py; read at core_r0.14), in place of
// the dense MLP's FC1 (LayerNormLinear) and FC2 (Linear) of layer_inventory [D, counted from the code path]:
//   pre-MLP norm (TENorm, the router and the experts both read it)                           1 op
//   router: gating GEMM (a torch linear), scores + top-k (+ the routing map), the load-balancing auxiliary loss
//     (per-expert token fractions and mean probabilities, their product and sum, the auto-scaler attach and the
//     logging tracker's accumulation)                                                        1 linear + 12 ops
//   dispatch preprocess (alltoall / allgather): tokens per expert (routing_map.sum), the per-rank input splits, the
//     count exchange over the EP×ETP group (a collective), output splits and tokens per local expert, their copies
//     to the CPU and the device→host SYNC the host needs for the all-to-all split sizes and the grouped GEMM's
//     m_splits (_maybe_dtoh_and_synchronize)                                                 8 ops + 1 collective
//   permute (fused with --moe-permute-fusion, else index/sort/gather), the token all-to-all, the sort of the received
//     chunks by local expert                                                                 4 ops + 1 collective
//   experts: probabilities on the input, fc1 and fc2 as TE GroupedLinear — one module call each, then per local
//     expert a GEMM launched from C++ (general_grouped_gemm runs one cuBLAS GEMM per group) and, under fp8, a
//     quantisation kernel per group (split_quantize) — and the gated activation         2 TE modules + 2 ops
//                                                                      + (1 or 2)·E_local launches of kCublas per GEMM
//   combine: the inverse chunk sort, the all-to-all back, unpermute with the probabilities  3 ops + 1 collective
//   the MoE layer's own Python (dispatch / combine stages, shared-expert streams)            kLayerGlue
// flex (DeepEP / HybridEP): the layout and permute run inside the library's dispatch kernels (no count exchange, no
// separate permute or sort): 4 ops and 2 library calls priced as collectives; it still copies the received token
// counts to the CPU (DeepEP's CPU waits for num_recv_tokens) — the same sync. With ETP > 1 the tokens are all-gathered
// and reduce-scattered over the ETP group: 2 collectives more each way.
// Backward: autograd runs each forward op's backward node (kBwdRatio × its host time, ≈ 2 kernels), the grouped
// GEMMs' dgrad per expert; the weight gradients are the grouped wgrad GEMMs (one per expert and GEMM). The aux-loss
// and count ops have no backward beyond their nodes; no sync (the split sizes are kept from the forward).
struct MoeInventory {
  Piece fwd, dgrad, wgrad;
  Piece dense_mlp_fwd, dense_mlp_dgrad, dense_mlp_wgrad;  // what the dense layer's inventory counted for FC1/FC2
};

MoeInventory moe_inventory(const CostContext& c, HostStack st) {
  const Scenario& sc = c.sc;
  const TrainingConfig& tr = sc.train;
  const ModelSpec& m = sc.model;
  const bool fp8 = tr.precision == Precision::FP8;
  const bool flex = tr.moe_dispatcher == MoeDispatcher::Flex;
  const int ep = sc.plan.ep, etp = sc.plan.expert_tp();
  const double local = std::max(1, m.experts / std::max(1, ep));
  const double linear = st == HostStack::MegatronCoreTE ? kTeLinear : kTorchLinear;
  const double ln_linear = st == HostStack::MegatronCoreTE ? kTeLnLinear : kTorchLinear + kOp;
  MoeInventory I;
  // The dense MLP counted by layer_inventory: FC1 with its norm (2 kernels) and FC2 (1), forward; their dgrad and
  // wgrad GEMMs backward (2 + 2 kernels).
  I.dense_mlp_fwd = {ln_linear + linear, 3, 0};
  I.dense_mlp_dgrad = {kBwdRatio * (ln_linear + linear), 4, 0};
  I.dense_mlp_wgrad = {kBwdRatio * (ln_linear + linear) / 2, 2, 0};
  // A kernel launched from C++ per local expert and GEMM (and an fp8 quantisation): no Python op each. The fused
  // grouped MLP (--moe-fused-grouped-mlp) launches one grouped kernel per GEMM (and one input quantisation) and runs
  // the activation in its epilogue (one op less).
  const bool fused = tr.moe_fused_grouped_mlp;
  const double per_gemm_groups = (fused ? 1.0 : local) * (fp8 ? 2.0 : 1.0);
  const double act_ops = fused ? 1.0 : 2.0;  // probabilities on the input (+ the gated activation)
  Piece f{kOp + kTorchLinear + 12 * kOp, 14, 0};              // norm, router, scores, aux loss
  if (flex) {
    f += {4 * kOp, 4, 2};
  } else {
    f += {8 * kOp, 8, ep * etp > 1 ? 1.0 : 0.0};             // preprocess (+ count exchange)
    f += {4 * kOp, 4, ep > 1 ? 1.0 : 0.0};                   // permute, all-to-all, chunk sort
    f += {3 * kOp, 3, ep > 1 ? 1.0 : 0.0};                   // combine
  }
  if (etp > 1) f.colls += 2;
  f += {2 * linear + 2 * per_gemm_groups * kCublas + act_ops * kOp, 2 * per_gemm_groups + act_ops, 0};  // grouped MLP
  // LatentMoE: fc1_latent_proj before the dispatch and fc2_latent_proj after the combine, two Linear modules.
  const bool latent = m.moe_latent > 0;
  if (latent) f += {2 * linear, 2, 0};
  // Expert biases on the TEGroupedMLP path (layer.cpp expert_bias_work): the FC2 output split by expert, b·p and the
  // add per local expert, the concatenation and the cast back — Python ops each.
  if (!fused && (m.expert_bias || m.has_ffn_bias())) f += {(2 * local + 3) * kOp, 2 * local + 1 + (flex ? 1 : 0), 0};
  // The clamped activation's inputs on the TEGroupedMLP path (layer.cpp expert_clamp_work): chunk, two clamps and
  // the concatenation — Python ops, 3 kernels.
  if (m.eager_activation_clamp(fused)) f += {4 * kOp, 3, 0};
  // fp8 on the TEGroupedMLP path (layer.cpp expert_fp8_pad_work): TE Fp8Padding of the hidden states and of the
  // probabilities before FC1 and Fp8Unpadding after FC2 — each a module call that builds the padded split list,
  // allocates the buffer and launches one copy kernel through an autograd Function [E: ≈ 2 eager ops each].
  if (!fused && fp8) f += {6 * kOp, 3, 0};
  f += {kLayerGlue, 0, 0};
  f.us += kSync;  // the device→host copy of the token counts and its synchronize (host side)
  // TE GroupedLinear's own Python per local expert and GEMM (transformer_engine/pytorch/module/grouped_linear.py
  // _GroupedLinear, under Megatron-Core's TEGroupedMLP) [D, counted from the code path; unit costs of this file]:
  // forward, the expert's input split view and dtype cast, prepare_for_saving of its tensors and, under fp8, its
  // quantizers' set_usage and get_weight_workspace — 2 (bf16) or 3 (fp8) × kParamPython; backward, Megatron-Core's
  // DDP handling (handle_custom_ddp_from_mcore) allocates a placeholder gradient per expert weight (torch.empty: an
  // ATen call, kOp, no kernel) with its Python (kParamPython). The fused grouped MLP is one grouped op per GEMM;
  // other stacks' expert MLPs are not TE's GroupedLinear.
  const bool grouped_linear = st == HostStack::MegatronCoreTE && !fused;
  const double expert_py_fwd = grouped_linear ? 2 * local * (fp8 ? 3 : 2) * kParamPython : 0.0;
  const double expert_py_bwd = grouped_linear ? 2 * local * (kOp + kParamPython) : 0.0;
  f.us += expert_py_fwd;
  I.fwd = f;
  // Backward: every forward op's node, the a2a/ETP collectives mirrored, the grouped dgrad GEMMs per expert.
  I.dgrad = {kBwdRatio * (f.us - kSync - expert_py_fwd - 2 * per_gemm_groups * kCublas) + 2 * per_gemm_groups * kCublas,
             2 * (f.kernels - 2 * per_gemm_groups) + 2 * per_gemm_groups, f.colls - (flex || ep * etp <= 1 ? 0 : 1)};
  I.wgrad = {kBwdRatio * linear + 2 * per_gemm_groups * kCublas + expert_py_bwd, 2 * per_gemm_groups, 0};
  if (latent) I.wgrad += {kBwdRatio * linear, 2, 0};  // the two projections' wgrad GEMMs
  return I;
}

Piece minus(Piece a, const Piece& b) {
  a.us -= b.us, a.kernels -= b.kernels, a.colls -= b.colls;
  return a;
}

// Megatron --test-mode (the Megatron-LM CI's real-time tests): with q/k norms (--qk-layernorm) every attention
// forward calls Attention.run_realtime_tests (megatron/core/transformer/attention.py, from get_query_key_value_tensors
// after the q/k norms; read at d98e8a64dd) [D, counted from the code path]: torch.stack of the q and k norms' weights
// and biases into one [4, d] tensor (1 op), then for the data-parallel group and again for the tensor-parallel group
// a list of empty_like outputs (1 op per rank, no kernel), torch.distributed.all_gather (a collective whose list
// output is copied out of NCCL's flat buffer, one copy per rank, launched from C++) and per gathered rank an unbind (a
// view, no kernel) and four `assert torch.all(src == tgt)` — an eq and an all kernel and, through the assert's bool(),
// a device-to-host copy and synchronize each. Per forward, over n = dp + tp compared ranks: 1 + 8·n ops with a kernel,
// 2·n without, n copies, 4·n syncs, 2 collectives (1 + 9·n kernels). The syncs stop the host from running ahead of
// the GPU: the GPU idles through the whole check.
// Only the Megatron-Core stacks have it (legacy Megatron-LM has no --test-mode) and only with q/k norms (the method
// returns at once without --qk-layernorm). Returns the host piece; none when it does not apply.
Piece test_mode_checks(const CostContext& c) {
  const Scenario& sc = c.sc;
  if (!sc.train.test_mode || sc.train.stack != Stack::Megatron || sc.model.qk_norm == QkNorm::None) return {};
  const double n = sc.plan.dp + sc.plan.tp;
  return {(1 + 8 * n) * kOp + 2 * n * kOpNoKernel + n * kCublas + 4 * n * kSync, 1 + 9 * n, 2};
}

// One layer of a hybrid model — a single block (plans/validate.cpp admits them on the Megatron-Core TE stack only):
// megatron/core/models/hybrid hybrid_layer_specs.py builds a Mamba layer (MambaLayer: in_proj a
// TELayerNormColumnParallelLinear with its norm fused, MambaMixer, out_proj a TERowParallelLinear), an attention layer
// (a TransformerLayer with the self-attention half alone: LayerNormLinear QKV, TEDotProductAttention, Linear proj), an
// MLP layer (the MLP half alone: LayerNormLinear FC1, the activation fusion, Linear FC2) or an MoE layer (TENorm and
// the MoE block: moe_inventory) — each with one bias-dropout-add fusion and half of a dense layer's Python
// (kLayerGlue / 2 [E]). The pieces are the dense TE layer's (layer_inventory) module costs, split per half:
// forward a LayerNormLinear + Linear pair (3 kernels), backward their dgrad half kBwdRatio·(kTeLnLinear + kTeLinear)/2
// (2 GEMMs, the norm's 2 backward kernels) and wgrad the same with 2 GEMMs, the fusion's backward and a residual
// gradient add. The Mamba mixer between its two linears (layer.cpp mamba_times, counted from the code path): 11
// forward launches (13 with b > 1: two rearrange copies) and 53 backward ones, each a Python-issued ATen op or Triton
// launch at kOp [E: Triton's Python launch path costs about an eager op]. Parameter hooks and fp8 casts follow the
// block's own tensors and GEMMs.
LayerInventory block_inventory(const CostContext& c, LayerKind kind) {
  const Scenario& sc = c.sc;
  const ModelSpec& m = sc.model;
  const TrainingConfig& tr = sc.train;
  const bool drop = m.dropout, fp8 = tr.precision == Precision::FP8;
  const double fuse = tr.jit_torchscript ? kScripted : kCompiled;
  const Piece bda{fuse, 1.0 + (drop && !tr.jit_torchscript ? 1 : 0), 0};
  const Piece pair_fwd{kTeLnLinear + kTeLinear, 3, 0};
  const Piece pair_dgrad{kBwdRatio * (kTeLnLinear + kTeLinear) / 2, 2 + 2, 0};
  const Piece pair_wgrad{kBwdRatio * (kTeLnLinear + kTeLinear) / 2, 2, 0};
  LayerInventory L;
  double gemms = 0, tensors = 0;  // the block's GEMMs (fp8 casts) and parameter tensors (DDP hooks)
  // The block's two TE linears around its mixer or activation.
  auto linear_pair = [&] {
    L.fwd += pair_fwd;
    L.dgrad += pair_dgrad;
    L.wgrad += pair_wgrad;
    gemms = 2;
  };
  L.fwd = {kLayerGlue / 2, 0, 0};
  L.fwd += bda;
  if (!tr.jit_torchscript) L.compiled_fwd_us += fuse;
  L.dgrad = {kLayerGlue / 2 + kBwdRatio * fuse, 1 + 1, 0};
  if (kind.attention == AttentionKind::Mamba) {
    linear_pair();
    const double fwd_launches = 11 + (tr.mbs > 1 ? 2 : 0);
    L.fwd += {fwd_launches * kOp, fwd_launches, 0};
    L.dgrad += {53 * kOp, 53, 0};
    // in_proj (+ its fused norm), conv1d weight and bias, dt_bias, A_log, D, the gated norm, out_proj (+ biases).
    tensors = 2 + 1 + (m.mamba_conv_bias ? 1 : 0) + 3 + 1 + 1 + (m.mamba_proj_bias ? 2 : 0);
  } else if (kind.has_attention()) {
    const bool rope = m.position == PositionKind::RoPE;
    linear_pair();
    const FwdBwd core = te_attention_core(tr, drop);
    L.attn_fwd = core.fwd;
    L.fwd += core.fwd;
    L.dgrad += core.bwd;
    if (rope) {
      const FwdBwd r = megatron_rope(tr);
      L.fwd += r.fwd;
      L.dgrad += r.bwd;
    }
    if (m.qk_norm != QkNorm::None) {
      L.fwd += kQkNorms.fwd;
      L.dgrad += kQkNorms.bwd;
    }
    tensors = 2 + 1 + (m.has_qkv_bias() ? 1 : 0) + (m.has_out_bias() ? 1 : 0) + (m.qk_norm != QkNorm::None ? 2 : 0);
  }
  if (kind.ffn == FfnKind::Dense) {
    linear_pair();
    L.fwd += {fuse, 1, 0};  // the bias-activation fusion
    L.dgrad += {kBwdRatio * fuse, 1, 0};
    tensors = 2 + 1 + (m.has_ffn_bias() ? 2 : 0);
  } else if (kind.ffn == FfnKind::MoE) {
    const MoeInventory I = moe_inventory(c, HostStack::MegatronCoreTE);
    L.fwd += I.fwd;
    L.dgrad += I.dgrad;
    L.wgrad += I.wgrad;
    // norm, router, the grouped experts' fc1 / fc2 (+ shared, + LatentMoE's two projections)
    tensors = 1 + 2 + (m.shared_experts > 0 ? 2 : 0) + (m.moe_latent > 0 ? 2 : 0);
  }
  // Megatron DDP's per-parameter hooks (as layer_inventory: the GEMM weights' gradients are accumulated by the GEMMs
  // themselves unless --no-gradient-accumulation-fusion).
  const double hooks = std::max(0.0, tensors - (tr.no_grad_accum_fusion ? 0 : gemms));
  L.wgrad += {hooks * kHook, hooks, 0};
  if (ddp_forward_hooks(sc)) L.fwd += {6 * kModuleHook + tensors * kParamPython, 0, 0};  // ≈ 6 modules per block [E]
  if (fp8 && gemms > 0) {  // layer_inventory's fp8 casts, per GEMM (12 / 13 / 12 ops for 4 GEMMs)
    L.fwd += {3 * gemms * kOp, 3 * gemms, 0};
    L.dgrad += {3.25 * gemms * kOp, 3.25 * gemms, 0};
    L.wgrad += {3 * gemms * kOp, 3 * gemms, 0};
  }
  // TP collectives as layer_costs issues them (tp_halves): one half's, and none for an MoE block under SP without
  // shared experts.
  const double halves = tp_halves(sc, kind).total();
  if (sc.plan.tp > 1) {
    L.fwd.colls += halves * (tr.sp ? 2 : 1);
    L.dgrad.colls += halves * (tr.sp ? 2 : 1);
    if (tr.sp) L.wgrad.colls += halves;
  }
  return L;
}

}  // namespace

void add_layer_host(const CostContext& c, const HostModel& h, PassCosts& layer, LayerKind kind) {
  const TrainingConfig& tr = c.sc.train;
  const bool single_block = kind.blocks() < 2;
  LayerInventory L = single_block ? block_inventory(c, kind) : layer_inventory(c, host_stack(tr));
  const bool moe = kind.ffn == FfnKind::MoE;
  if (moe && !single_block) {
    const MoeInventory I = moe_inventory(c, host_stack(tr));
    L.fwd = minus(L.fwd, I.dense_mlp_fwd);
    L.fwd += I.fwd;
    L.dgrad = minus(L.dgrad, I.dense_mlp_dgrad);
    L.dgrad += I.dgrad;
    L.wgrad = minus(L.wgrad, I.dense_mlp_wgrad);
    L.wgrad += I.wgrad;
  }
  Piece bwd = L.dgrad;
  bwd += L.wgrad;
  auto conv = [&](const Piece& p) { return h.cuda_graphs ? graphed(h, p) : to_pass(h, p); };
  const PassCost f = conv(L.fwd), b = conv(bwd), bi = conv(L.dgrad), bw = conv(L.wgrad);
  // Reentrant full recompute — Megatron's CheckpointFunction (megatron/core/tensor_parallel/random.py), TE's checkpoint
  // under fp8, DeepSpeed's activation checkpointing, torch.utils.checkpoint(use_reentrant=True) with
  // --reentrant-checkpoint — runs the checkpointed layer's first forward under torch.no_grad(): its ops record no
  // autograd node (≈ 5 instead of ≈ 7 µs per eager op [P4]; a torch.compile'd call 14 instead of 39 µs [P6]). The
  // recompute in the backward runs with grad enabled, at the full cost (rec below). The non-reentrant checkpoint of
  // the PyTorch stack runs its forward with grad enabled (saved-tensor hooks), as without recompute. The ratio is
  // applied to the whole forward inventory but its compiled calls (the layer's Python glue and hooks included).
  const bool nograd_fwd = tr.recompute == Recompute::Full && !h.cuda_graphs &&
                          (megatron(host_stack(tr)) || tr.reentrant_checkpoint);
  PassCost f_first = f;  // the layer's forward pass as the step issues it first
  if (nograd_fwd) {
    Piece ng = L.fwd;
    ng.us = (L.fwd.us - L.compiled_fwd_us) * kNoGradOpRatio + L.compiled_fwd_us * (kCompiledNoGrad / kCompiled);
    f_first = conv(ng);
  }
  // The MoE dispatcher's device→host sync (above): the host waits until the GPU has run everything issued before it,
  // so it cannot issue this layer's forward while the GPU still runs earlier passes. Per MoE layer forward the GPU
  // then idles through the sync and the launch of the next kernel, and, where the layer's forward takes the host
  // longer to issue than the GPU to run (H > G), through the difference: with the sync the layer's forward lasts
  // sync + max(H, G) [D: host and GPU each at a uniform pace between two syncs]. A whole-layer CUDA graph has no such
  // sync (it needs the sync-free, padded path).
  const double catch_up = std::max(0.0, f_first.host_s - layer.fwd.duration_s());  // H − G where the host is behind
  PassCost wait;
  if (moe && !h.cuda_graphs) wait.host_wait_s = h.resync_s() + catch_up;
  // GPT-OSS's clamped quick-GEGLU on the TEGroupedMLP path: Megatron-Core's weighted_bias_quick_geglu_impl
  // (megatron/core/fusions/fused_bias_geglu.py, since 2e29a5e1e3, 2025-09; the same at d98e8a64dd) builds its linear
  // offset as torch.tensor(linear_offset, device=input.device) on every call — a pageable host-to-device copy with
  // non_blocking=False, which ATen runs as cudaMemcpyAsync + cudaStreamSynchronize (memcpy_and_sync): a second drain
  // of the queue in every MoE layer's forward, the GPU idle through the sync and the relaunch (the host has caught up
  // at the dispatcher's sync already, so no second catch-up). The moe_act recompute calls it again (below).
  const bool geglu_sync = moe && !h.cuda_graphs && megatron(host_stack(tr)) &&
                          c.sc.model.eager_activation_clamp(tr.moe_fused_grouped_mlp);
  if (geglu_sync) wait.host_wait_s += h.resync_s();
  // --test-mode's checks (test_mode_checks) in the attention forward: the host issues them, the GPU idles through them
  // — their host time and the two all-gathers of the [4, d] norm parameters (one per data-parallel and tensor-parallel
  // rank gathered) — after it has caught up with the host as at the MoE sync (once per layer: an MoE layer's sync
  // already counts the catch-up).
  PassCost checks;
  if (const Piece tm = test_mode_checks(c); tm.colls > 0) {
    checks = conv(tm);
    const Plan& pl = c.sc.plan;
    const double norm_bytes = 4.0 * static_cast<double>(c.sc.model.d()) * 2;  // bf16 weight and bias of q and k norms
    const GroupShape dp = group_shape(pl, GroupKind::DP, c.sc.hw.node.gpus_per_node);
    checks.host_wait_s = checks.host_s +
                         group_collective_s(c, Collective::AllGather, pl.dp * norm_bytes, dp) +
                         group_collective_s(c, Collective::AllGather, pl.tp * norm_bytes, c.tp_group) +
                         (moe ? 0.0 : catch_up);
  }
  PassCost f_issue = f;  // the forward's host part with the checks (as the recompute re-issues it)
  add_host(f_issue, checks);
  add_host(f_first, checks);
  add_host(layer.fwd, f_first);
  layer.fwd.host_wait_s += wait.host_wait_s + checks.host_wait_s;
  add_host(layer.bwd, b);
  add_host(layer.bwd_input, bi);
  add_host(layer.bwd_weight, bw);
  // Recompute precedes the input gradient: full re-issues the whole forward (collectives included) plus the RNG-state
  // save/restore of the checkpoint function (≈ 4 ops [E]); selective re-issues the attention core.
  PassCost rec;
  if (tr.recompute == Recompute::Full) {
    rec = f_issue;
    if (!h.cuda_graphs) rec.host_s += 4 * h.op_s;
  } else if (tr.recompute == Recompute::Selective) {
    const RecomputeModules mods = tr.recompute_modules;
    Piece sel;
    if (mods.has(RecomputeModule::CoreAttn)) sel += L.attn_fwd;
    if (mods != RecomputeModules{}) {
      // The other modules of --recompute-modules (sim/step/costs/layer.cpp selective_recompute): each re-issues its
      // forward kernels; a checkpointed module (mlp, moe, shared_experts) also saves and restores the RNG state
      // (tensor_parallel.checkpoint, ≈ 4 ops as for full recompute [E]).
      const ModelSpec& m = c.sc.model;
      const bool mla = kind.attention == AttentionKind::MLA, megatron_te = host_stack(tr) == HostStack::MegatronCoreTE;
      const double linear = megatron_te ? kTeLinear : kTorchLinear;
      const double t_colls = c.sc.plan.tp > 1 ? (tr.sp ? 2.0 : 1.0) : 0.0;
      const Piece act{kCompiled, 1, 0};
      const Piece ckpt{4 * kOp, 0, 0};
      if (mods.has(RecomputeModule::LayerNorm)) {
        const double norms = (mla ? 1 : 0) + (moe ? 1 : 0);
        sel += {norms * kOp, norms, 0};
      }
      if (mla && mods.has(RecomputeModule::MlaUpProj))
        sel += {2 * linear + (m.position == PositionKind::RoPE ? 2 * kOp : 0.0), m.position == PositionKind::RoPE ? 4.0 : 2.0, 0};
      if (!moe && mods.has(RecomputeModule::Mlp)) {
        sel += moe_inventory(c, host_stack(tr)).dense_mlp_fwd;
        sel += act;
        sel += {0, 0, t_colls};
        sel += ckpt;
      }
      if (moe && mods.has(RecomputeModule::Moe)) {
        sel += moe_inventory(c, host_stack(tr)).fwd;
        sel += ckpt;
      } else if (moe) {
        if (mods.has(RecomputeModule::MoeAct)) sel += act;
        if (mods.has(RecomputeModule::SharedExperts) && m.shared_experts > 0) {
          sel += {2 * linear, 2, t_colls};
          sel += act;
          sel += ckpt;
        }
      }
    }
    rec = conv(sel);
  } else if (tr.recompute == Recompute::Op) {
    // torchtitan's per-op checkpointing: the checkpoint re-runs the block's forward under its policy, every op issued
    // again except that the saved ones (4 matmuls, scaled_dot_product_attention, the reduce-scatters) return their
    // cached outputs without a kernel; the TP all-gathers are issued again. Eager: the forward's host work less those
    // calls' kernels (their Python and dispatch still run). Compiled: the recompute is part of AOTAutograd's compiled
    // backward — its kernels launched from the wrapper (3 GEMMs and the ≈ 5 fused element-wise kernels of the
    // forward).
    const double tp_ag = c.sc.plan.tp > 1 && tr.sp ? 2.0 : 0.0;
    Piece op;
    if (tr.compile) op = {(3 + 5) * kCublas, 3 + 5, tp_ag};
    else op = {L.fwd.us, std::max(0.0, L.fwd.kernels - 5), tp_ag};
    rec = conv(op);
  }
  add_host(layer.bwd, rec);
  add_host(layer.bwd_input, rec);
  if (tr.recompute == Recompute::Full ||
      (tr.recompute == Recompute::Selective && tr.recompute_modules.has(RecomputeModule::Moe))) {
    layer.bwd.host_wait_s += wait.host_wait_s;
    layer.bwd_input.host_wait_s += wait.host_wait_s;
  } else if (geglu_sync && tr.recompute == Recompute::Selective && tr.recompute_modules.has(RecomputeModule::MoeAct)) {
    // moe_act alone re-runs the activation (its blocking offset copy) inside the backward.
    layer.bwd.host_wait_s += h.resync_s();
    layer.bwd_input.host_wait_s += h.resync_s();
  }
  // Full recompute re-runs the attention forward, --test-mode's checks with it (rec = f_issue holds their host time).
  if (tr.recompute == Recompute::Full) {
    layer.bwd.host_wait_s += checks.host_wait_s;
    layer.bwd_input.host_wait_s += checks.host_wait_s;
  }
}

void add_edge_host(const CostContext& c, const HostModel& h, PassCosts& embed, PassCosts& head) {
  const Scenario& sc = c.sc;
  const int t = sc.plan.tp;
  const bool meg = h.megatron();
  const bool learned = sc.model.position == PositionKind::Learned;
  // Embedding: lookup (+ position lookup and add) (+ dropout); vocab-parallel masking and its all-reduce /
  // reduce-scatter with TP. Backward: the embedding gradient's scatter-add (2–3 kernels) — a weight gradient.
  Piece ef{(1.0 + (learned ? 2 : 0) + (sc.model.dropout ? 1 : 0)) * kOp + 20, 1.0 + (learned ? 2 : 0) + (sc.model.dropout ? 1 : 0), 0};
  if (t > 1) ef += {4 * kOp, 4, 1};
  // Megatron-Core DDP's forward pre-hooks (layer_inventory): around the layers each micro-batch also calls GPTModel,
  // its embedding (LanguageModelEmbedding, word_embeddings, position_embeddings when learned, embedding_dropout), the
  // TransformerBlock and the rotary embedding module (RoPE), and on the last stage final_layernorm and output_layer —
  // priced once per micro-batch with the embedding's forward: ≈ 8 modules and 4 parameter tensors.
  const Piece eb{kBwdRatio * ef.us, 3, 0};
  if (ddp_forward_hooks(sc)) ef += {8 * kModuleHook + 4 * kParamPython, 0, 0};
  add_host(embed.fwd, to_pass(h, ef));
  add_host(embed.bwd, to_pass(h, eb));
  add_host(embed.bwd_weight, to_pass(h, eb));
  // Head: final norm, output linear, cross-entropy on fp32 logits — Megatron's vocab-parallel cross-entropy ≈ 15 ops
  // forward and 6 backward with 3 all-reduces of per-token scalars over TP [§7.1, C1]; loss masking and reduction
  // ≈ 8 ops. With TP + SP the head input is gathered forward and reduce-scattered backward.
  // The output layer is Megatron's own ColumnParallelLinear in every Megatron spec (megatron/core/models/gpt/gpt_model.py
  // GPTModel.output_layer = tensor_parallel.ColumnParallelLinear [C1]), not a Transformer Engine module: a torch
  // matmul through Megatron's linear autograd function, as the local spec's linears.
  // With --cross-entropy-fusion-impl te (edges.cpp): Transformer Engine's parallel cross entropy instead of the 15
  // ops — three zero-filled buffers, the gradient buffer, the online-softmax and loss Triton kernels, a clamp, the
  // loss's sum and division (≈ 9 ops) and with TP one all-gather of the per-row max / sum / target logit instead of 3
  // all-reduces; backward torch.equal(grad_output, 1.0) — a device-to-host sync, skipped when the step is a CUDA graph
  // (Megatron-Core passes is_cg_capturable) — and the gradient-scaling kernel (2 ops) instead of 6
  // (transformer_engine/pytorch/triton/cross_entropy.py; megatron/core/models/common/language_module) [D].
  const bool te_ce = sc.train.te_loss();
  const bool te_ce_sync = te_ce && !h.cuda_graphs;
  const double lin = meg ? kTorchLinear + 10 : kTorchLinear;
  const double ce_fwd_ops = te_ce ? 9 : 15, ce_bwd_ops = te_ce ? 2 : 6;
  Piece hf{kOp + lin + (ce_fwd_ops + 8) * kOp, 1.0 + 1 + ce_fwd_ops + 8, 0};
  if (t > 1) hf.colls += (te_ce ? 1 : 3) + (sc.train.sp ? 1 : 0);
  Piece hb{kBwdRatio * (kOp + lin) + ce_bwd_ops * kOp + (te_ce_sync ? kSync : 0.0), 2.0 + 2 + ce_bwd_ops, 0};
  if (t > 1) hb.colls += 1;
  Piece hbi = hb, hbw{kBwdRatio * lin / 2, 1, 0};
  hbi.us -= hbw.us;
  hbi.kernels -= 1;
  add_host(head.fwd, to_pass(h, hf));
  add_host(head.bwd, to_pass(h, hb));
  add_host(head.bwd_input, to_pass(h, hbi));
  add_host(head.bwd_weight, to_pass(h, hbw));
  // TE's torch.equal sync at the start of the loss's backward: the GPU drains, idles through the sync and the launch
  // of the next kernel (as the MoE dispatcher's sync, add_layer_host).
  if (te_ce_sync) {
    head.bwd.host_wait_s += h.resync_s();
    head.bwd_input.host_wait_s += h.resync_s();
  }
}

void add_step_host(const Scenario& sc, StepCosts& k) {
  HostModel& h = k.host;
  const TrainingConfig& tr = sc.train;
  const ModelSpec& m = sc.model;
  const Plan& pl = sc.plan;
  const bool meg = h.megatron();
  const ShardingTraits& sh = sharding_traits(pl.sharding);
  const double shards = sh.shards_optimizer ? std::max(1, k.shard_degree) : 1;
  const double tensors_layer = layer_param_tensors(m);
  const double tensors_all = m.layers * tensors_layer + 3 + (m.tied_embeddings ? 0 : 1);
  // Per stage: its own parameters (layers of its chunks, embedding and head tensors) go through the optimizer.
  const int P = pl.pp;
  k.stage_host_optimizer_s.assign(P, 0.0);
  k.stage_host_optimizer_kernels.assign(P, 0.0);
  for (int s = 0; s < P; ++s) {
    int layers = 0;
    for (int v = 0; v < pl.vpp; ++v) layers += k.layers_per_chunk[v * P + s];
    double tensors = layers * tensors_layer + (s == 0 ? 2 : 0) + (s == P - 1 ? 2 : 0);
    double elems = layers * k.layer_params + (s == 0 ? k.embed_params : 0) +
                   (s == P - 1 ? k.head_stage_params().total() : 0);
    // The distributed optimizer / ZeRO shard: a contiguous 1/N slice of the flat buffer (≈ tensors/N + 1 pieces).
    if (shards > 1) {
      tensors = tensors / shards + 1;
      elems /= shards;
    }
    // FusedAdam per param group (weight decay / none, depth 4), the grad-norm l2norm (depth 1, + a cleanup kernel),
    // the clip scale (depth 2), and the copy to the 16-bit model parameters (depth 2).
    const double adam = multi_tensor_launches(tensors * 0.35, elems * 0.99, 4) +  // weights: ≈ 1/3 of the tensors
                        multi_tensor_launches(tensors * 0.65, elems * 0.01, 4);   // norms, biases: no decay
    const double l2 = multi_tensor_launches(tensors, elems, 1) + 1;
    const double scale = multi_tensor_launches(tensors, elems, 2);
    const double copy = multi_tensor_launches(tensors, elems, 2);
    double launches = adam + l2 + scale + copy;
    if (tr.precision == Precision::FP16) launches += multi_tensor_launches(tensors, elems, 1) + (meg ? tensors : 0);
    k.stage_host_optimizer_kernels[s] = launches;
    k.stage_host_optimizer_s[s] = (launches * kOp + tensors * 4 * kParamPython + 100) * kUs * h.factor;
  }
  // Fixed work of the step (§5.1–5.3), on the reference host, × factor.
  h.step_begin_s = (tensors_all * 1.0 + kOp) * kUs * h.factor;  // zero_grad: one fill per buffer, Python per tensor
  if (meg) {
    // finish_grad_sync: a NaN check (norm + .item()) per gradient bucket (check_for_nan_in_grad, default on with
    // --check-for-nan-in-loss-and-grad) — Megatron-Core only.
    if (megatron_core(h.stack) && tr.nan_checks) {
      const double grad_bytes = (m.layers * k.layer_params / P) * grad_wire_bytes(pl.sharding, tr.precision);
      const int buckets = std::max(1, static_cast<int>(std::ceil(grad_bytes / tr.bucket_bytes)));
      h.grad_check_syncs = buckets;
      h.grad_check_s = buckets * (2 * kOp + kSync) * kUs * h.factor;
    }
    // optimizer.step(): the grad norm for clipping (l2norm launches + all-reduce + .item(), clip_grads.py); fp16:
    // unscale + found-inf all-reduce + .item() (optimizer.py). Counted as host work around one sync each.
    h.pre_step_syncs = 1 + (tr.precision == Precision::FP16 ? 1 : 0);
    h.pre_step_s = h.pre_step_syncs * ((kSync + 3 * kOp) * kUs * h.factor + h.coll_s);
    // --timing-log-level ≥ 1: the level-1 timers, each a synchronize at start and at stop (the start also a barrier
    // with --barrier-with-L1-time, Megatron's default) — forward-backward (schedules.py), all-grads-sync,
    // layernorm-grads-all-reduce and embedding-grads-all-reduce (finalize_model_grads), optimizer and its six phases
    // (copy-to-main-grad, unscale-and-check-inf, clip-main-grad, count-zeros, inner-step, copy-main-to-model-params;
    // training.py train_step, optimizer/optimizer.py step [C1 @88ddc36ec7]): 11 timers, 22 syncs before and around
    // the update, counted with the pre-step drain (after the first they find the device drained).
    if (tr.timing_log_level >= 1) {
      h.pre_step_syncs += 22;
      h.pre_step_s += 22 * kSync * kUs * h.factor;
    }
    // After the step (Megatron-Core training.py): update_successful and the grad norm reduced across the
    // model-parallel group, a tiny all-reduce and a sync each; optional counters; the training log every
    // log_interval steps (loss .item(), timers with 2 barriers and 2 synchronizes, ≈ 30 TensorBoard scalars).
    int syncs = megatron_core(h.stack) ? 2 : 0;
    double us = syncs * (2 * kOp + kSync), colls = syncs;  // (the collectives at h.coll_s)
    if (tr.log_num_zeros_in_grad) {
      syncs += 1;
      us += (tensors_all / shards) * 4 * kOp + kSync;
      colls += 1;
    }
    if (tr.log_params_norm) {
      syncs += 1;
      us += multi_tensor_launches(tensors_all, m.layers * k.layer_params, 1) * kOp + tensors_all * kParamPython + kSync;
      colls += 1;
    }
    us += (3 * kSync + 30 * kTbScalar + 300) / tr.log_interval;
    colls += 2.0 / tr.log_interval;
    // The active timers are logged every log step: their min/max over ranks (one all-gather and a copy to the CPU,
    // timers.py _get_elapsed_time_all_ranks) and, with --log-timers-to-tensorboard (as the CI runs set), a TensorBoard
    // scalar each — 11 timers at level 1, + forward-compute, backward-compute, batch-generator and the 6 p2p timers
    // at level 2.
    if (tr.timing_log_level >= 1) {
      const double timers = 11 + (tr.timing_log_level >= 2 ? 3 + (P > 1 ? 6 : 0) : 0);
      us += (kSync + timers * kTbScalar) / tr.log_interval;
      colls += 1.0 / tr.log_interval;
    }
    if (tr.log_interval == 1) syncs += 3;
    h.post_step_syncs = syncs;
    h.post_step_s = us * kUs * h.factor + colls * h.coll_s;
  } else {
    // torchtitan / FSDP: clip_grad_norm_ without .item(), the loss .item() at log steps only [C4].
    h.pre_step_s = 3 * kOp * kUs * h.factor + h.coll_s;
    h.post_step_s = (kSync + 10 * kOp) / tr.log_interval * kUs * h.factor;
    h.post_step_syncs = tr.log_interval == 1 ? 1 : 0;
  }
}

}  // namespace parsim

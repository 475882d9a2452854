// parsim plans/ — the training settings of one step (everything but the model, the hardware and the plan).
// Fields with an "auto" value (seq 0, gbs 0, schedule Auto, optimizer_sync Auto, stack Auto, bucket_bytes 0, the
// *_auto switches) are
// resolved in one place, resolve_training() (plans/scenario.hpp); the simulator reads resolved values only.
// A new option: its field here, its row in scenario_options() (plans/scenario.cpp).
#pragma once
#include "sim/core/types.hpp"

#include <cstdint>
#include <string>

namespace parsim {

struct Plan;

// Pipeline schedules (plans/schedule.hpp has their traits and orders). Auto = interleaved when vpp > 1, else 1F1B.
// ZBH1/ZBH2/ZBV: zero-bubble (Qi et al., ICLR 2024); DualPipe/DualPipeV: DeepSeek-V3 report §3.2.1 and the public
// DualPipe repository.
enum class Schedule { Auto, GPipe, OneFOneB, Interleaved, ZBH1, ZBH2, ZBV, DualPipe, DualPipeV };
std::string to_string(Schedule s);
// Case-insensitive; accepts the names of schedule_traits() and their aliases, and "auto".
Schedule parse_schedule(const std::string& s);

// What ends a step's optimizer phase. Barrier: every stage waits for the global checks before the next step (the
// gradient-norm all-reduce for clipping and the inf/NaN check span all pipeline stages), so the step is the whole
// timeline. PostValidation (Qi et al. 2024 §4): each stage steps its optimizer as soon as its own gradients are
// reduced and the global checks run afterwards, rolling the update back in the rare step that needs clipping or
// skipping; back-to-back steps then overlap and a step costs the longest stage's own span. Auto: the schedule's
// (ScheduleTraits::optimizer_sync).
enum class OptimizerSync { Auto, Barrier, PostValidation };
std::string to_string(OptimizerSync s);
OptimizerSync parse_optimizer_sync(const std::string& s);

// The software stack whose kernels and defaults apply. Auto follows the plan's sharding term, whose semantics already
// name the framework (docs/cli.md): zero0/zero1 → Megatron-LM / Megatron-Core (NeMo) with Transformer
// Engine; zero2/zero3/fsdp/hsdp → PyTorch-native stacks (FSDP: llm-foundry, torchtitan, fms-fsdp; DeepSpeed).
//   Megatron        Megatron-Core with Transformer Engine as its recipes run it (NeMo, Megatron-Bridge, Megatron-LM
//                   ≥ 2023): fused kernels, cuDNN/flash attention, sequence parallelism with tp > 1; with fsdp/zero3
//                   (/zero2, hsdp) it is Megatron-FSDP (megatron/core/distributed/fsdp), not PyTorch's FSDP.
//   MegatronLegacy  Megatron-LM before Megatron-Core and TE (2021–early 2023) and Megatron-DeepSpeed (BLOOM, MT-NLG,
//                   GPT-NeoX): unfused QKᵀ/softmax/AV attention with dropout, apex kernels (no TE, no fp8), no
//                   sequence parallelism, no communication overlap (gradients reduced after the backward), fp16 with
//                   dynamic loss scaling, pipeline sends scattered over the TP group (the scatter-gather
//                   optimisation, Narayanan et al. 2021 §4.1; removed in Megatron-LM 39b83c7953, 2023-01-31).
//   PyTorch         PyTorch-native stacks: DDP, FSDP/FSDP2 (torchtitan, llm-foundry, fms-fsdp), DeepSpeed ZeRO.
enum class Stack { Auto, Megatron, MegatronLegacy, PyTorch };
std::string to_string(Stack s);
// Case-insensitive: auto, megatron, megatron-legacy (alias megatron-deepspeed), pytorch.
Stack parse_stack(const std::string& s);
// The stacks a sweep compares when asked for several (`--stack megatron,pytorch`).
inline constexpr Stack kStacks[] = {Stack::Megatron, Stack::MegatronLegacy, Stack::PyTorch};

// Megatron-Core's options for lighter first/last pipeline stages (megatron/training/arguments.py;
// megatron/core/transformer/transformer_block.py get_num_layers_to_build @d98e8a64): a fixed layer count on the first
// and/or last pipeline stage (the rest split evenly over the other stages), or the embedding and/or the loss counted as
// one layer each in the split (the first/last virtual stage then builds one layer fewer; it may build none). Unset
// (all defaults): parsim spreads layers that do not divide evenly as those options would (plans/plan.cpp).
struct PipelineSplit {
  int first_stage_layers = 0;  // --decoder-first-pipeline-num-layers (0 = unset)
  int last_stage_layers = 0;   // --decoder-last-pipeline-num-layers (0 = unset)
  bool account_for_embedding = false;  // --account-for-embedding-in-pipeline-split
  bool account_for_loss = false;       // --account-for-loss-in-pipeline-split
  // --pipeline-model-parallel-layout (Megatron-Core PipelineParallelLayerLayout): every virtual stage's layers spelled
  // out, e.g. DeepSeek-V3's "Et*4|(t*4|)*14tmL" (plans/plan.hpp parse_pipeline_layout); null = unset. Interned
  // (intern_pipeline_layout: equal layouts share one pointer), so that the split — and the TrainingConfig the sweep
  // copies per plan — stays trivially copyable and == compares the layouts.
  const std::string* layout = nullptr;
  bool any() const {
    return first_stage_layers > 0 || last_stage_layers > 0 || account_for_embedding || account_for_loss ||
           layout != nullptr;
  }
  friend bool operator==(const PipelineSplit&, const PipelineSplit&) = default;
};

// How MoE layers move tokens to their experts (Megatron-Core --moe-token-dispatcher-type): AllToAll permutes the
// tokens locally and exchanges them with an all-to-all over the EP group (Megatron-Core's recommendation with expert
// parallelism, and parsim's default); AllGather gathers every token of the EP×ETP group on every rank and
// reduce-scatters the expert outputs back (Megatron-Core's `allgather` dispatcher); Flex is the `flex` dispatcher
// with DeepEP or HybridEP kernels (--moe-flex-dispatcher-backend deepep|hybridep): each token goes once to each
// node and each GPU holding one of its experts, not once per expert (sim/step/costs/comm.cpp).
enum class MoeDispatcher { AllToAll, AllGather, Flex };
std::string to_string(MoeDispatcher d);
MoeDispatcher parse_moe_dispatcher(const std::string& s);

// Default routing imbalance of MoE layers (--moe-imbalance): the busiest expert's load over the mean, 1.25. Source:
// Switch Transformers (Fedus et al. 2022, JMLR 23, §2.2 and Table 1) train top-1 routers with expert capacity factor
// 1.25 — capacity = factor × the mean tokens per expert — as the smallest buffer that keeps tokens from being dropped
// under their auxiliary-loss-balanced routing, i.e. the busiest expert sits near 1.25 × the mean; GShard (Lepikhin et
// al. 2021) and Megatron-Core's capacity examples use 1.0–2.0. [U] A provisioning figure from routed training, not a
// per-rank measurement of a dropless run (an EP rank holding several experts averages some of it out); published
// benchmarks force balanced routing and state 1.0 (NVIDIA's MoE performance tables, tests/data/validation/moe.csv).
inline constexpr double kDefaultMoeImbalance = 1.25;

struct TrainingConfig {
  std::int64_t seq = 0;    // tokens per sequence; 0 = the model's seq_len
  std::int64_t gbs = 0;    // global batch, sequences per optimizer step; 0 = the contract's default
  std::int64_t mbs = 1;    // micro-batch, sequences
  Recompute recompute = Recompute::None;
  // With recompute Selective: which modules (Megatron-Core --recompute-modules; default core_attn, the attention core).
  RecomputeModules recompute_modules;
  bool sp = false;
  bool sp_auto = false;               // true: decided by the stack (resolve_training); the option table's default
  Precision precision = Precision::BF16;
  Schedule schedule = Schedule::OneFOneB;  // Auto: interleaved iff vpp > 1 (the option table's default)
  OptimizerSync optimizer_sync = OptimizerSync::Auto;  // Auto: the schedule's (resolve_training)
  // Data-parallel and overlap options (Megatron-Core / PyTorch defaults, documented in the README).
  Stack stack = Stack::Auto;          // see Stack
  double bucket_bytes = 0;            // gradient bucket; 0 = the stack's default
  bool overlap_grad_reduce = true;    // Megatron --overlap-grad-reduce; DDP overlaps buckets with backward
  bool overlap_param_gather = true;   // Megatron --overlap-param-gather (ZeRO-1 AG overlapped with next forward)
  bool overlap_auto = false;          // true: both overlaps decided by the stack (off for MegatronLegacy)
  bool grad_reduce_in_fp32 = true;    // Megatron: fp32 main-grad buffer and reduction (Megatron-LM forces it for
                                      // bf16); false = --no-grad-reduce-in-fp32 (16-bit grads, NeMo perf recipes)
  bool fp8_params = false;            // TE fp8 primary weights (NeMo fp8_params, Megatron --fp8-param-gather): layer
                                      // weights held in fp8 (+ Hopper's transpose), no 16-bit copy nor fp8 cache
  bool bf16_optimizer = false;        // Adam moments in bf16 and the bf16 weights as master (NeMo optim.dtype bf16,
                                      // Apex DistributedFusedAdam store_params=False): 4 B of state per parameter
  bool bf16_moments = false;          // --adam-moments bf16: Adam's exp_avg / exp_avg_sq in bf16 beside the fp32 master
                                      // (Megatron-Core --use-precision-aware-optimizer --exp-avg-dtype bf16
                                      // --exp-avg-sq-dtype bf16, TE FusedAdam): 4 + 2 + 2 B of state per parameter
  bool tp_comm_overlap = false;       // Megatron --tp-comm-overlap (TE userbuffers): TP comm hidden behind GEMMs
  bool tp_comm_overlap_auto = true;   // true: decided by the stack (resolve_training), else tp_comm_overlap
  bool overlap_p2p = true;            // Megatron overlap of PP send/recv with compute
  bool fsdp_no_sync = false;          // FSDP/ZeRO-3 gradient sync only at the last micro-batch (unsharded grads)
  bool flash_attention = true;        // fused flash kernel; false = unfused QKᵀ/softmax/AV with s² tensors in HBM
  bool flash_v1 = false;              // with flash_attention: FlashAttention-1 kernels (PyTorch 2.0–2.1 SDPA), half
                                      // FlashAttention-2's speed (sim/step/costs/layer.cpp kFlash2OverFlash1)
  bool attention_cudnn = false;       // with flash_attention: cuDNN's fused attention (TE FusedAttention, PyTorch SDPA's
                                      // cuDNN backend) — on the PyTorch stack the preset's megatron-profile curves
  bool fused_residual_norm = false;   // each residual add in one kernel with the norm after it (llm.c, Liger,
                                      // torch.compile): the norm's read of the sum is gone (layer.cpp)
  bool activation_epilogue = false;   // a plain FFN activation in FC1's cuBLASLt epilogue (llm.c): no separate read
  bool te_cross_entropy = false;      // Megatron --cross-entropy-fusion-impl te: Transformer Engine's Triton
                                      // parallel cross entropy (edges.cpp); off: Megatron's own (native) loss
  bool cross_entropy_fusion = false;  // the LM head's softmax, loss and logit gradient in one kernel over the
                                      // 16-bit logits (llm.c fused_classifier), no fp32 logits (edges.cpp)
  bool reentrant_checkpoint = false;  // PyTorch stack: full recompute re-runs the whole forward (use_reentrant=True);
                                      // off: non-reentrant with early stop (costs/layer.cpp)
  bool compile = false;               // PyTorch stack: the blocks compiled with torch.compile (Inductor's fused
                                      // kernels launched from its wrapper); off: eager ATen ops (costs/layer.cpp
                                      // pytorch_eager_work, costs/host.cpp)
  bool eager_loss = false;            // with compile: the loss left eager (torchtitan < 2025-04); memory only
  bool fused_rmsnorm = false;         // eager PyTorch stack: RMSNorm as one fused kernel each way (torchtitan 2024
                                      // norm_type fused_rmsnorm, Liger, Apex), not the fp32 composite
  bool fp8_attention = false;         // with fp8 on the Megatron stack: the attention core as cuDNN's fp8 fused kernel
                                      // (Megatron-Core TransformerConfig.fp8_dot_product_attention, Transformer Engine fp8_dpa;
                                      // sim/step/costs/layer.cpp fp8_attention_ratio)
  bool rope_fusion = true;            // Megatron-Core stacks: RoPE as Transformer Engine's fused kernel (Megatron
                                      // --apply-rope-fusion, the default); off (--no-rope-fusion): rope_utils.py's
                                      // unfused ops (sim/step/costs/layer.cpp unfused_rope_work)
  // Mixture-of-experts layers (issue 10; ignored by dense models).
  double moe_imbalance = kDefaultMoeImbalance;  // busiest EP rank's routed (token, expert) pairs over the mean, ≥ 1
  bool moe_imbalance_given = false;   // --moe-imbalance was stated (checked against --moe-force-balance)
  bool moe_force_balance = false;     // Megatron-Core moe_router_force_load_balancing: random router logits, so the
                                      // busiest EP rank carries the expected maximum of ep random loads
                                      // (plans/scenario.cpp forced_balance_imbalance)
  double moe_capacity_factor = 0;     // 0: dropless; > 0: each expert keeps at most factor × its mean share, the rest
                                      // is dropped before the dispatch (--moe-expert-capacity-factor)
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
  bool moe_shared_expert_overlap = false;  // shared experts run beside the dispatch/combine all-to-alls
                                           // (Megatron-Core --moe-shared-expert-overlap)
  bool moe_a2a_overlap = false;       // EP communication of one micro-batch runs beside another's compute
                                      // (Megatron-Core --overlap-moe-expert-parallel-comm, "1F1B A2A overlap")
  bool moe_fused_grouped_mlp = false; // the routed experts' MLP as Transformer Engine's fused grouped kernels (CuTe-DSL
                                      // GroupGemm with the activation and quantisation in its epilogue; Megatron-Bridge
                                      // cutedsl_fused_grouped_mlp, NVTE_CUTEDSL_FUSED_GROUPED_MLP=1) instead of
                                      // TEGroupedMLP's GroupedLinear (one cuBLAS GEMM per local expert on TE's 4
                                      // compute streams, the activation and fp8 quantisations as separate kernels)
  bool attention_auto = false;        // true: decided by the stack (unfused for MegatronLegacy)
  PipelineSplit split;                // lighter first/last pipeline stages (Megatron-Core options)
  // Megatron-Core --cpu-offloading with --cpu-offloading-num-layers (Transformer Engine's get_cpu_offload_context,
  // default scheduling): the activations of the first N transformer layers go to host memory during the forward and
  // come back for the backward, with at most layers − N layers' activations on the GPU (sim/step/costs/offload.cpp,
  // analysis/memory.cpp). 0: none.
  int cpu_offload_layers = 0;
  // The host (docs/host-model.md): how the framework issues the step.
  bool cuda_graphs = false;           // layer passes captured as CUDA graphs (Megatron --enable-cuda-graph / TE
                                      // make_graphed_callables, torch.compile mode="reduce-overhead"): one launch each
  int log_interval = 0;               // steps between training logs (timers, loss .item()); 0 = the stack's default
  bool deterministic = false;         // Megatron --deterministic-mode: NaN-filled allocations, deterministic kernels
  int timing_log_level = 0;           // Megatron --timing-log-level: 1 adds the step's level-1 timers, 2 the per-pass
                                      // timers (each start/stop a torch.cuda.synchronize())
  bool local_layers = false;          // Megatron-Core --transformer-impl local (torch matmul + Megatron's own fused
                                      // kernels) instead of Transformer Engine's modules; MegatronLegacy is always local
  bool log_num_zeros_in_grad = false; // Megatron --log-num-zeros-in-grad (per-step count + sync)
  bool log_params_norm = false;       // Megatron --log-params-norm (per-step norm + sync)
  bool nan_checks = true;             // Megatron --check-for-nan-in-loss-and-grad (default on; off with
                                      // --no-check-for-nan-in-loss-and-grad): the loss checks' syncs per micro-batch
                                      // and the gradient buckets' NaN check (costs/host.cpp)
  bool no_grad_accum_fusion = false;  // Megatron --no-gradient-accumulation-fusion: the wgrad GEMMs write a fresh
                                      // gradient that the DDP hook adds to main_grad (a hook for every weight too)
  bool jit_torchscript = false;       // Megatron's jit_fuser is torch.jit.script (torch < 2.2) instead of torch.compile
  bool test_mode = false;             // Megatron --test-mode: with --qk-layernorm every attention forward checks its
                                      // q/k norm parameters across the DP and TP groups (costs/host.cpp test_mode_checks)
  std::int64_t micro_batches(const Plan& p) const;  // gbs / (dp · mbs)
  // Whether the loss runs Transformer Engine's parallel cross entropy: --cross-entropy-fusion-impl te on the Megatron
  // stack (no effect on others; resolve_training refuses it beside --cross-entropy-fusion). The one predicate the
  // loss's time (costs/edges.cpp), host (costs/host.cpp) and memory (analysis/memory.cpp) read.
  bool te_loss() const { return te_cross_entropy && stack == Stack::Megatron && !cross_entropy_fusion; }
};

}  // namespace parsim

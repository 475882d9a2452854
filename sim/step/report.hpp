// parsim sim/step — the result of simulating one training step (metrics computed from the timeline after the run).
#pragma once
#include "hardware/hardware.hpp"
#include "models/model.hpp"
#include "plans/scenario.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parsim {

struct MemoryReport {
  double peak_gib = 0;            // device memory the most loaded GPU holds in steady state: live tensors + CUDA context
                                  // + NCCL buffers + the caching allocator's cache (what max_memory_reserved / nvidia-smi show)
  double allocated_peak_gib = 0;  // that GPU's peak of live tensors (torch.cuda.max_memory_allocated)
  double required_gib = 0;        // what the run needs not to fail: live tensors + CUDA context + NCCL buffers (the
                                  // allocator frees its unused cache before it reports out-of-memory; memory.cpp)
  double capacity_gib = 0;
  bool fits = false;              // required_gib <= capacity_gib
  double weights_gib = 0, grads_gib = 0, optimizer_gib = 0, activations_gib = 0;  // at the peak, that GPU
  double buffers_gib = 0;         // gathered ZeRO-3/FSDP parameters, communication buckets, logits
  double fp8_cache_gib = 0;       // fp8 weight + transpose caches (Transformer Engine, --precision fp8)
  double workspace_gib = 0;       // library workspaces allocated as tensors (Transformer Engine cuBLAS workspace)
  double overhead_gib = 0;        // CUDA context + NCCL + allocator fragmentation (peak_gib − allocated_peak_gib)
  int peak_stage = 0;
  std::vector<double> per_stage_peak_gib;
};

// One simulated rank (the representative of one pipeline stage).
struct StageMetrics {
  double compute_s = 0;         // union of compute-stream busy time
  double comm_s = 0;            // union of communication-stream busy time
  double exposed_comm_s = 0;    // communication not covered by compute
  double idle_s = 0;            // step − compute − exposed comm
  double window_idle_s = 0;     // compute-stream idle inside the pipeline window (the bubble's numerator)
  PerAxis<double> comm_by_kind_s{};     // communication by parallel axis (sim/core/axis.hpp)
  PerAxis<double> exposed_by_kind_s{};
  double peak_gib = 0;
  double allocated_peak_gib = 0;
};

// Where one pass of one layer spends its GPU time, as the cost model prices it (sim/step/costs/layer.cpp): the parts
// of the pass's compute time, for one micro-batch on one rank.
struct PassParts {
  double gemm_s = 0;         // the layer's GEMMs: QKV / output projection, FFN or shared and routed experts, router,
                             // latent / Mamba projections (backward: dgrad + wgrad)
  double attention_s = 0;    // the attention core: flash / cuDNN kernels, or the unfused batched GEMMs and softmax
  double memory_bound_s = 0; // memory-bound kernels: norms, activations, residual adds, RoPE, MoE router, permutation
                             // and sorts, the Mamba mixer's convolution and scan, autocast copies
  double fp8_cast_s = 0;     // fp8 quantisation (and transposes) of the GEMM operands
  double recompute_s = 0;    // backward only: the recomputed forward (full or selective recompute)
  double other_s = 0;        // the rest of the pass's compute: the per-layer overhead and the SM share that overlapped
                             // communication (TP overlap, an overlapped token exchange) takes from the compute
  double sum() const { return gemm_s + attention_s + memory_bound_s + fp8_cast_s + recompute_s + other_s; }
  PassParts& operator*=(double k) {
    gemm_s *= k, attention_s *= k, memory_bound_s *= k, fp8_cast_s *= k, recompute_s *= k, other_s *= k;
    return *this;
  }
};

// One kind of layer (models/ LayerKind) as predict reports it: one micro-batch's forward and backward on one rank.
struct LayerKindReport {
  AttentionKind attention = AttentionKind::Full;
  FfnKind ffn = FfnKind::Dense;
  int layers = 0;  // layers of this kind in the model
  struct Pass {
    PassParts parts;
    double compute_s = 0;       // = parts.sum()
    double exposed_comm_s = 0;  // TP, CP and EP communication inside the pass that compute does not hide
    double host_wait_s = 0;     // GPU idle at a device→host sync inside the pass (MoE token counts, test-mode checks)
    double duration_s = 0;      // compute + exposed communication + host wait: the pass on its own
    double host_issue_s = 0;    // CPU time to issue the pass (runs ahead of the GPU unless a sync stops it)
    double kernels = 0;         // GPU operations the host issues for it
  } forward, backward;
};

// What a prediction like this one is typically off by (sim/step/accuracy.hpp expected_error; predict and compare fill
// it, sweeps leave it empty): the regime's mean out-of-sample |error| on measured runs (hardware/accuracy.json).
struct ExpectedError {
  std::string regime;        // hardware/accuracy.json key: host_bound, moe, megatron, megatron_legacy, pytorch
  std::string label;         // the regime in words
  double typical_pct = 0;    // mean |error| out of sample, %
  std::string basis;         // what was measured
};

// --cpu-offloading-num-layers: what the offloading moves and what it costs the step (sim/step/costs/offload.cpp).
struct CpuOffloadReport {
  int layers = 0;                    // transformer layers whose activations go to host memory
  double gib_per_microbatch = 0;     // their activations, GiB: copied to the host and back once per micro-batch, and
                                     // the host memory one GPU's offloaded activations take (one micro-batch at a time)
  double link_gbytes_per_s = 0;      // the CPU–GPU link, GB/s per direction (node.host_link_gbytes_per_s)
  double exposed_s = 0;              // GPU time the step waits for the copies (all micro-batches)
  double host_capacity_gib = 0;      // the host memory of one GPU's share of the node, GiB
                                     // (node.host_memory_gbytes_per_gpu); 0: the hardware does not state it
  bool host_fits() const { return host_capacity_gib <= 0 || gib_per_microbatch <= host_capacity_gib; }
};

struct StepReport {
  double step_time_s = 0;
  // Model / hardware FLOPs utilisation with the causal attention core counted as causal (half of s², Megatron-Core
  // ≥ v0.12); mfu_full_attention counts the full s² as Megatron-LM ≤ core v0.11, PaLM and nanoGPT do (README "Metrics").
  double mfu = 0, hfu = 0;
  double mfu_full_attention = 0;
  double tflops_per_gpu = 0;    // model TFLOP/s per GPU (causal count)
  double tokens_per_s = 0;      // whole job
  double bubble_fraction = 0;
  double window_s = 0;          // pipeline window: first forward start to last backward end, over all stages
  double exposed_comm_s = 0;    // critical-path stage's exposed communication
  PerAxis<double> exposed_by_kind_s{};
  double model_flops_per_step = 0, hardware_flops_per_step = 0;  // causal count
  double model_flops_full_attention_per_step = 0;                 // full-s² count
  std::int64_t microbatches = 0;
  std::int64_t events = 0;      // events the engine executed
  std::int64_t simulated_microbatches = 0;  // micro-batches played out (fewer than microbatches when the periodic
                                            // steady state was extended, see evaluate.cpp)
  MemoryReport memory;
  std::vector<StageMetrics> stages;
  int critical_stage = 0;       // the stage whose compute + exposed comm is largest (reported in compute_s …)
  std::vector<std::string> warnings;
  // Per layer kind, the pass costs the schedule places (predict fills it; sweeps leave it empty).
  std::vector<LayerKindReport> layer_kinds;
  std::optional<ExpectedError> expected_error;  // predict and compare fill it; sweeps leave it empty
  std::optional<CpuOffloadReport> cpu_offload;  // with --cpu-offloading-num-layers
};

// ---- the run ----
// Time-to-train and cost of a whole run (--tokens, --price-per-gpu-hour, --goodput).
struct TrainEstimate {
  double tokens = 0;
  double goodput = 1;      // fraction of wall-clock time spent training (checkpoints, restarts, failures excluded)
  double days = 0;
  double gpu_hours = 0;
  double cost_usd = 0;
  bool has_cost = false;
};
TrainEstimate train_estimate(const Scenario& sc, const StepReport& r, double tokens, double price_per_gpu_hour,
                             double goodput);

}  // namespace parsim

// parsim sim/step — the result of simulating one training step (metrics computed from the timeline after the run).
#pragma once
#include "hardware/hardware.hpp"
#include "models/model.hpp"
#include "plans/scenario.hpp"

#include <array>
#include <cstdint>
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

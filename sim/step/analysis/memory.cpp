// Memory per GPU: model state (weights, gradients, optimizer state) by sharding scheme, and the dynamic part —
// activations of in-flight micro-batches, gathered ZeRO-3/FSDP parameters, gradient buckets, logits — from allocation
// events along the simulated timeline. Sources: domain-notes §3–4 (Korthikanti et al. 2022 §4; Megatron
// dist_optimizer.md; ZeRO (Rajbhandari et al. 2020) §5; PyTorch FSDP ShardingStrategy).
#include "sim/step/analysis.hpp"

#include <algorithm>
#include <bit>
#include <array>
#include <cstring>
#include <limits>

namespace parsim {

RankParams stage_params(const StepCosts& k, int stage) {
  const PipelinePlacement& pl = k.placement;
  RankParams p;
  for (int c = 0; c < pl.chunks; ++c) {
    const int vs = pl.vstage(stage, c);
    const int n = k.layers_per_chunk[static_cast<std::size_t>(vs)];
    if (k.uniform()) {
      // Uniform models (every dense model): n · per layer, no prefix scan (the sweep's pre-check calls this per stage).
      p += k.kinds.front().params.scaled(n);
    } else {
      int first = 0;  // virtual stages hold consecutive layers in virtual-stage order
      for (int v = 0; v < vs; ++v) first += k.layers_per_chunk[static_cast<std::size_t>(v)];
      p += k.range_params(first, first + n);
    }
    const EdgeWork e = edge_work(vs, pl.virtual_stages(), true, true, true);  // the whole chunk: both its ends
    if (e.embedding) p.dense += k.embed_params;
    if (e.head) p += k.head_stage_params();
  }
  return p;
}

double stage_param_count(const StepCosts& k, int stage) { return stage_params(k, stage).total(); }

// What W keeps (Qi et al. 2024 §2 and Table 1): dW = Xᵀ·dY for every weight GEMM needs its input X and its output
// gradient dY. The inputs are tensors the forward stored already; B frees the rest of the layer's stored activations
// (norm inputs, Q/K/V, the attention core's statistics, the activation function's inputs) and allocates the dY's.
// Per layer, e bytes per element (activation precision), local tokens T = b·s/cp:
//   X: the two norm outputs that feed the block's first GEMMs (qkv or q_proj / q_down / kv_down, and ffn_in or the
//      MoE router / shared experts) e·T·h each, held as their SP shard (÷t; Megatron re-gathers them for the wgrad,
//      which W's cost includes) — one for parallel-attention layers with a single shared norm — plus the input of
//      every other GEMM (out_proj, ffn_out, MLA's up-projections, the experts) e·m·k;
//   dY: the output gradient of every GEMM, e·m·n.
// Llama-2-7B (a = g, f = 2.6875h), t = cp = 1: X = (h + h + h + f)·T·e = 5.6875·2·Th = 11.375·Th, dY = (3h + h + 2f +
// h)·T·e = 10.375·2·Th = 20.75·Th → 32.1·Th bytes, the same as its stored 32.1·Th (activations.cpp): W frees about
// what it holds — the paper's 32sbh against 34sbh for GPT. Embedding: its W (the scatter-add of the output gradient
// into the table) keeps that gradient, one activation tensor e·T·h. LM head: X = the final norm output e·T·h/sp and
// dY = the logits' gradient e·T·V/t.
WeightGradRetained weight_grad_retained_bytes(const Scenario& sc, LayerKind kind) {
  const ModelSpec& m = sc.model;
  const TrainingConfig& tr = sc.train;
  const Plan& pl = sc.plan;
  const double e = activation_element_bytes(tr.precision);
  const double sp = tr.sp ? pl.tp : 1;
  const double tokens = static_cast<double>(tr.mbs * tr.seq) / pl.cp;
  const double h = static_cast<double>(m.hidden);
  const LayerWork lw = layer_work(m, kind, tr.mbs, tr.seq, pl.tp, pl.cp, tr.sp, tr.precision,
                                  m.is_moe() ? expert_split(sc) : ExpertSplit{});
  auto norm_fed = [](const char* n) {
    for (const char* x : {"qkv", "q_proj", "q_down", "kv_down", "ffn_in", "shared_in", "shared_gate", "router"})
      if (std::strcmp(n, x) == 0) return true;
    return false;
  };
  WeightGradRetained r;
  const double norm_outputs = m.parallel_attention && m.norm_layers < 2 ? 1.0 : 2.0;
  r.per_layer = norm_outputs * e * tokens * h / sp;
  for (const GemmShape& g : lw.gemms) {
    const double M = static_cast<double>(g.m);
    if (!norm_fed(g.name)) r.per_layer += e * M * static_cast<double>(g.k);
    r.per_layer += e * M * static_cast<double>(g.n);
  }
  r.embed = activation_bytes(sc);
  const GemmShape head = lm_head_gemm(m, tr.mbs, tr.seq, pl.tp, pl.cp);
  r.head = e * tokens * h / sp + e * static_cast<double>(head.m) * static_cast<double>(head.n);
  return r;
}

WeightGradRetained weight_grad_retained_bytes(const Scenario& sc) {
  return weight_grad_retained_bytes(sc, representative_kind(sc.model));
}

namespace {

ActivationOptions act_options(const Scenario& sc) {
  ActivationOptions o;
  o.tp = sc.plan.tp;
  o.cp = sc.plan.cp;
  o.sp = sc.train.sp;
  o.recompute = sc.train.recompute;
  o.recompute_modules = sc.train.recompute_modules;
  o.precision = sc.train.precision;
  o.flash_attention = sc.train.flash_attention;
  o.softmax_saved_extra = megatron_softmax(sc).extra_saved_bytes;
  o.loss_upcasts_logits = sc.train.stack == Stack::Megatron || sc.train.stack == Stack::MegatronLegacy;
  // the 16-bit logits alone: llm.c's fused classifier, and TE's parallel cross entropy (its gradient over the logits)
  o.fused_cross_entropy = sc.train.cross_entropy_fusion || sc.train.te_loss();
  o.eager_fp32_loss = sc.train.stack == Stack::PyTorch && (!sc.train.compile || sc.train.eager_loss);  // 2 + 4 + 4 B
  o.fp8_gemm_inputs = sc.train.stack == Stack::Megatron;  // Transformer Engine modules (activations.cpp)
  o.moe_fused_grouped_mlp = sc.train.moe_fused_grouped_mlp;
  if (sc.model.is_moe()) o.experts = expert_split(sc);  // the busiest expert rank's routed tokens
  return o;
}

// Activation bytes of one micro-batch by layer kind (the StepCosts kinds, same order), and of the edges.
struct ChunkActs {
  // Per layer of each kind (at most 3 attention × 2 FFN kinds): kept until its backward / alive during it / kept from
  // B to W (split backwards only).
  std::array<double, 6> stored{}, working{}, retained{};
  double embed = 0, logits = 0;
  WeightGradRetained w;  // embedding's and head's share kept from B to W (split backwards only)
  // --cpu-offloading-num-layers: the first `offload_layers` layers' stored bytes leave the GPU in the forward (at most
  // layers − N sets stay, Transformer Engine's limit, costs/offload.cpp) and come back one layer at a time for the
  // backward, within that limit — so what a range keeps on the GPU is its stored bytes less those.
  int offload_layers = 0;
  double offloaded_range(const StepCosts& k, int first, int last) const {  // 0 without offloading
    const int end = std::min(last, offload_layers);
    return end > first ? sum(k, first, end, stored) : 0.0;
  }
  // Bytes layers [first, last) keep: Σ count · stored(kind).
  double stored_range(const StepCosts& k, int first, int last) const { return sum(k, first, last, stored); }
  double retained_range(const StepCosts& k, int first, int last) const { return sum(k, first, last, retained); }
  // The working set of a backward over layers [first, last): the largest of one layer of each kind present.
  double working_range(const StepCosts& k, int first, int last) const {
    if (k.uniform()) return working.front();
    double most = 0;
    for (std::size_t j = 0; j < k.kinds.size(); ++j)
      if (k.count(j, first, last) > 0) most = std::max(most, working[j]);
    return most;
  }
  static double sum(const StepCosts& k, int first, int last, const std::array<double, 6>& per) {
    return k.sum_range<double>(first, last, [&](const LayerKindCosts& kc, int n) {
      return n * per[static_cast<std::size_t>(&kc - k.kinds.data())];
    });
  }
};
// `split`: the order has B/W halves (only then is what W keeps computed).
ChunkActs chunk_acts(const Scenario& sc, const StepCosts& k, bool split) {
  const ActivationOptions o = act_options(sc);
  ChunkActs a;
  for (std::size_t j = 0; j < k.kinds.size() && j < a.stored.size(); ++j) {
    a.stored[j] = activation_bytes_per_layer(sc.model, k.kinds[j].kind, sc.train.mbs, sc.train.seq, o);
    a.working[j] = activation_working_bytes(sc.model, k.kinds[j].kind, sc.train.mbs, sc.train.seq, o);
    if (split) {
      const WeightGradRetained w = weight_grad_retained_bytes(sc, k.kinds[j].kind);
      a.retained[j] = w.per_layer;
      a.w.embed = w.embed;
      a.w.head = w.head;
    }
  }
  a.embed = embedding_activation_bytes(sc.model, sc.train.mbs, sc.train.seq, o);
  a.logits = output_activation_bytes(sc.model, sc.train.mbs, sc.train.seq, o);
  a.offload_layers = sc.train.cpu_offload_layers;
  return a;
}

}  // namespace

double layer_activation_bytes(const Scenario& sc, LayerKind kind) {
  return activation_bytes_per_layer(sc.model, kind, sc.train.mbs, sc.train.seq, act_options(sc));
}

StaticMemory static_memory(const Scenario& sc, const StepCosts& k, int stage) {
  const RankParams psi = stage_params(k, stage);
  const double n = std::max(1, k.shard_degree);
  // Bytes per parameter by sharding scheme and precision (plans/sharding.cpp, domain-notes §4).
  const ShardingTraits& sh = sharding_traits(sc.plan.sharding);
  const ShardingImpl& impl = sh.impl(sc.train.stack);
  const StateBytes b = impl.state_bytes(sc.train.precision, n);
  StaticMemory m{b.weights * psi.dense, b.grads * psi.dense, b.optimizer * psi.dense};
  if (psi.expert > 0) {
    // Routed experts: the rank's experts/ep experts, each ÷ etp (layer_params_per_rank), their state sharded over the
    // expert-DP group (Megatron-Core's distributed optimizer shards expert parameters over expert_data_parallel_group).
    const StateBytes be = impl.state_bytes(sc.train.precision, std::max(1, k.expert_shard_degree));
    m.weights += be.weights * psi.expert;
    m.grads += be.grads * psi.expert;
    m.optimizer += be.optimizer * psi.expert;
  }
  // --bf16-optimizer: Adam's moments in bf16 and no fp32 master copy — the bf16 model weights are the master
  // (NeMo optim.dtype: bf16 with Apex DistributedFusedAdam: optimizer dtype = model dtype → store_params False,
  // NeMo megatron_base_model.py setup_optimization; apex contrib distributed_fused_adam: exp_avg / exp_avg_sq in the
  // optimizer dtype): 2 + 2 B per parameter instead of 4 + 4 + 4, sharded as before.
  if (sc.train.bf16_optimizer) m.optimizer *= 4.0 / 12.0;
  // --adam-moments bf16: Megatron-Core's precision-aware optimizer (optimizer/distrib_optimizer.py with
  // use_precision_aware_optimizer: Transformer Engine's FusedAdam holds exp_avg and exp_avg_sq in exp_avg_dtype /
  // exp_avg_sq_dtype) keeps the fp32 master and bf16 moments: 4 + 2 + 2 B per parameter instead of 4 + 4 + 4.
  if (sc.train.bf16_moments) m.optimizer *= 8.0 / 12.0;
  // --no-grad-reduce-in-fp32: Megatron's gradient buffer holds the 16-bit grads (param_and_grad_buffer.py: grad_dtype
  // = param dtype unless grad_reduce_in_fp32), half of the fp32 main grads.
  if (!sc.train.grad_reduce_in_fp32 && sc.train.precision != Precision::FP32 &&
      grad_wire_bytes(sc.plan.sharding, sc.train.precision, sc.train.stack) == 4)
    m.grads *= 0.5;
  if (sc.train.stack == Stack::Megatron) {
    // Transformer Engine's fp8 weight caches: with fp8 every TE Linear keeps the fp8 copy of its weight, cast on the
    // first micro-batch and reused by the others (TE pytorch/module/base.py get_weight_workspace with
    // is_first_microbatch, which Megatron-Core passes), 1 B per parameter of the layers' GEMMs (norms, biases and
    // the embedding/LM head stay 16-bit and are left out). Where the GPU's fp8 GEMMs take only the TN layout
    // (Hopper) TE also keeps the weight's transpose for dgrad (TE Float8Quantizer: create_transpose =
    // columnwise_usage && !nvte_is_non_tn_fp8_gemm_supported()): 1 B more. Blackwell runs non-TN fp8 GEMMs, so
    // Megatron's default per-tensor recipe keeps no transpose there (MXFP8, which parsim does not distinguish,
    // would keep a column-wise copy: +1 + 2/32 B); CDNA is taken as Blackwell [U: TE-ROCm's layout support not
    // checked; A0001 (MI325X fp8) agrees]. Parameters gathered per layer (Megatron-FSDP) are cast per use instead.
    if (sc.train.precision == Precision::FP8 && !sh.shards_params) {
      // The stage's layer parameters (dense and expert GEMMs): its parameters less the embedding and LM head.
      double layer_psi = psi.total();
      const PipelinePlacement& place = k.placement;
      for (int c = 0; c < place.chunks; ++c) {
        const EdgeWork e = edge_work(place.vstage(stage, c), place.virtual_stages(), true, true, true);
        if (e.embedding) layer_psi -= k.embed_params;
        if (e.head) layer_psi -= k.head_params;
      }
      const bool tn_only = sc.hw.gpu.arch == GpuArch::Hopper;
      if (sc.train.fp8_params) {
        // --fp8-params: the layer weights themselves are fp8 tensors (TE fp8_model_init, which NeMo's fp8_params and
        // Megatron's --fp8-param-gather use): 1 B per parameter instead of the 16-bit 2 B, and no separate fp8
        // cache — only the transpose that TN-only GEMMs need (Hopper), 1 B. The fp32 master copy stays in the
        // optimizer state (Megatron's distributed optimizer keeps fp32 main params; Apex DistributedFusedAdam
        // switches to store_params when fp8_params is set: NeMo megatron_base_model.py setup_optimization).
        m.weights -= (b.weights - 1.0) * layer_psi;
        m.fp8_cache = layer_psi * (tn_only ? 1.0 : 0.0);
      } else {
        m.fp8_cache = layer_psi * (tn_only ? 2.0 : 1.0);
      }
    }
    // TE allocates one cuBLAS workspace as a torch tensor (so it counts in torch.cuda.max_memory_allocated):
    // 32 MiB on compute capability ≥ 9 (Hopper, Blackwell), 4 MiB before (TE pytorch/module/base.py
    // get_cublas_workspace_size_bytes).
    const GpuArch a = sc.hw.gpu.arch;
    m.workspace = (a == GpuArch::Hopper || a == GpuArch::Blackwell ? 32.0 : 4.0) * kMiB;
  }
  return m;
}

// What a real process holds beyond its live tensors (estimates; documented in the README):
//  - CUDA context and kernels: ~0.5 GiB per GPU with CUDA 12 lazy loading (PyTorch "CUDA semantics" notes that the
//    context takes a few hundred MiB, varying with driver and libraries);
//  - NCCL: NCCL_BUFFSIZE = 4 MiB per channel, per peer and protocol → ~0.25 GiB per communicator in use;
// together runtime_reserve_bytes: memory the caching allocator cannot use, so the fit verdict counts it.
//  - the caching allocator reserves more than is allocated: +5 % in steady state (overhead_bytes, part of peak_gib,
//    the figure max_memory_reserved / nvidia-smi show). The shared Kineto traces show reserved/allocated of
//    1.26 (Qwen-0.5B, H100) to 1.93 (DDP, V100) for small, fragmented workloads; LLM steps allocate a few large,
//    repeating blocks and sit far lower — published run R0208 (MPT-1B, FSDP, A100-40GB) trained with 35.4 GiB of live
//    tensors predicted on a 39.4 GiB device, which bounds context + NCCL + fragmentation to ≈ 4 GiB there. This cache
//    is not needed for the run to go on: when cudaMalloc fails, PyTorch's caching allocator first frees a cached
//    block that is not split, then all cached blocks that are not split, and retries before it raises out-of-memory
//    (pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp, header comment and AllocImpl::malloc). So the verdict
//    (MemoryReport::fits, required_gib) is live tensors + context + NCCL against the device; peak_gib keeps the cache.
double runtime_reserve_bytes(const Scenario& sc) {
  int comms = 0;
  for (Axis a : kAxes) comms += sc.plan.degree(a) > 1 ? 1 : 0;  // one communicator per axis in use
  if (sc.model.is_moe()) {
    // MoE folding builds its own groups (Megatron-Core parallel_state: expert TP, expert DP, TP×EP), each a
    // communicator once used: expert-DP for the expert gradients, expert-TP for the dispatcher's gathers (a group of
    // its own also when etp = tp), TP×EP for the token-count exchange.
    const Plan& p = sc.plan;
    comms += p.expert_dp() > 1 ? 1 : 0;
    comms += p.expert_tp() > 1 ? 1 : 0;
    comms += p.ep > 1 && p.expert_tp() > 1 ? 1 : 0;
  }
  return 0.5 * kGiB + 0.25 * kGiB * comms;
}

double overhead_bytes(const Scenario& sc, double allocated_bytes) {
  return runtime_reserve_bytes(sc) + 0.05 * allocated_bytes;
}

namespace {

void finish_report(const Scenario& sc, const StepCosts& k, const std::vector<double>& dyn_peak,
                   const std::vector<double>& act_at_peak, const std::vector<double>& buf_at_peak, MemoryReport& m,
                   std::vector<StageMetrics>* stages) {
  m.per_stage_peak_gib.assign(dyn_peak.size(), 0);
  m.capacity_gib = sc.hw.gpu.hbm_capacity_bytes / kGiB;
  double best = -1;
  const double reserve = runtime_reserve_bytes(sc);
  double most_alloc = 0;
  for (std::size_t s = 0; s < dyn_peak.size(); ++s) {
    const StaticMemory st = static_memory(sc, k, static_cast<int>(s));
    const double alloc = st.total() + dyn_peak[s];
    const double device = alloc + overhead_bytes(sc, alloc);
    m.per_stage_peak_gib[s] = device / kGiB;
    most_alloc = std::max(most_alloc, alloc);
    if (stages && s < stages->size()) {
      (*stages)[s].peak_gib = device / kGiB;
      (*stages)[s].allocated_peak_gib = alloc / kGiB;
    }
    if (device > best) {
      best = device;
      m.peak_stage = static_cast<int>(s);
      m.peak_gib = device / kGiB;
      m.allocated_peak_gib = alloc / kGiB;
      m.weights_gib = st.weights / kGiB;
      m.grads_gib = st.grads / kGiB;
      m.optimizer_gib = st.optimizer / kGiB;
      m.fp8_cache_gib = st.fp8_cache / kGiB;
      m.workspace_gib = st.workspace / kGiB;
      m.activations_gib = act_at_peak[s] / kGiB;
      m.buffers_gib = buf_at_peak[s] / kGiB;
      m.overhead_gib = (device - alloc) / kGiB;
    }
  }
  // The verdict: the stage with the most live tensors (the same stage as peak_gib's, which grows with them) against the
  // device, with the runtime's reserve but without the allocator's releasable cache (see runtime_reserve_bytes).
  m.required_gib = (most_alloc + reserve) / kGiB;
  m.fits = m.required_gib <= m.capacity_gib;
}

}  // namespace

void timeline_memory(const Scenario& sc, const StepCosts& k, const ExecutedStep& ex, StepReport& rep,
                     std::vector<MemorySample>* counter) {
  const Plan& pl = sc.plan;
  const Lowered& lw = ex.lowered;
  const ChunkActs a = chunk_acts(sc, k, lw.splits_backward);
  const int P = pl.pp;
  const auto& tl = ex.timeline;
  Scratch& sc_buf = ex.scratch;
  auto& ev = sc_buf.events;
  ev.resize(P);
  for (auto& v : ev) v.clear();
  const bool gather = sharding_traits(pl.sharding).param_gather == ParamGather::PerLayer && k.dp_group.size > 1;
  const double pwb = param_wire_bytes(sc.train.precision);
  // PyTorch FSDP under pipeline parallelism (torchtitan: fully_shard(..., reshard_after_forward=not pp_enabled), and
  // torch.distributed.pipelining syncs gradients only in the last micro-batch's backward): a stage's parameters stay
  // gathered from its first forward to its last backward, and its unsharded 16-bit gradients accumulate from its first
  // backward until the reduce-scatter after the last — held across the step, not per pass.
  const bool keep_gathered = gather && P > 1 && sc.train.stack == Stack::PyTorch;
  const bool per_pass = gather && !keep_gathered;  // gathered per pass, freed at its end
  struct Held {
    std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = std::numeric_limits<std::int64_t>::min();
    std::int64_t first_bwd = std::numeric_limits<std::int64_t>::max(), last_bwd = std::numeric_limits<std::int64_t>::min();
    std::vector<std::pair<int, double>> chunks;  // (first layer, gathered bytes) of each chunk of the stage
  };
  std::vector<Held> held(keep_gathered ? P : 0);
  const bool uniform = k.uniform();
  // Gathered parameters are held from the start of their all-gather to the end of the segment that uses them.
  // Events are emitted in compute-stream order (start events of a pass, then its end events), which is time order;
  // gathered-parameter allocations happen at their all-gather's start and go to a second list, also in time order
  // (all-gathers run in the order of the passes they feed). The two are merged, not sorted.
  auto& gathers = sc_buf.gathers;
  gathers.resize(P);
  for (auto& v : gathers) v.clear();
  for (std::size_t t = 0; t < lw.graph.num_tasks(); ++t) {
    const auto id = static_cast<engine::TaskId>(t);
    const TaskInfo& ti = lw.info[lw.graph.tag(id)];
    if (!is_pass(ti.kind)) continue;
    const int s = ti.stage;
    const bool has_embed = ti.edges & kEdgeEmbedding, has_head = ti.edges & kEdgeHead;  // placed by the lowering
    // Uniform models (one layer kind): n · per-layer values directly — this loop runs for every task of every plan.
    const int layers = ti.layer_end - ti.layer_begin;
    const double stored = (uniform ? layers * a.stored[0] : a.stored_range(k, ti.layer_begin, ti.layer_end)) +
                          (has_embed ? a.embed : 0.0) - a.offloaded_range(k, ti.layer_begin, ti.layer_end);
    const double working_set = uniform ? a.working[0] : a.working_range(k, ti.layer_begin, ti.layer_end);
    // Parameters gathered in 16 bit (all of this segment's, the local shard included), held from the all-gather's
    // start to the end of the segment; in backward also the unsharded 16-bit gradients until the reduce-scatter
    // (approximated by the end of the segment).
    const double gathered = gather ? ((uniform ? layers * k.layer_params
                                               : k.range_params(ti.layer_begin, ti.layer_end).total()) +
                                      (has_embed ? k.embed_params : 0) +
                                      (has_head ? k.head_stage_params().total() : 0)) * pwb
                                   : 0.0;
    // A split backward: B (input gradient) holds the working set and the gathered parameters and ends the logits;
    // at its end the stored activations give way to what W needs (its GEMM inputs and output gradients,
    // weight_grad_retained_bytes), which W (weight gradient) frees; W also holds the unsharded gradients (Qi et al.
    // 2024 §2, Table 1).
    const bool fwd = ti.kind == TaskKind::Forward;
    const bool reads_params = ti.kind != TaskKind::BackwardWeight;
    const bool makes_grads = ends_backward(ti.kind);
    const bool working = ti.kind == TaskKind::Backward || ti.kind == TaskKind::BackwardInput;
    const bool split = ti.kind == TaskKind::BackwardInput || ti.kind == TaskKind::BackwardWeight;
    const double retained =
        split ? (uniform ? layers * a.retained[0] : a.retained_range(k, ti.layer_begin, ti.layer_end)) + (has_embed ? a.w.embed : 0.0) + (has_head ? a.w.head : 0.0) : 0.0;
    auto& e = ev[s];
    if (keep_gathered) {
      Held& hd = held[s];
      if (std::none_of(hd.chunks.begin(), hd.chunks.end(), [&](const auto& c) { return c.first == ti.layer_begin; }))
        hd.chunks.emplace_back(ti.layer_begin, gathered);
      hd.first = std::min(hd.first, tl.start[id]);
      hd.last = std::max(hd.last, tl.end[id]);
      if (makes_grads) {
        hd.first_bwd = std::min(hd.first_bwd, tl.start[id]);
        hd.last_bwd = std::max(hd.last_bwd, tl.end[id]);
      }
    }
    if (per_pass && reads_params) {
      if (ti.gather != kNoTask) gathers[s].push_back({tl.start[ti.gather], gathered, 1});
      else e.push_back({tl.start[id], gathered, 1});
    }
    if (fwd) {
      e.push_back({tl.start[id], stored, 0});                          // kept until its backward
      if (has_head) e.push_back({tl.start[id], a.logits, 0});          // logits live until the head's backward
    } else {
      if (working) e.push_back({tl.start[id], working_set, 0});        // backward working set
      if (per_pass && makes_grads) e.push_back({tl.start[id], gathered, 1});  // unsharded gradients
      if (working) e.push_back({tl.end[id], -working_set, 0});
      if (ti.kind == TaskKind::Backward) e.push_back({tl.end[id], -stored, 0});
      if (ti.kind == TaskKind::BackwardInput) e.push_back({tl.end[id], retained - stored, 0});
      if (ti.kind == TaskKind::BackwardWeight) e.push_back({tl.end[id], -retained, 0});
      if (has_head && ti.kind != TaskKind::BackwardWeight) e.push_back({tl.end[id], -a.logits, 0});
      if (per_pass && makes_grads) e.push_back({tl.end[id], -gathered, 1});
    }
    if (per_pass && reads_params) e.push_back({tl.end[id], -gathered, 1});
  }
  for (int s = 0; s < static_cast<int>(held.size()); ++s) {  // (sorted below with the stage's other events)
    const Held& hd = held[s];
    if (hd.chunks.empty()) continue;
    double bytes = 0;
    for (const auto& c : hd.chunks) bytes += c.second;
    ev[s].push_back({hd.first, bytes, 1});
    ev[s].push_back({hd.last, -bytes, 1});
    if (hd.first_bwd <= hd.last_bwd) {
      ev[s].push_back({hd.first_bwd, bytes, 1});
      ev[s].push_back({hd.last_bwd, -bytes, 1});
    }
  }
  auto by_time = [](const MemEvent& x, const MemEvent& y) { return x.t < y.t; };  // stable: compute events first
  for (int s = 0; s < P; ++s) {
    if (gathers[s].empty()) continue;
    auto& all = sc_buf.merged;
    all.resize(ev[s].size() + gathers[s].size());
    std::merge(ev[s].begin(), ev[s].end(), gathers[s].begin(), gathers[s].end(), all.begin(), by_time);
    ev[s].swap(all);
  }
  std::vector<double> peak(P, 0), act_at(P, 0), buf_at(P, 0);
  for (int s = 0; s < P; ++s) {
    auto& e = ev[s];
    // Events of an in-order compute stream arrive in time order, frees of one pass before the next pass's
    // allocations; only gathered parameters (allocated at their all-gather's start) need a sort.
    if (!std::is_sorted(e.begin(), e.end(), [](const MemEvent& x, const MemEvent& y) { return x.t < y.t; }))
      std::sort(e.begin(), e.end(), [](const MemEvent& x, const MemEvent& y) {
        return x.t != y.t ? x.t < y.t : x.delta < y.delta;  // frees before allocations at the same instant
      });
    const StaticMemory st = static_memory(sc, k, s);
    const double base = st.total();
    double cur_act = 0, cur_buf = 0;
    if (counter) counter->push_back({s, 0, base});
    for (const MemEvent& x : e) {
      (x.kind == 0 ? cur_act : cur_buf) += x.delta;
      if (cur_act + cur_buf > peak[s]) {
        peak[s] = cur_act + cur_buf;
        act_at[s] = cur_act;
        buf_at[s] = cur_buf;
      }
      if (counter) counter->push_back({s, x.t, base + cur_act + cur_buf});
    }
  }
  finish_report(sc, k, peak, act_at, buf_at, rep.memory, &rep.stages);
}

std::size_t PrecheckMemo::KeyHash::operator()(const std::vector<std::uint64_t>& k) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (std::uint64_t x : k) {  // (splitmix64's finalizer per word)
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
  }
  return static_cast<std::size_t>(h);
}

MemoryReport estimate_memory_from_costs(const Scenario& sc, const StepCosts& k, ScheduleCache* schedules,
                                        PrecheckMemo* memo) {
  // Closed form for the sweep's pre-check: the in-flight activations implied by the schedule order alone (the
  // compute stream is in-order, so the order fixes how many micro-batches are alive), plus one backward working
  // set and the logits. Timeline-dependent extras (gathered parameters) are left out: a lower bound of evaluate().
  const Plan& pl = sc.plan;
  const PipelinePlacement& place = k.placement;
  const int P = pl.pp, nvs = place.virtual_stages();
  // Periodic schedules reach their peak in the warm-up: walk the order evaluate() simulates (steady_state.cpp), not
  // all M micro-batches — the pre-check was O(M) per candidate, minutes for a sweep at 10^6 micro-batches (issue 12).
  const std::int64_t M_all = sc.train.micro_batches(pl);
  const int M = static_cast<int>(steady_state_extendable(sc, false, M_all) ? steady_state_runs(sc).second : M_all);
  const ChunkActs a = chunk_acts(sc, k, schedule_traits(sc.train.schedule).splits_backward);
  // Activations a chunk pass keeps until its backward, what W keeps from B, and (models with several layer kinds) the
  // backward working set, by virtual stage (with the embedding's and the head's where they sit).
  // (buffers kept per thread: the sweep pre-checks every candidate)
  thread_local std::vector<double> stored_by_vs, retained_by_vs, working_by_vs;
  stored_by_vs.assign(static_cast<std::size_t>(nvs), 0.0);
  retained_by_vs.assign(static_cast<std::size_t>(nvs), 0.0);
  working_by_vs.assign(k.uniform() ? 0 : stored_by_vs.size(), 0.0);
  for (int vs = 0, first = 0; vs < nvs; first += k.layers_per_chunk[vs], ++vs) {
    const int n = k.layers_per_chunk[vs], last = first + n;
    const EdgeWork e = edge_work(vs, nvs, true, true, true);
    stored_by_vs[vs] = (k.uniform() ? n * a.stored[0] : a.stored_range(k, first, last)) + (e.embedding ? a.embed : 0) -
                       a.offloaded_range(k, first, last);
    retained_by_vs[vs] = (k.uniform() ? n * a.retained[0] : a.retained_range(k, first, last)) +
                         (e.embedding ? a.w.embed : 0) + (e.head ? a.w.head : 0);
    if (!k.uniform()) working_by_vs[vs] = a.working_range(k, first, last);
  }
  thread_local std::vector<double> peak, act, buf;
  peak.assign(static_cast<std::size_t>(P), 0.0);
  buf.assign(static_cast<std::size_t>(P), 0.0);
  // The walk below reads only the order (schedule, P, vpp, M: the order and the placement of the chunks), the byte
  // counts by virtual stage, the uniform working set and the logits: with a memo, plans that agree on all of them
  // (bit for bit) take the peaks a previous walk computed (PrecheckMemo, analysis.hpp).
  if (memo) {
    std::vector<std::uint64_t>& key = memo->key;
    key.clear();
    key.insert(key.end(), {static_cast<std::uint64_t>(sc.train.schedule), static_cast<std::uint64_t>(P),
                           static_cast<std::uint64_t>(pl.vpp), static_cast<std::uint64_t>(M),
                           static_cast<std::uint64_t>(k.uniform() ? 1 : 0), std::bit_cast<std::uint64_t>(a.logits),
                           std::bit_cast<std::uint64_t>(k.uniform() ? a.working.front() : 0.0)});
    for (const auto* v : {&stored_by_vs, &retained_by_vs, &working_by_vs})
      for (double x : *v) key.push_back(std::bit_cast<std::uint64_t>(x));
    if (const auto it = memo->peaks.find(key); it != memo->peaks.end()) {
      ++memo->hits;
      peak = it->second;
      act = peak;
      MemoryReport m;
      finish_report(sc, k, peak, act, buf, m, nullptr);
      return m;
    }
  }
  ScheduleOrder generated;
  if (!schedules) generated = pipeline_schedule(sc.train.schedule, P, pl.vpp, M);
  const ScheduleOrder& sched = schedules ? schedules->get(sc.train.schedule, P, pl.vpp, M) : generated;
  // Per chunk of the stage being walked (PipelinePlacement::chunks ≤ vpp): its stored and retained bytes.
  thread_local std::vector<double> stored_c, retained_c, working_c;
  stored_c.assign(static_cast<std::size_t>(place.chunks), 0.0);
  retained_c.assign(stored_c.size(), 0.0);
  working_c.assign(k.uniform() ? 0 : stored_c.size(), 0.0);
  for (int s = 0; s < P; ++s) {
    double cur = 0, best = 0;
    bool holds_head = false;  // the stage runs the last virtual stage (every chunk has passes in the order)
    for (int c = 0; c < place.chunks; ++c) {
      const int vs = place.vstage(s, c);
      holds_head = holds_head || vs == nvs - 1;
      stored_c[static_cast<std::size_t>(c)] = stored_by_vs[static_cast<std::size_t>(vs)];
      retained_c[static_cast<std::size_t>(c)] = retained_by_vs[static_cast<std::size_t>(vs)];
      if (!k.uniform()) working_c[static_cast<std::size_t>(c)] = working_by_vs[static_cast<std::size_t>(vs)];
    }
    for (const PipeOp& op : sched[s]) {
      const auto ci = static_cast<std::size_t>(op.chunk);
      const double stored = stored_c[ci];
      const double working = k.uniform() ? a.working.front() : working_c[ci];
      switch (op.kind) {
        case PipeOp::Forward:
          cur += stored;
          best = std::max(best, cur);
          break;
        case PipeOp::Backward:
          best = std::max(best, cur + working);
          cur -= stored;
          break;
        case PipeOp::BackwardInput:
          best = std::max(best, cur + working);
          cur += retained_c[ci] - stored;
          best = std::max(best, cur);
          break;
        case PipeOp::BackwardWeight: cur -= retained_c[ci]; break;
      }
    }
    if (holds_head) best += a.logits;  // a stage that runs the last virtual stage holds the logits
    peak[s] = best;
  }
  if (memo) {
    ++memo->misses;
    if (memo->peaks.size() >= PrecheckMemo::kMaxEntries) memo->peaks.clear();
    memo->peaks.emplace(memo->key, peak);
  }
  act = peak;
  MemoryReport m;
  finish_report(sc, k, peak, act, buf, m, nullptr);
  return m;
}

}  // namespace parsim

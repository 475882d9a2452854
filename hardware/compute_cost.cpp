// parsim hardware/compute_cost.cpp — how long a GEMM, a flash-attention kernel or a memory-bound kernel takes.
//
// GEMM (C[m×n] = A[m×k]·B[k×n], 2mnk FLOPs):
//   time = max(2mnk / (peak · eff), bytes / (HBM bw · hbm_efficiency)) + kernel_overhead_s
//   eff  = ceiling(precision) × sustained × max over CTA tiles (tm×tn) and split-K factors s of
//            tile_rel(tm,tn) × pad × wave × k_factor
//   tile_rel = (1 + c/256 + c/128) / (1 + c/tm + c/tn), c = 32: a tile moves (tm+tn)·BK operand elements per
//              tm·tn·BK MACs, so small tiles spend more of each step on loads; normalised to 256×128 [D, model choice]
//   pad      = m·n / (⌈m/tm⌉·tm · ⌈n/tn⌉·tn)            (work wasted in partial edge tiles: tile quantisation)
//   wave     = units / (⌈units/SMs⌉ · SMs), units = ⌈m/tm⌉·⌈n/tn⌉·s   (wave quantisation)
//   k_factor = kₛ/(kₛ + k_half), kₛ = k/s                 (prologue/epilogue amortised over the main loop)
//   split-K (s ∈ {1,2,4,8,16}, kₛ ≥ 256) is what cuBLAS/CUTLASS do when the output grid cannot fill the SMs.
//   bytes = (m·k + k·n)·element_bytes(p) + m·n·activation_element_bytes(p)   (operands once, output once)
// The ceilings are measured maximum-achievable-matmul (MAMF) over datasheet peak, per GPU and precision
// (hardware/data/matmul_ceiling*.csv, quoted in each preset); the model reproduces the MAMF measurement at its best shape
// within a few percent (tests/hardware). fp8: ceiling = gemm_ceiling_fp8 × fp8_training_fraction (calibration.json:
// one value for every GPU — per-tensor scaling, amax reductions and the bf16 epilogues of a training step's fp8 GEMMs
// that the microbenchmark does not run). The fp8 MAMF is measured with torch._scaled_mm's default split accumulation
// (use_fast_accum=False, ml-engineering mamf-finder.py); a training step's forward GEMMs run fast accumulation
// (Transformer Engine _2X_ACC_FPROP = False, torchao Float8LinearConfig gemm_config_output use_fast_accum=True; dgrad
// and wgrad split the accumulator in both), which on Hopper skips the promotion of partial sums to fp32 on the CUDA
// cores (DeepSeek-V3 report, arXiv 2412.19437 §3.3.2: Hopper's fp8 tensor-core accumulation keeps ~14 bits) and so
// runs at fp8_fast_accum_gain × the ceiling (per GPU, from the MAMF table: presets' sources); Blackwell's tensor cores
// accumulate fp8 in fp32 (its fp8 MAMF is 0.98–0.99 of its bf16 efficiency), gain 1.
// sustained = the active stack's in-training fraction of microbenchmark speed (sustained_fraction(): calibration.json,
// one value per stack shared by every GPU; a user's hardware file may override it). The GPU-specific part of a
// GEMM's speed is thus its datasheet peak, its measured ceiling and its SM count (tile and wave quantisation); the
// small per-rank GEMMs of high tp lose through pad/wave/k_factor, not through a per-GPU constant.
//
// Worked example (H100 preset, bf16, m = n = k = 8192, sustained = 1 as in a microbenchmark):
//   256×128 tiles: 32 × 64 = 2048 tiles, pad = 1, waves = ⌈2048/132⌉ = 16 → wave = 2048/2112 = 0.96970,
//   k_factor = 8192/8256 = 0.99225, tile_rel = 1 → 0.96218 (128×128: 4096 tiles, 32 waves → 0.9697·0.9167, lower).
//   eff = (792.1/989.4 = 0.80059) × 0.96218 = 0.77031 → 2·8192³ = 1.09951e12 FLOP / (989.4e12 · 0.77031) = 1.44265 ms;
//   memory: 3·8192²·2 B = 402.65 MB / (3.35e12 · 0.87) = 0.138 ms (not binding); + 2 µs → 1.44465 ms ≈ 761 TFLOP/s.
//
// Attention (flash kernels): time = FLOPs / (peak · eff) + kernel_overhead_s, eff = eff_max · s/(s + s_half) ·
// min(1, h(d)/h(128)) × sustained [× attn_causal_fraction() for causal kernels], h(d) = d/(d + attn_head_dim_half);
// backward FLOPs = 2.5 × forward (FlashAttention benchmark
// convention, domain notes §2) at the backward's own eff_max and s_half. fp8 training runs attention in bf16
// (Transformer Engine's default: fp8 dot-product attention is opt-in, NVTE_FP8_DPA / fp8_dpa), so fp8 uses the bf16 peak.
// Where Transformer Engine cannot run its cuDNN fused attention (Blackwell, deterministic, attention dropout:
// attention_fallback_profile) the same formula runs on the FlashAttention-2 curves of the preset's "pytorch" profile.
#include "hardware/hardware.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cmath>

namespace parsim {
namespace {

struct Tile {
  double m, n;
};
constexpr Tile kTiles[] = {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}};
constexpr double kTileLoadCost = 32;  // c in tile_rel [D]
constexpr int kSplits[] = {1, 2, 4, 8, 16};
constexpr double kMinSplitK = 256;  // a split-K slice keeps at least this much of k [D]

double tile_rel(const Tile& t) {
  return (1 + kTileLoadCost / 256 + kTileLoadCost / 128) / (1 + kTileLoadCost / t.m + kTileLoadCost / t.n);
}

void check_dims(std::int64_t m, std::int64_t n, std::int64_t k) {
  if (m < 1 || n < 1 || k < 1)
    throw InputError("GEMM shape " + std::to_string(m) + "×" + std::to_string(n) + "×" + std::to_string(k) +
                     " is not valid: m, n and k must be ≥ 1");
}

double ceiling(const Hardware& hw, Precision p, bool fast_accum) {
  (void)hw.gpu.peak_flops(p);  // rejects fp8 on GPUs without fp8
  switch (p) {
    case Precision::FP8:
      return hw.gpu.compute.gemm_ceiling_fp8 * (fast_accum ? hw.gpu.compute.fp8_fast_accum_gain : 1.0) *
             hw.calib.fp8_training_fraction;
    case Precision::FP32: return hw.gpu.compute.gemm_ceiling_fp32;
    default: return hw.gpu.compute.gemm_ceiling;
  }
}

// dh: the head-dim roll-off of the kernels in use (a profile's own, else gpu.compute's).
double attention_efficiency(double eff_max, double s_half, std::int64_t seq, std::int64_t d, double dh) {
  const double s = static_cast<double>(seq), hd = static_cast<double>(d);
  const double head = std::min(1.0, (hd / (hd + dh)) / (128.0 / (128.0 + dh)));
  return eff_max * s / (s + s_half) * head;
}

double attention_time(const Hardware& hw, double flops, std::int64_t seq, std::int64_t d, Precision p, bool bwd,
                      bool causal, const KernelProfile* curve) {
  if (!(flops >= 0) || !std::isfinite(flops))
    throw InputError("attention FLOPs must be a finite number ≥ 0, got " + fmt_num(flops));
  if (seq < 1 || d < 1)
    throw InputError("attention needs seq ≥ 1 and head_dim ≥ 1, got seq " + std::to_string(seq) + ", head_dim " +
                     std::to_string(d));
  if (flops == 0) return 0;
  (void)hw.gpu.peak_flops(p);
  const double peak = p == Precision::FP32 ? hw.gpu.peak_fp32 : p == Precision::FP16 ? hw.gpu.peak_fp16 : hw.gpu.peak_bf16;
  const auto& c = hw.gpu.compute;
  const double eff_max = curve ? (bwd ? curve->attn_bwd_efficiency : curve->attn_fwd_efficiency)
                               : (bwd ? c.attn_bwd_efficiency : c.attn_fwd_efficiency);
  const double s_half = curve ? (bwd ? curve->attn_bwd_seq_half : curve->attn_fwd_seq_half)
                              : (bwd ? c.attn_bwd_seq_half : c.attn_seq_half);
  const double profile_dh = curve ? curve->attn_head_dim_half : c.attn_profile_head_dim_half;
  const double dh = profile_dh > 0 ? profile_dh : c.attn_head_dim_half;
  const double eff = sustained_fraction(hw) * (causal ? attn_causal_fraction(hw) : 1.0) *
                     attention_efficiency(eff_max, s_half, seq, d, dh);
  return (bwd ? 2.5 : 1.0) * flops / (peak * eff) + c.kernel_overhead_s;
}

}  // namespace

namespace {

// The efficiency above for `groups` independent GEMMs of one shape launched together: the wave term counts every
// group's tiles (units = groups·⌈m/tm⌉·⌈n/tn⌉·s); the other terms are per GEMM.
// The max over tiles and split-K factors: a pure function of its six numbers.
double best_tiling(double groups, std::int64_t m, std::int64_t n, std::int64_t k, double sms, double k_half) {
  const double M = static_cast<double>(m), N = static_cast<double>(n), K = static_cast<double>(k);
  double best = 0;
  for (const Tile& t : kTiles) {
    const double tm = std::ceil(M / t.m), tn = std::ceil(N / t.n);
    const double pad = (M * N) / (tm * t.m * tn * t.n);
    for (int s : kSplits) {
      const double ks = K / s;
      if (s > 1 && ks < kMinSplitK) break;
      const double units = groups * tm * tn * s;
      const double wave = units / (std::ceil(units / sms) * sms);
      best = std::max(best, tile_rel(t) * pad * wave * ks / (ks + k_half));
    }
  }
  return best;
}

// best_tiling memoised per thread (a sweep costs the same few GEMM shapes for thousands of plans): a direct-mapped
// table keyed on all six inputs compared exactly, so a hit returns the very value best_tiling would.
double best_tiling_memo(double groups, std::int64_t m, std::int64_t n, std::int64_t k, double sms, double k_half) {
  struct Entry {
    std::int64_t m = 0, n = 0, k = 0;  // m = 0: empty (dimensions are ≥ 1)
    double groups = 0, sms = 0, k_half = 0, best = 0;
  };
  thread_local std::array<Entry, 1024> table{};
  const std::uint64_t h = (static_cast<std::uint64_t>(m) * 0x9E3779B97F4A7C15ull) ^
                          (static_cast<std::uint64_t>(n) * 0xC2B2AE3D27D4EB4Full) ^
                          (static_cast<std::uint64_t>(k) * 0x165667B19E3779F9ull) ^
                          static_cast<std::uint64_t>(groups);
  Entry& e = table[(h >> 32) % table.size()];
  if (e.m == m && e.n == n && e.k == k && e.groups == groups && e.sms == sms && e.k_half == k_half) return e.best;
  e = Entry{m, n, k, groups, sms, k_half, best_tiling(groups, m, n, k, sms, k_half)};
  return e.best;
}

double grouped_efficiency(const Hardware& hw, double groups, std::int64_t m, std::int64_t n, std::int64_t k,
                          Precision p, bool fast_accum) {
  check_dims(m, n, k);
  const double best = best_tiling_memo(groups, m, n, k, hw.gpu.compute.num_sms, hw.gpu.compute.gemm_k_half);
  return ceiling(hw, p, fast_accum) * best * sustained_fraction(hw);
}

}  // namespace

double sustained_fraction(const Hardware& hw) {
  const ComputeModel& c = hw.gpu.compute;
  if (c.sustained_override > 0) return c.sustained_override;
  return c.megatron_kernels ? hw.calib.sustained_megatron : hw.calib.sustained_pytorch;
}

double attn_causal_fraction(const Hardware& hw) {
  const double o = hw.gpu.compute.attn_causal_override;
  return o > 0 ? o : hw.calib.attn_causal_efficiency;
}

double expected_max_std_normal(std::int64_t n) {
  if (n <= 1) return 0.0;
  const double nn = static_cast<double>(n);
  const double q = 1.0 - (nn - 0.375) / (nn + 0.25);  // upper tail of Blom's plotting position, in (0, 0.5)
  const double t = std::sqrt(-2.0 * std::log(q));
  return t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
}

double slowest_gpu_factor(const Hardware& hw, std::int64_t gpus) {
  return 1.0 + hw.calib.gpu_speed_spread_pct / 100.0 * expected_max_std_normal(gpus);
}

double gemm_efficiency(const Hardware& hw, std::int64_t m, std::int64_t n, std::int64_t k, Precision p,
                       bool fast_accum) {
  return grouped_efficiency(hw, 1.0, m, n, k, p, fast_accum);
}

double grouped_gemm_time_s(const Hardware& hw, int groups, std::int64_t m, std::int64_t n, std::int64_t k,
                           Precision p, bool fast_accum) {
  if (groups < 1) throw InputError("grouped GEMM needs at least one group, got " + std::to_string(groups));
  const double g = groups;
  const double eff = grouped_efficiency(hw, g, m, n, k, p, fast_accum);
  const double M = static_cast<double>(m), N = static_cast<double>(n), K = static_cast<double>(k);
  const double t_compute = g * (2 * M * N * K) / (hw.gpu.peak_flops(p) * eff);
  const double bytes = g * ((M * K + K * N) * element_bytes(p) + M * N * activation_element_bytes(p));
  const double t_memory = bytes / (hw.gpu.hbm_bandwidth_Bps * hw.gpu.compute.hbm_efficiency);
  return std::max(t_compute, t_memory) + hw.gpu.compute.kernel_overhead_s;
}

double gemm_time_s(const Hardware& hw, std::int64_t m, std::int64_t n, std::int64_t k, Precision p, bool fast_accum) {
  const double eff = gemm_efficiency(hw, m, n, k, p, fast_accum);
  const double M = static_cast<double>(m), N = static_cast<double>(n), K = static_cast<double>(k);
  const double t_compute = 2 * M * N * K / (hw.gpu.peak_flops(p) * eff);
  const double bytes = (M * K + K * N) * element_bytes(p) + M * N * activation_element_bytes(p);
  const double t_memory = bytes / (hw.gpu.hbm_bandwidth_Bps * hw.gpu.compute.hbm_efficiency);
  return std::max(t_compute, t_memory) + hw.gpu.compute.kernel_overhead_s;
}

double attention_fwd_time_s(const Hardware& hw, double flops_fwd, std::int64_t seq_kv, std::int64_t head_dim, Precision p,
                            bool causal, const KernelProfile* curve) {
  return attention_time(hw, flops_fwd, seq_kv, head_dim, p, false, causal, curve);
}

double attention_bwd_time_s(const Hardware& hw, double flops_fwd, std::int64_t seq_kv, std::int64_t head_dim, Precision p,
                            bool causal, const KernelProfile* curve) {
  return attention_time(hw, flops_fwd, seq_kv, head_dim, p, true, causal, curve);
}

const KernelProfile* attention_fallback_profile(const Hardware& hw, bool deterministic, bool attention_dropout) {
  if (!deterministic || !attention_dropout || !hw.gpu.compute.megatron_kernels || hw.gpu.arch != GpuArch::Blackwell)
    return nullptr;
  const auto it = hw.gpu.kernels.find("pytorch");
  return it == hw.gpu.kernels.end() ? nullptr : &it->second;
}

double memory_bound_time_s(const Hardware& hw, double bytes, int kernels) {
  if (!(bytes >= 0) || !std::isfinite(bytes)) throw InputError("memory traffic must be a finite number of bytes ≥ 0, got " + fmt_num(bytes));
  if (kernels < 0) throw InputError("kernel count must be ≥ 0, got " + std::to_string(kernels));
  return bytes / (hw.gpu.hbm_bandwidth_Bps * hw.gpu.compute.hbm_efficiency) + kernels * hw.gpu.compute.kernel_overhead_s;
}

}  // namespace parsim

// The compute model: shape-dependent GEMM efficiency, flash attention, memory-bound kernels.
#include "hardware/hardware.hpp"
#include "sim/core/error.hpp"

#include <doctest/doctest.h>

#include <string>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

using namespace parsim;

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }
// Achieved fraction of the dense peak: 2mnk / time / peak.
double achieved(const Hardware& hw, std::int64_t m, std::int64_t n, std::int64_t k, Precision p = Precision::BF16) {
  return 2.0 * d(m) * d(n) * d(k) / gemm_time_s(hw, m, n, k, p) / hw.gpu.peak_flops(p);
}
double tflops(const Hardware& hw, std::int64_t m, std::int64_t n, std::int64_t k) {
  return 2.0 * d(m) * d(n) * d(k) / gemm_time_s(hw, m, n, k, Precision::BF16) / 1e12;
}
}  // namespace

// The kernel model proper is checked against microbenchmarks (MAMF, the FlashAttention papers), which run one GPU
// flat out: with the in-training factors of hardware/calibration.json (sustained fraction per stack, fp8 training
// fraction) switched off. Those are fitted and asserted on measured runs (tests/validation, parsim_accuracy --cv).
inline Hardware kernel_level(const std::string& name) {
  Hardware h = resolve_hardware(name);
  h.calib.sustained_megatron = h.calib.sustained_pytorch = 1.0;
  h.calib.fp8_training_fraction = 1.0;
  return h;
}

TEST_CASE("GEMM worked example: H100, bf16, 8192³ (arithmetic in compute_cost.cpp's header)") {
  const Hardware h = kernel_level("h100");
  // 256×128 tiles: 2048 tiles in ⌈2048/132⌉ = 16 waves → 2048/2112 = 0.96970; k-loop 8192/(8192+64) = 0.99225;
  // ceiling 792.1/989.4 = 0.80059 ⇒ eff = 0.80059 × 0.96970 × 0.99225 = 0.77031.
  CHECK(gemm_efficiency(h, 8192, 8192, 8192, Precision::BF16) == doctest::Approx(0.77031).epsilon(1e-4));
  // time = 2·8192³ / (989.4e12 · 0.77031) + 2 µs = 1.44265 ms + 0.002 ms = 1.44465 ms (memory 0.138 ms not binding).
  CHECK(gemm_time_s(h, 8192, 8192, 8192, Precision::BF16) == doctest::Approx(1.44465e-3).epsilon(1e-4));
}

TEST_CASE("GEMM: the model stays below the measured MAMF at its best shape, within 11% (Blackwell: see below)") {
  // data/hardware/matmul_ceiling.csv (ml-engineering MAMF): the best bf16 shape and its TFLOP/s. The model loses
  // 3–6% there to its k-loop and wave factors, which are never exactly 1 (A100 0.969, H100 0.955, MI355X 0.990).
  // MI300X/MI325X: AMD's measured max-achievable FLOPs (hardware/data/amd_maf.csv, ROCm blog 'Measuring
  // Max-Achievable FLOPs - Part 2', Table 1) at AMD's bf16 shape 4096×4864×32896: 16·38 = 608 tiles of 256×128 on 304
  // CUs = 2 full waves, k-loop 32896/(32896 + 64) = 0.998.
  // Blackwell (B200, B300, GB200) takes its GEMM constants from XLA's measured B200 sweep instead (b200.json:
  // ceiling 0.7433, k_half 332; GB200 and B300 scaled by their MAMF ratios): the two measurements disagree at the
  // MAMF's best shapes (docs/gemm-shapes.md §3), where the model now gives B200 1,474 of 1,745 (0.845: 1792 × 16128
  // × 3072, k-loop 3072/3404 = 0.902), GB200 1,349 of 1,822 (0.740: k = 2048, 0.860, and 8.2 waves → 9) and B300
  // 1,250 of 1,769 (0.707: k = 1024, 0.755) — the small-k best shapes of the MAMF search are where the sweep's
  // per-tile cost shows most. Held here so the gap cannot grow unnoticed.
  struct Case {
    const char* gpu;
    std::int64_t m, n, k;
    double measured, floor;
  };
  for (const Case& c : {Case{"a100-80gb", 6912, 16384, 2048, 267.9, 0.88}, Case{"h100", 6144, 17920, 2816, 792.1, 0.88},
                        Case{"mi300x", 4096, 4864, 32896, 708.0, 0.88}, Case{"b200", 1792, 16128, 3072, 1745.0, 0.84},
                        Case{"b300", 12288, 18432, 1024, 1769.0, 0.70}, Case{"gb200", 4096, 9728, 2048, 1822.0, 0.73},
                        Case{"mi325x", 4096, 4864, 32896, 843.0, 0.88}, Case{"mi355x", 12288, 8192, 8192, 1565.0, 0.88}}) {
    CAPTURE(c.gpu);
    const double model = tflops(kernel_level(c.gpu), c.m, c.n, c.k);
    CHECK(model <= c.measured);
    CHECK(model >= c.floor * c.measured);
  }
}

TEST_CASE("GEMM: efficiency stays in (0, ceiling] for every preset, shape and precision") {
  const std::int64_t dims[] = {1, 7, 64, 100, 128, 333, 1024, 1280, 4096, 5120, 11008, 28672, 65536};
  for (const auto& name : hardware_preset_names()) {
    const Hardware hw = kernel_level(name);
    for (Precision p : {Precision::BF16, Precision::FP16, Precision::FP8, Precision::FP32}) {
      if (p == Precision::FP8 && !hw.gpu.has_fp8()) {
        CHECK_THROWS_AS((void)gemm_efficiency(hw, 8, 8, 8, p), InputError);
        continue;
      }
      const double ceil = p == Precision::FP8    ? hw.gpu.compute.gemm_ceiling_fp8
                          : p == Precision::FP32 ? hw.gpu.compute.gemm_ceiling_fp32
                                                 : hw.gpu.compute.gemm_ceiling;
      for (auto m : dims)
        for (auto n : dims)
          for (auto k : {std::int64_t{1}, std::int64_t{64}, std::int64_t{4096}, std::int64_t{65536}}) {
            const double e = gemm_efficiency(hw, m, n, k, p);
            REQUIRE(e > 0);
            REQUIRE(e <= ceil);
          }
    }
  }
}

TEST_CASE("GEMM: throughput grows with size (monotone over powers of two, bounded wave-quantisation dips)") {
  for (const auto& name : hardware_preset_names()) {
    CAPTURE(name);
    const Hardware hw = kernel_level(name);
    double prev = 0;
    for (std::int64_t s = 128; s <= 16384; s *= 2) {
      const double a = achieved(hw, s, s, s);
      CHECK(a >= prev);
      prev = a;
    }
    // Square sizes 1024…8192 in steps of 256: a size that leaves the last wave nearly empty may run slower than a
    // smaller one, but by at most 15% (model: worst dip 0.877 on the 132-SM Hopper).
    double best = 0;
    for (std::int64_t s = 1024; s <= 8192; s += 256) {
      const double a = achieved(hw, s, s, s);
      CHECK(a >= 0.85 * best);
      best = std::max(best, a);
    }
    // Large square GEMMs come near the ceiling: 8192³ within 6% of it (0.962 on H100, see the worked example; Blackwell
    // 0.9499 with B200's k_half 332: k-loop 8192/8524 = 0.96105 × wave 0.98842 on 148 SMs).
    CHECK(gemm_efficiency(hw, 8192, 8192, 8192, Precision::BF16) >= 0.94 * hw.gpu.compute.gemm_ceiling);
  }
}

TEST_CASE("GEMM: skinny shapes run far below square ones") {
  for (const auto& name : hardware_preset_names()) {
    CAPTURE(name);
    const Hardware hw = kernel_level(name);
    const double square = achieved(hw, 8192, 8192, 8192);
    // n = 64 (hidden 4096 split over TP 64) and m = 64 (64 tokens per micro-batch): the 64-wide side fills one tile,
    // the grid has ≤ 64 CTAs for 108–304 SMs and the m·k or k·n operand streams from HBM: < 50% of the square rate
    // on every preset (model: 0.18–0.38).
    CHECK(achieved(hw, 4096, 64, 4096) < 0.5 * square);
    CHECK(achieved(hw, 64, 4096, 4096) < 0.5 * square);
  }
  // On H100 even TP 32 of a 4096 hidden (n = 128) is below half: HBM floor (4096² + 2·4096·128)·2 B / (3.35e12·0.87)
  // = 12.3 µs vs 2·4096²·128 = 4.29 GFLOP → 0.35 of peak at best; model 0.397 of the square rate.
  const Hardware h = kernel_level("h100");
  CHECK(achieved(h, 4096, 128, 4096) < 0.5 * achieved(h, 8192, 8192, 8192));
}

TEST_CASE("GEMM: fp8 is faster than bf16 but less than 2×") {
  for (const auto& name : hardware_preset_names()) {
    const Hardware hw = kernel_level(name);
    if (!hw.gpu.has_fp8()) continue;
    CAPTURE(name);
    for (std::int64_t s : {2048, 4096, 8192, 16384}) {
      const double speedup = gemm_time_s(hw, s, s, s, Precision::BF16) / gemm_time_s(hw, s, s, s, Precision::FP8);
      CHECK(speedup > 1.0);
      CHECK(speedup < 2.0);
    }
    // At 16384³ the overhead is negligible: speed-up = (fp8 peak × fp8 ceiling) / (bf16 peak × bf16 ceiling), the
    // measured MAMF ratio (hardware/data/matmul_ceiling*.csv): H100 2 × (1402.6/1978.9)/(792.1/989.4) = 1.771,
    // H200 2 × 0.73445/0.80059 = 1.835; Blackwell the ratio of XLA's measured B200 sweeps (b200.json), B200
    // 2 × 0.6933/0.7433 = 1.865, GB200 and B300 scaled from it by their fp8 and bf16 MAMF ratios: GB200 2 × 0.6573/
    // 0.6985 = 1.882, B300 2 × 0.6773/0.7535 = 1.798, GB300 (B300's level × GB200's gains) 2 × 0.6421/0.7081 = 1.814.
    // MI300X/MI325X: AMD's measured MAF of both precisions (hardware/data/amd_maf.csv):
    // MI300X 1273/708 = 1.798, MI325X 1519/843 = 1.802. MI355X has no fp8 row: its fp8 ceiling is its own bf16
    // ceiling × its predecessor MI325X's measured fp8/bf16 efficiency ratio (0.58090/0.64479 = 0.90091, AMD's MAF
    // table) ⇒ 2 × 0.90091 = 1.802.
    const double expect = hw.gpu.peak_fp8 * hw.gpu.compute.gemm_ceiling_fp8 /
                          (hw.gpu.peak_bf16 * hw.gpu.compute.gemm_ceiling);
    CHECK(gemm_time_s(hw, 16384, 16384, 16384, Precision::BF16) / gemm_time_s(hw, 16384, 16384, 16384, Precision::FP8) ==
          doctest::Approx(expect).epsilon(0.01));
    const std::map<std::string, double> published = {{"h100", 1.771}, {"h200", 1.835}, {"b200", 1.865}, {"b300", 1.798},
                                                     {"gb200", 1.882}, {"gb300", 1.814}, {"mi300x", 1.798}, {"mi325x", 1.802}, {"mi355x", 1.802}};
    REQUIRE(published.count(name) == 1);
    CHECK(expect == doctest::Approx(published.at(name)).epsilon(2e-3));
    // In a training step fp8 GEMMs run at calibration.json's fp8_training_fraction of that ceiling (one value for
    // every GPU): the speed-up shrinks by exactly that factor (H100: 1.771 × 0.926 = 1.64, inside the 1.3–1.76×
    // reported for H100 training GEMMs; the sustained fraction multiplies both precisions and cancels).
    const Hardware tr = resolve_hardware(name);
    CHECK(gemm_time_s(tr, 16384, 16384, 16384, Precision::BF16) / gemm_time_s(tr, 16384, 16384, 16384, Precision::FP8) ==
          doctest::Approx(expect * tr.calib.fp8_training_fraction).epsilon(0.01));
  }
}

TEST_CASE("GEMM: fp8 fast accumulation (forward GEMMs) gains only where the tensor cores promote partial sums") {
  // The fp8 MAMF is measured with torch._scaled_mm's split accumulation; forward GEMMs of TE / torchao run fast
  // accumulation at gpu.compute.fp8_fast_accum_gain × that ceiling. At 16384³ the 2 µs kernel overhead is < 0.03 % of
  // the ≈ 8 ms GEMM, so the time ratio is the gain itself: H100 0.80059/0.70878 × 0.9745 = 1.1007 (0.9745 = the mean
  // fp8/bf16 MAMF efficiency ratio of B200, GB200 and B300, whose tensor cores accumulate fp8 in fp32), H200
  // 0.80059/0.73445 × 0.9745 = 1.0623, Blackwell and AMD 1 (no split-accumulation cost in their measurement).
  const std::map<std::string, double> gain = {{"h100", 1.1007}, {"h200", 1.0623}, {"b200", 1.0}, {"gb200", 1.0},
                                              {"b300", 1.0}, {"gb300", 1.0}, {"mi300x", 1.0}, {"mi325x", 1.0}, {"mi355x", 1.0}};
  for (const auto& entry : gain) {
    const std::string name = entry.first;
    const double g = entry.second;
    CAPTURE(name);
    const Hardware hw = resolve_hardware(name);
    CHECK(hw.gpu.compute.fp8_fast_accum_gain == doctest::Approx(g).epsilon(1e-6));
    const std::int64_t s = 16384;
    CHECK(gemm_time_s(hw, s, s, s, Precision::FP8) / gemm_time_s(hw, s, s, s, Precision::FP8, true) ==
          doctest::Approx(g).epsilon(1e-3));
    // Other precisions have no accumulation mode: the flag changes nothing.
    CHECK(gemm_time_s(hw, s, s, s, Precision::BF16, true) == gemm_time_s(hw, s, s, s, Precision::BF16));
  }
}

TEST_CASE("GEMM: the HBM floor binds for matrix-vector shapes; bad shapes are input errors") {
  const Hardware h = kernel_level("h100");
  // m = k = 16384, n = 1: bytes = (16384² + 16384)·2 + 16384·2 = 536,936,448 B / (3.35e12 · 0.87) = 184.23 µs, + 2 µs.
  CHECK(gemm_time_s(h, 16384, 1, 16384, Precision::BF16) == doctest::Approx(186.23e-6).epsilon(1e-4));
  CHECK_THROWS_AS((void)gemm_time_s(h, 0, 8, 8, Precision::BF16), InputError);
  CHECK_THROWS_AS((void)gemm_efficiency(h, 8, -1, 8, Precision::BF16), InputError);
  CHECK_THROWS_AS((void)gemm_time_s(kernel_level("a100"), 8, 8, 8, Precision::FP8), InputError);
}

TEST_CASE("memory-bound kernels") {
  const Hardware h = kernel_level("h100");
  // 1 GB over 3.35 TB/s × 0.87 = 343.11 µs, plus 2 kernels × 2 µs.
  CHECK(memory_bound_time_s(h, 1e9, 2) == doctest::Approx(347.11e-6).epsilon(1e-4));
  CHECK(memory_bound_time_s(h, 0, 0) == 0);
  CHECK_THROWS_AS((void)memory_bound_time_s(h, -1, 1), InputError);
  CHECK_THROWS_AS((void)memory_bound_time_s(h, 1, -1), InputError);
}

TEST_CASE("attention: H100 against the FlashAttention-2/3 benchmarks (d = 128, non-causal, batch·seq = 16k, 16 heads)") {
  // FA3 paper (arXiv 2407.08608) Fig. 5–6, TFLOP/s at seq 1k/2k/4k/8k/16k. The preset runs FlashAttention-2 (what
  // PyTorch stacks ran on H100): forward 350/362/368/370/370, backward 260/291/310/318/322. With FA3's constants
  // (examples/hardware/h100-fa3.json): forward 565/625/638/646/648, backward 424/501/542/559/561.
  // FLOPs (FA convention): forward 4·b·s²·h·d, backward 2.5× that.
  Hardware fa2 = kernel_level("h100");
  Hardware fa3 = fa2;
  fa3.gpu.compute.attn_fwd_efficiency = 0.665;
  fa3.gpu.compute.attn_seq_half = 160;
  fa3.gpu.compute.attn_bwd_efficiency = 0.59;
  fa3.gpu.compute.attn_bwd_seq_half = 350;
  const double fwd2[] = {350, 362, 368, 370, 370}, bwd2[] = {260, 291, 310, 318, 322};
  const double fwd3[] = {565, 625, 638, 646, 648}, bwd3[] = {424, 501, 542, 559, 561};
  int i = 0;
  for (std::int64_t s = 1024; s <= 16384; s *= 2, ++i) {
    CAPTURE(s);
    const double flops = 4.0 * d(16384 / s) * d(s) * d(s) * 16 * 128;
    for (const auto* c : {&fa2, &fa3}) {
      const double tf_fwd = flops / attention_fwd_time_s(*c, flops, s, 128, Precision::BF16) / 1e12;
      const double tf_bwd = 2.5 * flops / attention_bwd_time_s(*c, flops, s, 128, Precision::BF16) / 1e12;
      CHECK(tf_fwd == doctest::Approx(c == &fa2 ? fwd2[i] : fwd3[i]).epsilon(0.07));
      CHECK(tf_bwd == doctest::Approx(c == &fa2 ? bwd2[i] : bwd3[i]).epsilon(0.07));
    }
  }
  // Causal kernels run at calibration.json's attn_causal_efficiency of the non-causal curve, and the stack's
  // in-training fraction applies (both one value for every GPU; the preset loads the PyTorch profile).
  const Hardware h = resolve_hardware("h100");
  const double f = 1e12;
  const double plain = attention_fwd_time_s(fa2, f, 4096, 128, Precision::BF16) - 2e-6;
  CHECK(attention_fwd_time_s(h, f, 4096, 128, Precision::BF16, true) - 2e-6 ==
        doctest::Approx(plain / (h.calib.attn_causal_efficiency * h.calib.sustained_pytorch)).epsilon(1e-6));
}

TEST_CASE("attention: efficiency law, head dim, precisions") {
  const Hardware a = kernel_level("a100");
  const double flops = 1e12;
  // A100 FA2 forward at 16k, d = 128: 0.70 × 16384/(16384 + 80) = 0.69660 → 1e12 / (312e12 · 0.69660) + 2 µs.
  CHECK(attention_fwd_time_s(a, flops, 16384, 128, Precision::BF16) ==
        doctest::Approx(1e12 / (312e12 * 0.69660) + 2e-6).epsilon(1e-4));
  // Backward: 2.5 × FLOPs at 0.55 × 16384/(16384 + 270) = 0.54108.
  CHECK(attention_bwd_time_s(a, flops, 16384, 128, Precision::BF16) ==
        doctest::Approx(2.5e12 / (312e12 * 0.54108) + 2e-6).epsilon(1e-4));
  const Hardware h = kernel_level("h100");
  // Head dim 64 runs at (64/104)/(128/168) = 0.808 of d = 128's efficiency; 256 is capped at d = 128's.
  const double t128 = attention_fwd_time_s(h, flops, 8192, 128, Precision::BF16) - 2e-6;
  CHECK((attention_fwd_time_s(h, flops, 8192, 64, Precision::BF16) - 2e-6) == doctest::Approx(t128 / 0.80769).epsilon(1e-4));
  CHECK(attention_fwd_time_s(h, flops, 8192, 256, Precision::BF16) == doctest::Approx(t128 + 2e-6));
  // Longer sequences are more efficient; fp8 recipes keep attention in bf16 (TE default), so fp8 = bf16 time.
  CHECK(attention_fwd_time_s(h, flops, 1024, 128, Precision::BF16) > attention_fwd_time_s(h, flops, 4096, 128, Precision::BF16));
  CHECK(attention_bwd_time_s(h, flops, 4096, 128, Precision::FP8) == attention_bwd_time_s(h, flops, 4096, 128, Precision::BF16));
  CHECK_THROWS_AS((void)attention_fwd_time_s(a, flops, 4096, 128, Precision::FP8), InputError);
  CHECK(attention_fwd_time_s(h, 0, 4096, 128, Precision::BF16) == 0);
  CHECK_THROWS_AS((void)attention_fwd_time_s(h, -1, 4096, 128, Precision::BF16), InputError);
  CHECK_THROWS_AS((void)attention_bwd_time_s(h, 1e9, 0, 128, Precision::BF16), InputError);
}

TEST_CASE("GEMM derivation on B200 from its own measured curve: Llama 3 70B attention projection at tp8") {
  // Row-parallel output projection of one micro-batch (seq 8192, mbs 1) at tp 8: m = 8192 tokens, n = hidden = 8192,
  // k = hidden / tp = 1024, bf16, Megatron-Core kernels. B200: 148 SMs, ceiling 0.7433 and k_half 332 fitted to XLA's
  // measured B200 GEMM sweep (b200.json; tests/data/hardware/xla_matmul_perf_table.csv; not H100's values).
  //   256×128 tiles: ⌈8192/256⌉·⌈8192/128⌉ = 32·64 = 2048 tiles, ⌈2048/148⌉ = 14 waves → wave = 2048/2072 = 0.98842;
  //   k-loop 1024/(1024 + 332) = 0.75516 (k = hidden/tp is what high tp shrinks); pad = tile_rel = 1; split-K loses
  //   (2 slices: 4096 units in 28 waves = 0.98842, k-loop 512/844 = 0.6066) ⇒ shape factor 0.74642.
  //   eff = 0.7433 × 0.74642 × sustained_megatron (calibration.json, the Megatron stack's one value for every GPU).
  //   time = 2·8192·8192·1024 = 1.37439e11 FLOP / (2250e12 · 0.7433 · 0.74642 · s) + 2 µs
  //        = 110.099 µs / s + 2 µs; memory (8192·1024·2 + 8192²)·2 B = 167.8 MB / (7.7e12 · 0.87) = 25.0 µs, not binding.
  const Hardware b200 = megatron_compute(resolve_hardware("b200"));
  const double s = b200.calib.sustained_megatron;
  CHECK(sustained_fraction(b200) == s);
  CHECK(gemm_efficiency(b200, 8192, 8192, 1024, Precision::BF16) == doctest::Approx(0.7433 * 0.74642 * s).epsilon(1e-4));
  CHECK(gemm_time_s(b200, 8192, 8192, 1024, Precision::BF16) == doctest::Approx(110.099e-6 / s + 2e-6).epsilon(1e-4));
  // The same projection at tp 1 (k = 8192: k-loop 8192/8524 = 0.96105, same tiles and waves) runs 0.96105/0.75516 =
  // 1.2726× more efficiently: the per-rank GEMMs of high tp lose through the shape model (B200's prologue/epilogue is
  // 5× H100's in k-units), not a per-GPU constant.
  CHECK(gemm_efficiency(b200, 8192, 8192, 8192, Precision::BF16) / gemm_efficiency(b200, 8192, 8192, 1024, Precision::BF16) ==
        doctest::Approx(1.2726).epsilon(1e-3));
  // fp8: ceiling 0.6933 fitted to XLA's measured B200 fp8 sweep at the same k_half, × fp8_training_fraction
  // (calibration.json), same shape factor (the model's tiles are precision-independent) ⇒ eff = 0.6933 · 0.74642 · f8 · s.
  CHECK(gemm_efficiency(b200, 8192, 8192, 1024, Precision::FP8) ==
        doctest::Approx(0.6933 * 0.74642 * b200.calib.fp8_training_fraction * s).epsilon(1e-4));
}

TEST_CASE("attention on Blackwell: Transformer Engine falls back to FlashAttention-2 when deterministic with dropout") {
  // TE's cuDNN fused attention refuses a deterministic training backward with attention dropout on compute capability
  // ≥ 10.0 (TransformerEngine fused_attn.cpp nvte_get_fused_attn_backend), FA3/FA4 refuse dropout, so TE runs flash-attn
  // 2: the preset's "pytorch" (FlashAttention-2) curve. B200's FA2 curve = H100's × the per-SM-clock dense-rate ratio
  // 4,096/8,192 (mma.sync cannot use tcgen05): forward 0.375/2 = 0.1875, s_half 80; backward 0.33/2 = 0.165, s_half 270.
  const Hardware b200 = megatron_compute(resolve_hardware("b200"));
  const KernelProfile* fa2 = attention_fallback_profile(b200, true, true);
  REQUIRE(fa2 != nullptr);
  CHECK(fa2->attn_fwd_efficiency == 0.1875);
  CHECK(fa2->attn_bwd_efficiency == 0.165);
  // Only the three conditions together: not without determinism, not without dropout, not on Hopper, not on the
  // PyTorch stack (which runs its FA2 curve anyway).
  CHECK(attention_fallback_profile(b200, false, true) == nullptr);
  CHECK(attention_fallback_profile(b200, true, false) == nullptr);
  CHECK(attention_fallback_profile(megatron_compute(resolve_hardware("h100")), true, true) == nullptr);
  CHECK(attention_fallback_profile(resolve_hardware("b200"), true, true) == nullptr);
  // Seq 8192, d = 128, causal, 1e12 forward FLOPs: cuDNN's curve 0.64421 · 8192/(8192 + 160) = 0.63187, FA2's
  // 0.1875 · 8192/(8192 + 80) = 0.18569; both × causal fraction × sustained (the same for both), so the kernel time
  // (without the 2 µs launch) grows 0.63187/0.18569 = 3.4028× forward; backward 0.57155 · 8192/8542 = 0.54813 vs
  // 0.165 · 8192/8462 = 0.15974: 3.4315×.
  const double f = 1e12, gap = b200.gpu.compute.kernel_overhead_s;
  const double cudnn_f = attention_fwd_time_s(b200, f, 8192, 128, Precision::BF16, true) - gap;
  const double cudnn_b = attention_bwd_time_s(b200, f, 8192, 128, Precision::BF16, true) - gap;
  CHECK(attention_fwd_time_s(b200, f, 8192, 128, Precision::BF16, true, fa2) - gap ==
        doctest::Approx(cudnn_f * 3.4028).epsilon(1e-4));
  CHECK(attention_bwd_time_s(b200, f, 8192, 128, Precision::BF16, true, fa2) - gap ==
        doctest::Approx(cudnn_b * 3.4315).epsilon(1e-4));
}

TEST_CASE("slowest GPU: expected maximum of n standard normals and the step's compute factor") {
  // E[max of n iid N(0,1)] = ∫ x·n·φ(x)·Φ(x)^(n−1) dx, by numerical integration (step 0.001 on [−10, 12]):
  // n = 8: 1.4236, n = 128: 2.5946, n = 4096: 3.6261. Blom's Φ⁻¹((n − 0.375)/(n + 0.25)) with A&S 26.2.23 gives
  // 1.4345, 2.5851, 3.6110: within 0.8 %. One GPU waits for nobody: 0.
  CHECK(expected_max_std_normal(1) == 0.0);
  CHECK(expected_max_std_normal(8) == doctest::Approx(1.4236).epsilon(0.008));
  CHECK(expected_max_std_normal(128) == doctest::Approx(2.5946).epsilon(0.008));
  CHECK(expected_max_std_normal(4096) == doctest::Approx(3.6261).epsilon(0.008));
  double prev = 0;
  for (std::int64_t n : {2, 4, 16, 64, 256, 1024, 16384, 1 << 20}) {
    CAPTURE(n);
    CHECK(expected_max_std_normal(n) > prev);  // more GPUs, a slower slowest one
    prev = expected_max_std_normal(n);
  }
  // The factor: 1 + σ/100 · E[max], σ = calibration.json's gpu_speed_spread_pct (1.2 %, Sinha et al. SC'22: 8 → 128
  // GPUs then costs 1.2 % × (2.5851 − 1.4345) = 1.38 % of compute; torchtitan measures 2.7 % for FSDP 8 → 128).
  const Hardware h = resolve_hardware("h100");
  CHECK(slowest_gpu_factor(h, 1) == 1.0);
  CHECK(slowest_gpu_factor(h, 128) ==
        doctest::Approx(1.0 + h.calib.gpu_speed_spread_pct / 100.0 * expected_max_std_normal(128)));
  Hardware same = h;
  same.calib.gpu_speed_spread_pct = 0;
  CHECK(slowest_gpu_factor(same, 4096) == 1.0);
}

// ---- measured: XLA's GEMM performance table on H100, B200 and MI355X ----
// tests/data/hardware/xla_matmul_perf_table.csv (openxla/xla default_matmul_perf_table.txtpb, Apache-2.0): 375 bf16
// GEMMs per GPU, batch 1/2/4 × m, n, k ∈ {256 … 4096}, each the median CUPTI kernel time of 5 runs through XLA's GPU
// runtime with cold L2 (operands alternate). A shape sweep of the GEMM sizes a training step's per-rank GEMMs have at
// high tp and small hidden sizes, on three GPUs — the model's shape terms (tile and wave quantisation, k-loop) get no
// constant from it. Compared from 30 GFLOP per call up (65 shapes per GPU; below, kernels of a few µs, the launch
// ramp dominates and the model is optimistic on every GPU), at kernel level (sustained fraction 1, as a
// microbenchmark) with a batch of b as b GEMMs of one launch (grouped_gemm_time_s). What it shows (MESSAGE lines):
//   - H100 (preset from the MAMF search, k_half 64): mean |ln(model/measured)| 0.029, bias −0.5 %, every shape within
//     −6.5 … +17 % — the model holds on a sweep it was not fitted to;
//   - B200: the preset's GEMM constants are fitted to this sweep (b200.json: `parsim calibrate` on this file, ceiling
//     0.7433, k_half 332): mean |ln| 0.030, bias −0.3 %, −12.8 … +7.7 %. With the MAMF's 0.7756 and H100's 64 it was
//     +21.8 % too fast on average (1 … 61 %): XLA's B200 kernels pay about the same prologue/epilogue time per tile
//     as H100's while the main loop runs 2.2× faster per SM (docs/gemm-shapes.md §2);
//   - MI355X: +43 % on average (ln 0.358), +13 % from 100 GFLOP: hipBLASLt's 256 CUs need far larger GEMMs to fill.
// Asserted: H100 within its figures; B200 within its fit; on every GPU the model is never more than 15 % slower than
// the measurement; the MI355X gap as it stands, so a change that closes or widens it shows here and
// docs/gemm-shapes.md follows.
TEST_CASE("measured: XLA's GEMM table on H100, B200 and MI355X from 30 GFLOP, at kernel level") {
  std::ifstream in(std::string(PARSIM_TEST_DATA) + "/hardware/xla_matmul_perf_table.csv");
  REQUIRE(in.good());
  struct Acc {
    int n = 0;
    double sum = 0, sum_abs = 0, lo = 1e9, hi = -1e9;
  };
  std::map<std::string, Acc> acc;
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("gpu,", 0) == 0) continue;
    std::stringstream ss(line);
    std::string gpu, dev, f;
    std::getline(ss, gpu, ',');
    std::getline(ss, dev, ',');
    std::int64_t v[4];
    for (auto& x : v) {
      std::getline(ss, f, ',');
      x = std::stoll(f);
    }
    std::getline(ss, f, ',');
    const double measured = std::stod(f) * 1e12;
    ++rows;
    const double flop = 2.0 * d(v[0]) * d(v[1]) * d(v[2]) * d(v[3]);
    if (flop < 30e9) continue;
    const Hardware hw = kernel_level(gpu);
    const double model =
        flop / grouped_gemm_time_s(hw, static_cast<int>(v[0]), v[1], v[2], v[3], Precision::BF16);
    const double e = std::log(model / measured);
    Acc& a = acc[gpu];
    ++a.n;
    a.sum += e;
    a.sum_abs += std::abs(e);
    a.lo = std::min(a.lo, e);
    a.hi = std::max(a.hi, e);
  }
  REQUIRE(rows == 3 * 375);
  for (const auto& entry : acc) {
    const std::string& gpu = entry.first;
    const Acc& a = entry.second;
    CAPTURE(gpu);
    MESSAGE(gpu << ": " << a.n << " shapes, mean ln(model/measured) " << a.sum / a.n << ", mean |ln| " << a.sum_abs / a.n
                << ", range " << a.lo << " … " << a.hi);
    CHECK(a.n == 65);
    CHECK(a.lo >= std::log(0.85));  // never more than 15 % slower than the measurement
  }
  const Acc& h = acc.at("h100");
  CHECK(h.sum_abs / h.n <= 0.04);
  CHECK(std::abs(h.sum / h.n) <= 0.02);
  CHECK(h.hi <= 0.17);
  const Acc& b = acc.at("b200");
  CHECK(b.sum_abs / b.n <= 0.035);
  CHECK(std::abs(b.sum / b.n) <= 0.01);
  const Acc& m = acc.at("mi355x");
  CHECK(m.sum / m.n == doctest::Approx(0.359).epsilon(0.05));
}

// Cross-validation (ctest label `validation`): the fitted constants of hardware/calibration.json refitted leaving one
// source of tests/data/validation out at a time (cross_validation.hpp), each source predicted out of sample.
//
// Constants refitted (hardware/calibration.json, one value per stack or one in all, shared by every GPU): the in-training
// sustained fraction of each stack, fp8's in-training fraction, the causal-attention factor and the host factors of the
// two Megatron programs (Megatron-Core: host_megatron; legacy Megatron-LM / Megatron-DeepSpeed: host_legacy).
//
// Bounds asserted — what the model reaches today, NOT the issue-9 target (out-of-sample mean ≤ 8 %, no source
// > 15 %), which is not reached: the sources parsim misses (S53 Megatron-LM CI 18 % in sample, S30/S52 small
// Megatron-DeepSpeed / nanoGPT runs ≈ 28 %, S50 MI325X FSDP2 ≈ 22 %) are off for reasons no refit of a shared constant
// repairs (host-bound tiny models, legacy kernels, MI300-class GEMM/attention curves without a measured fp8 ceiling).
// The host factors are fitted only on the rows that identify them (cross_validation.hpp: the prediction moves > 10 %
// between factors 1 and 3), each on its own program's rows. Those are 70 of S53's 73 rows (Megatron-LM CI 2025), all
// 27 rows of S54 (Megatron-LM Selene CI 2023-24: 17 legacy fp16, 10 Megatron-Core local spec / TE) and 73 of S56's 80
// (vTrain, Megatron-DeepSpeed), and no other source's. With S53 alone, leaving it out left the factor unidentified (it
// fell back to 1 and S53 was predicted at 59 %); now each host-bound source is predicted with the factors the others
// set (host_megatron without S53 from S54's Megatron-Core rows; host_legacy without S56 from S54's legacy rows). Within S53 the factor is also cross-validated across configurations
// (host_bound_splits: fit on one group, predict the other).
// Measured on this commit (parsim_accuracy --cv, 496 rows): mean over 27 sources 8.3 % in sample, 9.3 % out of sample
// since Transformer Engine's context-parallel ring is issued as its Python loop runs it (docs/host-model.md §7.20: S53
// 14.1 / 24.3 → 13.2 / 22.9 %, S54 16.8 / 21.5 → 15.8 / 20.8 %); 8.4 / 9.4 % since Megatron's softmax runs eager fp32 ops off its fused kernel's shapes (docs/host-model.md §7.19: S56 12.4 / 19.1
// → 11.8 / 18.5 %); 8.4 / 9.5 % since the legacy Megatron program's kernels take the Megatron fraction (hardware/presets.cpp legacy_compute: S54
// 17.6 / 21.3 → 16.8 / 21.5 %, S56 12.3 / 19.7 → 12.4 / 19.1 %, S04 out 9.4 → 8.8 %); before, 8.5 / 9.5 %
// (S53 14.0 / 24.3 %, S54 17.6 / 21.3 %, S56 12.3 / 19.7 % in / out of sample since a collective's host issue runs at
// the CPU's speed without the program's constant, docs/host-model.md §7.17 — 13.7 / 25.1, 17.4 / 22.1, 12.7 / 19.5 %
// before; the GPU-bound single rows S33 16.4 % and S52 15.1 %). Earlier on 496 rows 8.6 / 9.7 % (S53 21.4 %, S54 25.0 %, S56 23.2 % out of sample). History — on 484 rows: 9.7 % in sample, 11.0 % out of
// sample since the 80 vTrain Megatron-DeepSpeed runs on one 8-GPU A100 node joined (S56, small_models_a100.csv: GPT
// 24 x 1024 / 24 x 2048, fp16, full recompute, tp 1-8, mbs 1-8 — the in-repo analogue of the held-out small-model
// family; 73 of its 80 rows are host-bound) and the legacy Megatron-LM / Megatron-DeepSpeed program got its own host
// constant (host_legacy 1.54: S56 and S54's 17 legacy rows; host_megatron 2.53: S53 and S54's 10 Megatron-Core rows).
// S56 12.9 % in / 24.7 % out (host_legacy 1.895 without it), S53 15.8 % in / 22.1 % out (host_megatron 2.075 without
// it), S54 21.6 % in / 26.7 % out; every other source within 0.8 point of its figure below. With one host factor for
// both programs (2.015) it was 10.3 % / 12.1 %: S56 30.6 / 49.8 %, S53 23.8 / 39.2 %, S54 9.5 / 9.5 % — the three
// sources want ≈ 1.4, 2.0 and 2.7. Before S56: mean over 25 sources 9.4 % in sample, 10.6 % out of sample (S53
// 16.3 % in / 24.0 % out since GB200's deterministic runs with attention dropout run flash-attn 2, not cuDNN: C0073;
// the fitted constants did not move); before that 9.5 % / 10.6 % (S51
// 10.7 %, S52 19.1 %, S04 10.0 %, S48 15.5 % out of sample, merged with cv5); before the llm.c, nanoGPT and llm-foundry rows stated
// their fused kernels and FlashAttention-1 (issue 9 item 5) 10.1 % / 11.2 %; S53
// 16.6 % in / 24.3 % out, S54 17.9 % in / 30.1 % out (factor 2.63 without S54, 2.01 without S53, 2.37 on all) since
// every CI row states --no-gradient-accumulation-fusion and S54's Megatron-Core rows their TorchScript jit_fuser
// (docs/host-model.md §7.6). Before that: 10.2 % / 11.5 % (12.4 % before AMD's MI325X ceilings and the slowest-GPU
// factor; 12.1 % before the host-bound rows stated their transformer implementation and timers, 15.2 % before S54); S53
// 16.5 % in / 27.9 % out (58.9 % before S54), S54 21.3 % in / 34.1 % out (factor 2.74 without it, 1.98 without S53:
// the two sources pull apart — further since the rows state their transformer implementation and S54 its
// --timing-log-level 2, which made each source's own rows more consistent: in sample 17.6 → 16.5 % and 23.8 → 21.3 %,
// out of sample 23.4 → 27.9 % and 30.4 → 34.1 %); splits tp1 ↔ tp2-4 15.4 % / 20.6 %, pp1 ↔ pp2-4 16.5 % / 17.9 %,
// DGX H100 ↔ A100 + GB200 18.7 % / 21.9 %, Transformer Engine ↔ local spec 17.8 % / 14.0 %, deterministic ↔ not
// 17.5 % / 20.0 % out of sample. Asserted:
//   - mean over sources of the out-of-sample error ≤ 10 % (9.3 %);
//   - the host-bound sources: S53 ≥ 60 host-bound rows and ≤ 26 % out of sample (22.9 %), S54 ≥ 25 and ≤ 24 %
//     (20.8 %), S56 ≥ 65 and ≤ 21 % (18.5 %);
//   - every other source: out of sample ≤ 35 % (was 45 % while the MI300-class rows ran the mi300x preset's own
//     0.70 sustained fraction: S50 43 %), no host-bound row, and leaving it out moves its error by ≤ 12 points (S20
//     and S04 each set most of their stack's sustained fraction — without them Megatron 0.73, PyTorch 0.635 — and
//     move most, 8 and 7 points);
//   - within S53: each group predicted with the factor fitted on the other group ≤ 30 % and ≤ 12 points above the
//     group's own fit.
#include "cross_validation.hpp"

#include <doctest/doctest.h>

#include <cstdio>

using namespace parsim;
using namespace parsim::validation;

TEST_CASE("cross-validation: out-of-sample error per source within the bounds reached") {
  std::vector<PublishedRun> all;
  for (const std::string& f : cv_data_files())
    for (auto& r : load_published_runs(f)) all.push_back(std::move(r));
  std::vector<CvRow> rows = cv_rows(all);
  mark_host_bound(rows);
  const CvResult cv = cross_validate(rows);
  std::printf("source  rows  in-sample  out-of-sample\n");
  for (const CvSource& s : cv.sources)
    std::printf("%-6s %5d %9.1f%% %13.1f%%\n", s.source.c_str(), s.rows, 100 * s.in_sample, 100 * s.out_of_sample);
  std::printf("mean         %9.1f%% %13.1f%%\n", 100 * cv.mean_in, 100 * cv.mean_out);
  CHECK(cv.sources.size() >= 26);
  // Issue 9 item 5 asks for ≤ 8 % out of sample; reached 9.7 % (8.7 % in sample, 490 rows, 27 sources with S58) — 9.9 %
  // over 26 sources (487 rows) — since torchtitan's rows
  // state their per-op checkpointing (--recompute op) and fused RMSNorm and S09 gained its three per-op rows (10.3 %
  // before, since the Blackwell GEMM constants came from XLA's measured B200 sweep; 10.8 % before that); 9.4 % since
  // the legacy program's kernels take the Megatron fraction and Megatron's softmax fallback is priced: held at 10.0 %
  // against regressions (10.5 % before).
  CHECK(cv.mean_out <= 0.100);
  for (const CvSource& s : cv.sources) {
    CAPTURE(s.source);
    if (s.source == "S53") {
      // 25.1 % since S54's rope test (L0019) states its --no-rope-fusion (2026-12): with S53 left out, Megatron-Core's
      // host factor is set by S54's ten 2023 rows (and six GB200 fp8 rows), and L0019's unfused RoPE — priced within
      // 1 ms of what it measurably adds over its twin L0018 at S53's factor — lowers that fit 2.08 → 1.92.
      CHECK(s.host_bound_rows >= 60);
      CHECK(s.out_of_sample <= 0.26);
      continue;
    }
    if (s.source == "S54") {
      CHECK(s.host_bound_rows >= 25);
      CHECK(s.out_of_sample <= 0.24);  // 21.5 % (29 % bound before session 20)
      continue;
    }
    if (s.source == "S56") {
      // 69 of 80 rows host-bound since the PyTorch stack's recompute early stop lowered the PyTorch fraction the legacy
      // stack's kernels share (0.780 -> 0.760: longer GPU time, one row fewer moves > 10 % between host factors 1 and 3).
      CHECK(s.host_bound_rows >= 65);
      CHECK(s.out_of_sample <= 0.21);  // 18.5 % since the softmax fallback (27 % bound before session 20)
      continue;
    }
    // The GB200 fp8 rows with 12 virtual stages at tp4 / tp8 (S41 B0007, B0012; S43 B0028, B0029, B0034, B0035) sit at
    // the edge of host-bound since Megatron-Core DDP's forward pre-hooks are priced (costs/host.cpp layer_inventory):
    // their Grace hosts issue a layer's forward in about its GPU time, so the prediction moves 10–15 % between host
    // factors 1 and 3 and they join the host factor's fit. No other source has a host-bound row.
    CHECK(s.host_bound_rows <= (s.source == "S41" || s.source == "S43" ? 4 : 0));
    CHECK(s.out_of_sample <= 0.35);
    CHECK(s.out_of_sample - s.in_sample <= 0.12);
  }
  const std::vector<CvSplit> splits = host_bound_splits(rows);
  CHECK(splits.size() == 5);
  for (const CvSplit& sp : splits) {
    CAPTURE(sp.name);
    std::printf("%-18s %-32s %5d rows: factor %.3f, %.1f%% in sample, %.1f%% with the other group's factor\n",
                sp.name.c_str(), sp.group_a.c_str(), sp.rows_a, sp.fit_a, 100 * sp.in_a, 100 * sp.out_a);
    std::printf("%-18s %-32s %5d rows: factor %.3f, %.1f%% in sample, %.1f%% with the other group's factor\n", "",
                sp.group_b.c_str(), sp.rows_b, sp.fit_b, 100 * sp.in_b, 100 * sp.out_b);
    CHECK(sp.out_a <= 0.30);
    CHECK(sp.out_b <= 0.30);
    CHECK(sp.out_a - sp.in_a <= 0.12);
    CHECK(sp.out_b - sp.in_b <= 0.12);
  }
  // A GPU generation none of whose runs set a constant (leave_generation_out): every constant refitted without the
  // generation's rows, its GPU-bound rows predicted, mean over its sources. Measured on this commit (in / out of
  // sample): Ampere 133 rows of 12 sources 10.2 / 10.9 % (the PyTorch fraction falls 0.760 → 0.715 without llm-foundry's
  // A100 rows), Hopper 157 rows of 11 sources 6.2 / 6.5 %, Blackwell 37 rows of 5 sources 8.7 / 8.9 %, CDNA3 3 rows
  // of 2 sources 7.8 / 8.2 % (before the legacy program's kernels took the Megatron fraction: 10.7 / 11.8, 6.1 / 6.6,
  // 8.6 / 8.9, 8.0 / 8.0 %). Asserted: each ≤ 13 % out of sample and ≤ 2 points above its in-sample
  // figure — the constants shared by every GPU carry to a generation that set none of them. (The GB300 rows, a GPU
  // nothing was ever fitted to, are test_validation's: 19 % — see tests/data/validation/README.md.)
  const std::vector<CvGeneration> gens = leave_generation_out(rows, cv.all);
  CHECK(gens.size() == 4);
  for (const CvGeneration& g : gens) {
    CAPTURE(g.name());
    std::printf("%-30s %5d rows, %2d sources: %.1f%% in sample, %.1f%% left out\n", g.name(), g.rows, g.sources,
                100 * g.in_sample, 100 * g.out_of_sample);
    CHECK(g.rows >= 3);
    CHECK(g.out_of_sample <= 0.13);
    CHECK(g.out_of_sample - g.in_sample <= 0.02);
  }
  // What `parsim predict` reports for a GPU-bound step on a generation with no run here (hardware/accuracy.json
  // new_generation): the mean of these out-of-sample figures (Ampere 10.9, Hopper 6.4, Blackwell 9.0, CDNA3 8.2 % →
  // 34.5 / 4 = 8.6 %), within half a point; and accuracy.json's validated_generations are exactly the generations
  // measured here.
  double newgen = 0;
  for (const CvGeneration& g : gens) newgen += g.out_of_sample / static_cast<double>(gens.size());
  std::printf("accuracy regime new_generation: mean of %zu generations left out %.1f%% (accuracy.json: %.1f%%)\n",
              gens.size(), 100 * newgen, expected_error(AccuracyRegime::NewGeneration).typical_pct);
  CHECK(std::fabs(100 * newgen - expected_error(AccuracyRegime::NewGeneration).typical_pct) <= 0.5);
  for (GpuArch a : {GpuArch::Ampere, GpuArch::Hopper, GpuArch::Blackwell, GpuArch::CDNA3, GpuArch::CDNA4}) {
    CAPTURE(generation_key(a));
    const bool measured = std::any_of(gens.begin(), gens.end(), [&](const CvGeneration& g) { return g.arch == a; });
    CHECK(generation_validated(a) == measured);
  }
  // The constants fitted on every row are the ones calibration.json holds (to the search grid, 0.005).
  for (const CvConstant& c : cv_constants()) {
    CAPTURE(c.name);
    CHECK(std::fabs(cv.all.*c.field - default_fitted_constants().*c.field) <= kGridStep + 1e-9);
  }
  // The expected error `parsim predict` reports (hardware/accuracy.json, sim/step/accuracy.hpp) is what this
  // cross-validation measures by regime: each row in the regime a prediction of it gets, the mean over sources of each
  // source's mean out-of-sample |error| over those rows (regime_errors). A figure more than half a point from the
  // measured one fails: the file is regenerated from the printed lines when the model moves. The mixture-of-experts
  // regime has no cross-validated row (MoE runs are held out, test_validation checks its figure against moe.csv).
  for (const CvRegime& g : regime_errors(rows, cv)) {
    CAPTURE(regime_key(g.regime));
    std::printf("accuracy regime %-16s %4d rows, %2d sources: %.1f%% out of sample (hardware/accuracy.json: %.1f%%)\n",
                regime_key(g.regime), g.rows, g.sources, 100 * g.out_of_sample, expected_error(g.regime).typical_pct);
    if (g.regime == AccuracyRegime::Moe) {
      CHECK(g.rows == 0);
      continue;
    }
    CHECK(g.sources >= 3);
    CHECK(std::fabs(100 * g.out_of_sample - expected_error(g.regime).typical_pct) <= 0.5);
  }
}

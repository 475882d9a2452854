// Cross-validation (ctest label `validation`): the fitted constants of hardware/calibration.json refitted leaving one
// source of tests/data/validation out at a time (cross_validation.hpp), each source predicted out of sample.
//
// Constants refitted (hardware/calibration.json, one value per stack or one in all, shared by every GPU): the in-training
// sustained fraction of each stack, fp8's in-training fraction, the causal-attention factor and the Megatron host factor.
//
// Bounds asserted — what the model reaches today, NOT the issue-9 target (out-of-sample mean ≤ 8 %, no source
// > 15 %), which is not reached: the sources parsim misses (S53 Megatron-LM CI 19 % in sample, S30/S52 small
// Megatron-DeepSpeed / nanoGPT runs ≈ 28 %, S50 MI325X FSDP2 ≈ 20 %) are off for reasons no refit of a shared constant
// repairs (host-bound tiny models, legacy kernels, MI300-class GEMM/attention curves without a measured fp8 ceiling).
// Measured on this commit (parsim_accuracy --cv): see README "In sample and out of sample".
//   - mean over sources of the out-of-sample error ≤ 15 %;
//   - no source's out-of-sample error above 35 % (was 45 % while the MI300-class rows ran the mi300x preset's own
//     0.70 sustained fraction and the PyTorch-native kernels: S50 43 %; now ≈ 30 % worst, S53);
//   - the constants generalise: leaving out a source moves no source's error by more than 12 points. S20 (NVIDIA's
//     H100 NeMo runs, 76 rows) and S04 (llm-foundry, 108 rows) each set most of their stack's sustained fraction
//     (without them: Megatron 0.73, PyTorch 0.65) and S53 alone sets the host factor, so those three move most.
#include "cross_validation.hpp"

#include <doctest/doctest.h>

#include <cstdio>

using namespace parsim;
using namespace parsim::validation;

TEST_CASE("cross-validation: out-of-sample error per source within the bounds reached") {
  std::vector<PublishedRun> all;
  for (const std::string& f : cv_data_files())
    for (auto& r : load_published_runs(f)) all.push_back(std::move(r));
  const std::vector<CvRow> rows = cv_rows(all);
  const CvResult cv = cross_validate(rows);
  std::printf("source  rows  in-sample  out-of-sample\n");
  for (const CvSource& s : cv.sources)
    std::printf("%-6s %5d %9.1f%% %13.1f%%\n", s.source.c_str(), s.rows, 100 * s.in_sample, 100 * s.out_of_sample);
  std::printf("mean         %9.1f%% %13.1f%%\n", 100 * cv.mean_in, 100 * cv.mean_out);
  CHECK(cv.sources.size() >= 20);
  CHECK(cv.mean_out <= 0.15);
  CHECK(cv.max_out <= 0.35);
  for (const CvSource& s : cv.sources) {
    CAPTURE(s.source);
    CHECK(s.out_of_sample - s.in_sample <= 0.12);
  }
  // The constants fitted on every row are the ones calibration.json holds (to the search grid, 0.005).
  for (const CvConstant& c : cv_constants()) {
    CAPTURE(c.name);
    CHECK(std::fabs(cv.all.*c.field - default_fitted_constants().*c.field) <= kGridStep + 1e-9);
  }
}

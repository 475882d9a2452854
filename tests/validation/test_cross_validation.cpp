// Cross-validation (ctest label `validation`): the fitted constants of hardware/calibration.json refitted leaving one
// source of tests/data/validation out at a time (cross_validation.hpp), each source predicted out of sample.
//
// Bounds asserted — what the model reaches today, NOT the issue-9 target (out-of-sample mean ≤ 8 %, no source
// > 15 %), which is not reached: the sources parsim misses (S49/S50 MI300X +33–43 %, S52/S30 small Megatron-DeepSpeed
// runs ≈ 30 %) are off for reasons no refit of the wired constant repairs (per-GPU sustained fractions still in the
// presets, unfused-attention and legacy-stack kernels, MI300X curves).
// The host factor is fitted only on the rows that identify it (cross_validation.hpp: the prediction moves > 10 %
// between factors 1 and 3). Those are 70 of S53's 73 rows and no other source's, so leaving S53 out leaves the factor
// unidentified: it falls back to 1 (the unfitted micro-benchmark costs) and S53 is predicted at 59 % — a second
// host-bound source is what the data lacks. Within S53 the factor is cross-validated across configurations instead
// (host_bound_splits: fit on one group, predict the other).
// Measured on this commit (parsim_accuracy --cv): mean over 24 sources 13.9 % in sample, 15.6 % out of sample; S53
// 18.2 % in sample; splits tp1 ↔ tp2-4 17.2 % / 19.7 %, pp1 ↔ pp2-4 18.7 % / 19.9 %, DGX H100 ↔ A100 + GB200 21.2 % /
// 26.4 % out of sample.
//   - mean over sources of the out-of-sample error ≤ 16 %;
//   - every source but the one that alone identifies the host factor: out-of-sample ≤ 45 %, and leaving it out moves
//     its error by ≤ 2 points (the other sources do not set the factor);
//   - within S53: each group predicted with the factor fitted on the other group ≤ 30 %, and ≤ 12 points above the
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
  CHECK(cv.sources.size() >= 20);
  CHECK(cv.mean_out <= 0.16);
  for (const CvSource& s : cv.sources) {
    CAPTURE(s.source);
    if (s.source == "S53") {
      CHECK(s.host_bound_rows >= 60);
      continue;
    }
    CHECK(s.host_bound_rows == 0);
    CHECK(s.out_of_sample <= 0.45);
    CHECK(s.out_of_sample - s.in_sample <= 0.02);
  }
  const std::vector<CvSplit> splits = host_bound_splits(rows);
  CHECK(splits.size() == 3);
  for (const CvSplit& s : splits) {
    CAPTURE(s.name);
    std::printf("%-18s %-32s %5d rows: factor %.3f, %.1f%% in sample, %.1f%% with the other group's factor\n",
                s.name.c_str(), s.group_a.c_str(), s.rows_a, s.fit_a, 100 * s.in_a, 100 * s.out_a);
    std::printf("%-18s %-32s %5d rows: factor %.3f, %.1f%% in sample, %.1f%% with the other group's factor\n", "",
                s.group_b.c_str(), s.rows_b, s.fit_b, 100 * s.in_b, 100 * s.out_b);
    CHECK(s.out_a <= 0.30);
    CHECK(s.out_b <= 0.30);
    CHECK(s.out_a - s.in_a <= 0.12);
    CHECK(s.out_b - s.in_b <= 0.12);
  }
  // The constant fitted on every row is the one calibration.json holds (to its 3 digits).
  CHECK(cv.all.host_megatron == doctest::Approx(default_fitted_constants().host_megatron).epsilon(0.01));
}

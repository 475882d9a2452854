// validate: the measured per-step figures and the side-by-side output.
#include "helpers.hpp"

#include "sim/measure/validate.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace parsim;

TEST_CASE("measured per-step figures of a real trace") {
  ProfileOptions opt;
  opt.steps = true;
  const auto report = profile_traces({measure_test::data("profiles/hta-nccl-meta-2rank-a100/nccl_data.json.gz")}, opt);
  const auto v = measure_for_validation(report);
  const auto& r = report.ranks[0];
  // ProfilerStep#4 lasts 4458676639230.258 − 4458676416788.066 = 222,442.192 µs and #5 4458676859018.256 −
  // 4458676639291.351 = 219,726.905 µs (trace annotations); #6, the last, is left out as HTA does → mean 221,084.5485 µs.
  CHECK(v.steps == 2);
  CHECK(v.measured.step_time_s == doctest::Approx(221084.5485e-6).epsilon(1e-9));
  // Per step = the step windows' totals over the 2 steps.
  CHECK(v.measured.compute_s == doctest::Approx(r.compute_s / 2));
  CHECK(v.measured.comm_s == doctest::Approx(r.comm_s / 2));
  CHECK(v.measured.exposed_comm_s == doctest::Approx(r.exposed_comm_s / 2));
  // idle = step − compute − exposed comm − exposed memcpy (per step)
  CHECK(v.measured.idle_s ==
        doctest::Approx(v.measured.step_time_s - (r.compute_s + r.exposed_comm_s + r.exposed_memcpy_s) / 2));
  CHECK(v.measured.memory_peak_gib < 0);  // no [memory] events in this trace
}

TEST_CASE("side by side: relative_error = (predicted − measured) / measured, memory only when both have it") {
  Validation v;
  v.measured = {0.200, 0.100, 0.050, 0.020, 0.080, 10.0};
  v.predicted = {0.180, 0.110, 0.040, 0.030, 0.040, 12.0};
  auto j = nlohmann::json::parse(validation_json(v));
  // step: (0.18 − 0.2)/0.2 = −0.1; compute (0.11 − 0.1)/0.1 = 0.1; comm −0.2; exposed 0.5; idle −0.5; memory 0.2
  CHECK(j["relative_error"]["step_time_s"].get<double>() == doctest::Approx(-0.1));
  CHECK(j["relative_error"]["compute_s"].get<double>() == doctest::Approx(0.1));
  CHECK(j["relative_error"]["comm_s"].get<double>() == doctest::Approx(-0.2));
  CHECK(j["relative_error"]["exposed_comm_s"].get<double>() == doctest::Approx(0.5));
  CHECK(j["relative_error"]["idle_s"].get<double>() == doctest::Approx(-0.5));
  CHECK(j["relative_error"]["memory_peak_gib"].get<double>() == doctest::Approx(0.2));
  for (const char* side : {"predicted", "measured", "relative_error"})
    for (const char* key : {"step_time_s", "compute_s", "comm_s", "exposed_comm_s", "idle_s"}) CHECK(j[side].contains(key));
  v.measured.memory_peak_gib = -1;  // the trace has no [memory] events
  j = nlohmann::json::parse(validation_json(v));
  CHECK_FALSE(j["measured"].contains("memory_peak_gib"));
  // A zero measurement has no relative error.
  v.measured.exposed_comm_s = 0;
  j = nlohmann::json::parse(validation_json(v));
  CHECK(j["relative_error"]["exposed_comm_s"].is_null());
  const auto table = validation_table(v);
  CHECK(table.find("predicted") != std::string::npos);
  CHECK(table.find("measured") != std::string::npos);
}

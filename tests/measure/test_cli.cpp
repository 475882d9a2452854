// CLI-level checks of profile / calibrate / validate through the parsim binary: exit codes, one-line errors, JSON.
#include "helpers.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <sys/wait.h>

namespace {
struct Run {
  int status = -1;
  std::string out, err;
};

Run run(const std::string& args) {
  const auto err_path = (measure_test::temp_dir() / "stderr.txt").string();
  const std::string cmd = std::string(PARSIM_BIN) + " " + args + " 2>" + err_path;
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.err = measure_test::read_bytes(err_path);
  return r;
}

void check_error_line(const Run& r) {
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK(r.err.rfind("parsim: error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.out.empty());
}

const std::string kNccl = measure_test::data("profiles/hta-nccl-meta-2rank-a100/nccl_data.json.gz");
}  // namespace

TEST_CASE("profile: JSON per rank with the contract's keys") {
  const auto r = run("profile " + kNccl + " --format json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["ranks"].size() == 1);
  for (const char* key : {"rank", "total_s", "compute_s", "comm_s", "exposed_comm_s", "idle_s", "memcpy_s"})
    CHECK(j["ranks"][0].contains(key));
  CHECK(j.contains("collectives"));
  // TraceLens: total 660.551 ms (REF_tracelens_gpu_timeline.json)
  CHECK(j["ranks"][0]["total_s"].get<double>() == doctest::Approx(0.660551).epsilon(1e-4));
  const auto t = run("profile " + kNccl);
  CHECK(t.status == 0);
  CHECK(t.out.find("compute") != std::string::npos);
}

TEST_CASE("profile: broken and empty inputs exit 2 with one line") {
  const std::string bytes = measure_test::read_bytes(kNccl);
  check_error_line(run("profile " + measure_test::write_text("cli_trunc.json.gz", bytes.substr(0, bytes.size() / 2))));
  check_error_line(run("profile " + measure_test::write_text("cli_cpu.json",
                                                             R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":0,"dur":1}]})")));
  check_error_line(run("profile /nonexistent/trace.json"));
  check_error_line(run("profile " + kNccl + " --format xml"));
}

TEST_CASE("calibrate: JSON keys, --out, bad input") {
  const auto table = measure_test::data("nccl/gcp_a3mega_2node_16xH100_all_reduce.txt");
  const auto r = run("calibrate " + table + " --format json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"collective", "ranks", "alpha_us", "busbw_gbytes_per_s", "r2", "points"}) CHECK(j.contains(key));
  CHECK(j["ranks"] == 16);
  const auto out = (measure_test::temp_dir() / "cli_hw.json").string();
  const auto w = run("calibrate " + table + " --out " + out);
  CHECK(w.status == 0);
  // The written file is accepted by --gpu (predict parses it and exits 0).
  const auto p = run("predict --model llama2-7b --plan tp8dp2 --gpu " + out + " --format json");
  CHECK(p.status == 0);
  check_error_line(run("calibrate " + measure_test::write_text("cli_junk.txt", "no table\n")));
}

TEST_CASE("calibrate on a GEMM table: JSON keys, --out into predict, bad input") {
  // tests/data/hardware/xla_matmul_perf_table.csv: XLA's measured bf16 sweeps of H100, B200 and MI355X (the gpu
  // column names the preset; the fit's figures are test_calibrate_gemm's).
  const auto table = measure_test::data("hardware/xla_matmul_perf_table.csv");
  const auto r = run("calibrate " + table + " --device b200 --format json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"kind", "device", "gpu", "points_used", "before", "fitted", "points"}) CHECK(j.contains(key));
  CHECK(j["kind"] == "gemm");
  CHECK(j["gpu"] == "b200");
  for (const char* key : {"gemm_ceiling", "gemm_k_half", "mean_abs_log_error"}) CHECK(j["fitted"].contains(key));
  const auto out = (measure_test::temp_dir() / "cli_gemm_hw.json").string();
  REQUIRE(run("calibrate " + table + " --device b200 --min-gflop 100 --out " + out).status == 0);
  const auto p = run("predict --model llama3-70b --plan tp8pp4dp2 --seq 8192 --gbs 64 --gpu " + out + " --format json");
  CHECK(p.status == 0);
  check_error_line(run("calibrate " + table));                       // three devices, none picked
  check_error_line(run("calibrate " + table + " --device gb300"));   // not in the table
  check_error_line(run("calibrate " + table + " --device b200 --min-gflop 1e6"));  // no shape left to fit
  check_error_line(run("calibrate " + table + " --device b200 --ranks 8"));        // a collective benchmark's flag
  check_error_line(run("calibrate " + measure_test::write_text("cli_gemm_nogpu.csv", "m,n,k,tflops\n4096,4096,4096,700\n")));
  check_error_line(run("calibrate " + measure_test::write_text("cli_gemm_bad.csv", "m,n,k,tflops\n4096,x,4096,700\n")));
  check_error_line(run("calibrate " + measure_test::data("nccl/gcp_a3mega_2node_16xH100_all_reduce.txt") + " --device b200"));
  check_error_line(run("calibrate " + measure_test::data("nccl/gcp_a3mega_2node_16xH100_all_reduce.txt") + " --precision fp8"));
  check_error_line(run("calibrate " + table + " --device b200 --precision fp4"));
  const auto f8 = run("calibrate " + measure_test::data("hardware/xla_matmul_perf_table_fp8.csv") +
                      " --device b200 --precision fp8 --format json");
  REQUIRE(f8.status == 0);
  CHECK(nlohmann::json::parse(f8.out)["precision"] == "fp8");
}

TEST_CASE("validate: both columns and relative errors; missing flags exit 2") {
  const auto r = run("validate --profile " + kNccl + " --model llama2-7b --plan dp2 --gpu a100 --format json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* side : {"predicted", "measured", "relative_error"})
    for (const char* key : {"step_time_s", "compute_s", "comm_s", "exposed_comm_s", "idle_s"}) CHECK(j[side].contains(key));
  const double p = j["predicted"]["step_time_s"], m = j["measured"]["step_time_s"];
  CHECK(j["relative_error"]["step_time_s"].get<double>() == doctest::Approx((p - m) / m));
  // The step-time error beside the regime's expected error (hardware/accuracy.json): llama2-7b dp2 on A100 at the
  // default batch is a GPU-bound dense Megatron step; the note says whether |error| is within that figure.
  const auto& e = j["prediction"]["expected_error"];
  CHECK(e["regime"] == "megatron");
  const double typical = e["typical_abs_error_pct"];
  const bool within = std::fabs(100 * (p - m) / m) <= typical;
  bool noted = false;
  for (const auto& n : j["notes"])
    noted = noted || n.get<std::string>().find(within ? "is within the" : "is beyond the") != std::string::npos;
  CHECK(noted);
  check_error_line(run("validate --profile " + kNccl + " --plan dp2"));
}

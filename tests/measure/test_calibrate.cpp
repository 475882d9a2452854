// calibrate: nccl-tests parsing, the α–β fits, and the acceptance bounds on the shared benchmark tables.
#include "helpers.hpp"

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"
#include "sim/measure/calibrate.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>

using namespace parsim;

namespace {
// A synthetic all_reduce_perf output: 8 ranks on 2 hosts, srun prefixes, two blocks, in-place columns, footer.
std::string synthetic_table(double alpha_us, double busbw_GBps, int ranks) {
  const double f = 2.0 * (ranks - 1) / ranks;  // nccl-tests all-reduce bus factor
  std::string s = "0: # nThread 1 nGpus 1 minBytes 1024 maxBytes 1073741824 step: 4(factor)\n0: #\n";
  s += "0: # Using devices\n";
  for (int r = 0; r < ranks; ++r)
    s += "0: #  Rank " + std::to_string(r) + " Group  0 Pid  " + std::to_string(1000 + r) + " on " +
         (r < ranks / 2 ? "node-a" : "node-b") + " device  " + std::to_string(r % (ranks / 2)) +
         " [0x1b] NVIDIA H100 80GB HBM3\n";
  s += "0: #\n0: #                                                              out-of-place                       in-place\n";
  s += "0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  s += "0: #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
  for (double bytes = 1024; bytes <= 1073741824.0; bytes *= 4) {
    const double t_us = alpha_us + bytes * f / (busbw_GBps * 1e9) * 1e6;  // t = α + S·f/busbw
    const double algbw = bytes / (t_us * 1e-6) / 1e9;
    s += "0: " + std::to_string(static_cast<long long>(bytes)) + " " + std::to_string(static_cast<long long>(bytes / 4)) +
         " float sum -1 " + fmt_fixed(t_us, 3) + " " + fmt_fixed(algbw, 4) + " " + fmt_fixed(algbw * f, 4) + " 0 " +
         fmt_fixed(t_us, 3) + " " + fmt_fixed(algbw, 4) + " " + fmt_fixed(algbw * f, 4) + " 0\n";
  }
  s += "0: # Out of bounds values : 0 OK\n0: # Avg bus bandwidth    : 123.456\n0: #\n";
  return s;
}
}  // namespace

TEST_CASE("weighted least squares on relative error recovers an exact alpha-beta line") {
  // t = 20 µs + S / 100 GB/s at S = 1 KiB … 1 GiB
  std::vector<std::pair<double, double>> pts;
  for (double s = 1024; s <= 1073741824.0; s *= 2) pts.push_back({s, 20e-6 + s / 100e9});
  const auto [a, x] = fit_relative_wls(pts);
  CHECK(a == doctest::Approx(20e-6).epsilon(1e-9));
  CHECK(x == doctest::Approx(1.0 / 100e9).epsilon(1e-9));
}

TEST_CASE("parsing a pasted nccl-tests run: srun prefixes, device list, out/in-place columns, footer") {
  const auto text = synthetic_table(25.0, 300.0, 8);
  const auto f = parse_nccl_tests(text, "synthetic");
  REQUIRE(f.blocks.size() == 1);
  const auto& b = f.blocks[0];
  // sizes 1 KiB · 4^k up to 1 GiB: 1, 4, 16, 64, 256 KiB, 1, 4, 16, 64, 256 MiB, 1 GiB → 11 rows
  CHECK(b.rows.size() == 11);
  CHECK(b.collective == "all_reduce");  // "nThread … " names nothing; none named → default, flagged
  CHECK(b.collective_guessed);
  CHECK(b.avg_busbw_GBps == doctest::Approx(123.456));
  CHECK(f.device_ranks == 8);
  CHECK(f.hosts.size() == 2);
  CHECK(f.gpu_name == "NVIDIA H100 80GB HBM3");
  CHECK(b.rows[0].bytes == 1024);
  CHECK(b.rows[0].ip_time_us > 0);
}

TEST_CASE("an exact alpha-beta table is fitted exactly, with ranks and nodes from the device list") {
  const auto f = parse_nccl_tests("# all_reduce_perf\n" + synthetic_table(25.0, 300.0, 8), "synthetic");
  const auto c = calibrate_block(f, 0, {});
  CHECK(c.ranks == 8);
  CHECK(c.nodes == 2);
  CHECK_FALSE(c.intra_node);  // 2 hosts: the inter-node tier was measured
  // Times were written with 3 decimals, so α and busbw come back to ~1e-4 relative.
  CHECK(c.alpha_s == doctest::Approx(25e-6).epsilon(1e-3));
  CHECK(c.busbw_Bps == doctest::Approx(300e9).epsilon(1e-3));
  CHECK(c.r2 == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(c.max_error < 0.001);
  CHECK(c.failures_bytes.empty());
  CHECK(c.alpha_beta_fails_bytes.empty());
}

TEST_CASE("protocol regimes: a table with a latency jump is fitted by two lines") {
  // Regime A (LL-like): 10 µs + S/20 GB/s; regime B (Simple-like): 60 µs + S/200 GB/s; NCCL takes the faster.
  // They cross where 10 + S/20e3 = 60 + S/200e3 (S in bytes, t in µs): S = 50 / (1/20e3 − 1/200e3) ≈ 1.11 MB.
  std::string s = "# all_reduce_perf\n#  size  count  type  redop  root  time  algbw  busbw  #wrong\n";
  for (double bytes = 8; bytes <= 4294967296.0; bytes *= 2) {
    const double ta = 10 + bytes / 20e3, tb = 60 + bytes / 200e3;
    s += std::to_string(static_cast<long long>(bytes)) + " 1 float sum -1 " + fmt_fixed(std::min(ta, tb), 4) +
         " 0 0 0\n";
  }
  CalibrateOptions opt;
  opt.ranks = 2;  // bus factor 2(n−1)/n = 1: busbw equals the line's bandwidth
  const auto c = calibrate_block(parse_nccl_tests(s, "regimes"), 0, opt);
  REQUIRE(c.regimes.size() >= 2);
  CHECK(c.alpha_s == doctest::Approx(10e-6).epsilon(0.01));
  CHECK(c.busbw_Bps == doctest::Approx(200e9).epsilon(0.01));
  CHECK(c.max_error < 0.01);
  // The single α–β line (10 µs, 200 GB/s) misses the middle, where regime A is 6× slower in bandwidth.
  CHECK_FALSE(c.alpha_beta_fails_bytes.empty());
}

TEST_CASE("several blocks; the all-reduce one is primary; bad tables are refused") {
  std::string two = "# Collective test starting: all_gather_perf\n" + synthetic_table(30, 200, 4) +
                    "# Collective test starting: all_reduce_perf\n" + synthetic_table(25, 300, 4);
  // synthetic_table names no collective itself; the "Collective test starting" lines do.
  const auto f = parse_nccl_tests(two, "two");
  REQUIRE(f.blocks.size() == 2);
  CHECK(f.blocks[0].collective == "all_gather");
  CHECK(f.blocks[1].collective == "all_reduce");
  CHECK(primary_block(f) == 1);
  CHECK_THROWS_AS(parse_nccl_tests("hello\nno table here\n", "junk"), InputError);
  // One row only: no slope to fit.
  const auto one = parse_nccl_tests("# all_reduce_perf\n#  size count type redop root time algbw busbw #wrong\n"
                                    "1024 256 float sum -1 20.0 0.05 0.09 0\n",
                                    "one");
  CHECK_THROWS_AS(calibrate_block(one, 0, {}), InputError);
}

TEST_CASE("the shared benchmark tables: alpha within 3x of the smallest message, every size >= 64 MiB within 15 %") {
  struct Case {
    const char* file;
    int ranks, nodes;
  };
  // Rank and node counts from each table's header comment (shared/data/profiles/nccl-tests README): AWS p4de and p5,
  // GCP A3 Mega: 2 nodes × 8 GPUs; ml-engineering H200: 1 node × 8 GPUs.
  for (const Case& k : {Case{"aws_p4de_2node_16xA100-80GB_all_reduce.txt", 16, 2},
                        Case{"aws_p5_2node_16xH100_all_reduce.txt", 16, 2},
                        Case{"gcp_a3mega_2node_16xH100_all_reduce.txt", 16, 2},
                        Case{"mlengineering_1node_8xH200_torch_all_reduce.txt", 8, 1}}) {
    INFO(k.file);
    const auto text = read_file_text(measure_test::data(std::string("nccl/") + k.file), "table");
    const auto f = parse_nccl_tests(text, k.file);
    const auto c = calibrate_block(f, primary_block(f), {});
    CHECK(c.collective == "all_reduce");
    CHECK(c.ranks == k.ranks);
    CHECK(c.nodes == k.nodes);
    CHECK(c.intra_node == (k.nodes == 1));
    const auto& smallest = c.points.front();
    CHECK(c.alpha_s <= 3 * smallest.measured_s);
    CHECK(c.alpha_s >= smallest.measured_s / 3);
    for (const auto& p : c.points) {
      if (p.bytes < 64.0 * 1024 * 1024) continue;
      INFO(p.bytes << " B: measured " << p.measured_s * 1e6 << " us, predicted " << p.predicted_s * 1e6);
      CHECK(std::fabs(p.predicted_s - p.measured_s) <= 0.15 * p.measured_s);
    }
    CHECK(c.r2 > 0.99);
    // The fitted bus bandwidth is the large-message one: within 10 % of the largest busbw the table measured.
    CHECK(c.busbw_Bps / 1e9 == doctest::Approx(c.peak_busbw_GBps).epsilon(0.10));
    // The JSON carries the contract's keys.
    const auto j = nlohmann::json::parse(calibration_json({c}, 0));
    for (const char* key : {"collective", "ranks", "alpha_us", "busbw_gbytes_per_s", "r2", "points"}) CHECK(j.contains(key));
    CHECK(j["points"][0].contains("measured_us"));
    CHECK(j["points"][0].contains("predicted_us"));
  }
}

TEST_CASE("GPU names map to presets") {
  CHECK(preset_for_gpu_name("NVIDIA H100 80GB HBM3") == "h100");
  CHECK(preset_for_gpu_name("NVIDIA A100-SXM4-80GB") == "a100-80gb");
  CHECK(preset_for_gpu_name("A100-SXM4-40GB") == "a100-40gb");
  CHECK(preset_for_gpu_name("AMD Instinct MI300X") == "mi300x");
  CHECK(preset_for_gpu_name("Tesla V100") == "");
}

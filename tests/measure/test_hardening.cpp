// Issue 12 regressions in sim/measure: each case is a crash, hang, undefined behaviour or wrong answer that a
// careless user, the bad-input sweep or a fuzzer found, kept so it cannot come back.
#include "helpers.hpp"

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"
#include "sim/measure/calibrate.hpp"
#include "sim/measure/kineto.hpp"
#include "sim/measure/profile.hpp"

#include "tests/support/errors.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

using namespace parsim;
using measure_test::TraceBuilder;

namespace {

using parsim::test::contains;
using parsim::test::error_of;

const std::string kHeader = "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n";

// An exact two-regime all-reduce table of `rows` sizes from 8 B up (×1.01 each), as in the protocol-regime test:
// regime A 10 µs + S/20 GB/s, regime B 60 µs + S/200 GB/s, the faster of the two (bus factor 1 with --ranks 2).
std::string regime_table(int rows) {
  std::string s = "# all_reduce_perf\n" + kHeader;
  double bytes = 8;
  for (int i = 0; i < rows; ++i, bytes = std::ceil(bytes * 1.01)) {
    const double t = std::min(10 + bytes / 20e3, 60 + bytes / 200e3);
    s += std::to_string(static_cast<long long>(bytes)) + " 1 float sum -1 " + fmt_fixed(t, 6) + " 0 0 0 " +
         fmt_fixed(t, 6) + " 0 0 0\n";
  }
  return s;
}

}  // namespace

// ---- calibrate (nccl-tests text) ----------------------------------------------------------------------------------

TEST_CASE("one line of 60,000 spaces, digits or prefix characters does not overflow the stack") {
  // std::regex recursed once per character: ≥ 50k gave SIGSEGV. The scanner is a loop.
  for (const std::string& line : {std::string(60000, ' '), std::string(60000, '7'), "0:" + std::string(60000, ' '),
                                  "#  Rank " + std::string(60000, '1'), "[1," + std::string(60000, '2'),
                                  "# Avg bus bandwidth" + std::string(60000, ' ') + ":",
                                  "#  Rank 0 Group 0 Pid 1 on h device 0 [" + std::string(60000, 'x')}) {
    const auto msg = error_of([&] { parse_nccl_tests(line + "\n", "long.txt"); });
    CHECK(contains(msg, "long.txt: no nccl-tests result table found"));
  }
}

TEST_CASE("the regex-free scanner reads what the patterns read") {
  // srun and Open MPI prefixes, block quotes; a device list with two hosts; a GPU hint as a word only.
  const std::string text =
      "[1,0]<stdout>: # all_reduce_perf\n"
      "12: #  Rank  0 Group  0 Pid 1234 on host-a device  0 [0x1b] NVIDIA H100 80GB HBM3  \n"
      "12: #  Rank  1 Group  0 Pid 1235 on host-b device  1 [0x2c] NVIDIA H100 80GB HBM3\n"
      "> " + kHeader +
      "0: 1024 256 float sum -1 20.0 0.05 0.09 0 20.0 0.05 0.09 0\n"
      "0: 4096 1024 float sum -1 21.0 0.20 0.36 0 21.0 0.20 0.36 0\n"
      "0: # Avg bus bandwidth    : 0.2 \n";
  const auto f = parse_nccl_tests(text, "t");
  REQUIRE(f.blocks.size() == 1);
  CHECK(f.blocks[0].collective == "all_reduce");
  CHECK(f.blocks[0].rows.size() == 2);
  CHECK(f.blocks[0].rows[1].count == 1024);
  CHECK(f.blocks[0].avg_busbw_GBps == doctest::Approx(0.2));
  CHECK(f.device_ranks == 2);
  CHECK(f.hosts == std::vector<std::string>{"host-a", "host-b"});
  CHECK(f.gpu_name == "NVIDIA H100 80GB HBM3");  // trailing spaces trimmed, as (.*\S)\s*$ did
  // Without a device list, a GPU named in a comment: a word (MI300X, H100, L40S), not part of a hash (a759d54).
  const std::string body = kHeader + "1024 256 float sum -1 20.0 0.05 0.09 0\n4096 1024 float sum -1 21 0.2 0.36 0\n";
  CHECK(parse_nccl_tests("# commit a759d54 on mi300x nodes\n" + body, "t").text_gpu_hint == "mi300x");
  CHECK(parse_nccl_tests("# commit a759d54 ab100x H100s\n" + body, "t").text_gpu_hint.empty());
  CHECK(parse_nccl_tests("# 8x L40S, GB200 later\n" + body, "t").text_gpu_hint == "L40S");
  CHECK(parse_nccl_tests("# MI300XA then B200\n" + body, "t").text_gpu_hint == "B200");
}

TEST_CASE("a count or size that does not fit in 64 bits is an InputError naming it, not std::out_of_range") {
  const auto count = error_of([] {
    parse_nccl_tests(kHeader + "1024 9999999999999999999 float sum -1 20.0 0.05 0.09 0 20 0.05 0.09 0\n", "c.txt");
  });
  CHECK(count == "c.txt line 2: element count '9999999999999999999' does not fit in 64 bits");
  const auto size = error_of([] {
    parse_nccl_tests(kHeader + "99999999999999999999 4 float sum -1 20.0 0.05 0.09 0 20 0.05 0.09 0\n", "s.txt");
  });
  CHECK(size == "s.txt line 2: message size '99999999999999999999' is beyond 2^53 bytes");
  // Sizes stay below 2^53 so that they are exact in a double and in the JSON output's integers.
  CHECK_FALSE(error_of([] { parse_nccl_tests(kHeader + "9007199254740993 4 float sum -1 2 0 0 0\n", "s"); }).empty());
  const auto md = error_of([] { parse_nccl_tests("| payload | busbw | algbw |\n| 99999999999 GiB | 1 | 1 |\n", "m.md"); });
  CHECK(md == "m.md line 2: message size '99999999999 GiB' is beyond 2^53 bytes");
  const auto rank = error_of([] {
    parse_nccl_tests("#  Rank 99999999999 Group 0 Pid 1 on h device 0 [0x1] GPU\n" + kHeader, "r.txt");
  });
  CHECK(rank == "r.txt line 1: rank '99999999999' in the device list is beyond 16777216");
}

TEST_CASE("calibrate --ranks 2147483647 is an InputError, not signed overflow") {
  const auto f = parse_nccl_tests(regime_table(20), "t");
  CalibrateOptions opt;
  opt.ranks = 2147483647;
  CHECK(error_of([&] { calibrate_block(f, 0, opt); }) == "--ranks 2147483647 is beyond 16777216 ranks");
  opt.ranks = 0;
  opt.nodes = 2147483647;
  CHECK(contains(error_of([&] { calibrate_block(f, 0, opt); }), "--nodes 2147483647"));
  // The largest accepted rank count with no host list: ⌈16,777,216 / 8⌉ = 2,097,152 nodes, computed in 64 bits.
  opt.nodes = 0;
  opt.ranks = 1 << 24;
  const auto c = calibrate_block(f, 0, opt);
  CHECK(c.nodes == 2097152);
}

TEST_CASE("beyond 64 sizes the regime search is coarse-to-fine and still finds both regimes") {
  // 3,000 rows took 142 s with the exhaustive O(n³) search; the coarse-to-fine search is O(n log n) (timings:
  // parsim_bench_calibrate). It must still find the two lines of an exact table (see regime_table).
  const auto f = parse_nccl_tests(regime_table(3000), "big");
  CalibrateOptions opt;
  opt.ranks = 2;  // bus factor 2(n−1)/n = 1
  const auto c = calibrate_block(f, 0, opt);
  REQUIRE(c.points.size() == 3000);
  CHECK(c.regimes.size() >= 2);
  CHECK(c.alpha_s == doctest::Approx(10e-6).epsilon(0.01));
  CHECK(c.busbw_Bps == doctest::Approx(200e9).epsilon(0.01));
  CHECK(c.max_error < 0.02);
}

// ---- profile (Kineto traces) ---------------------------------------------------------------------------------------

TEST_CASE("a kernel with a negative duration is left out with a note; compute time stays non-negative") {
  // Decision (sim/measure/README.md): an event whose end precedes its start has no length to measure; counting it
  // gave negative compute time. It is left out of every figure and the profile says how many were.
  TraceBuilder b;
  b.launch("kernel", "gemm_a", 100, 50);    // 50 µs
  b.launch("kernel", "gemm_b", 200, -400);  // negative
  b.launch("kernel", "gemm_c", 300, 25);    // 25 µs
  const auto path = measure_test::write_text("negative.json", b.text());
  const auto t = kineto::read_trace(path);
  CHECK(t.unusable_events == 1);
  const auto p = profile_rank(t, {});
  CHECK(p.compute_s == doctest::Approx(75e-6));  // 50 + 25 µs
  CHECK(p.compute_s >= 0);
  bool noted = false;
  for (const auto& n : p.notes) noted = noted || contains(n, "1 complete event(s) with a negative duration");
  CHECK(noted);
}

TEST_CASE("out-of-range floats for stream, rank, world size and group size are unknown values, not casts") {
  TraceBuilder b;
  b.launch("kernel", "k", 100, 10, true, "ac2g", -1, {{"stream", 1e30}});
  b.launch("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", 200, 10, true, "ac2g", -1,
           {{"Collective name", "allreduce"}, {"In msg nelems", 1e300}, {"Out msg nelems", -5}, {"Group size", 1e30},
            {"dtype", "Float"}});
  b.top["distributedInfo"] = {{"backend", "nccl"}, {"rank", 1e30}, {"world_size", -1e300}};
  const auto path = measure_test::write_text("floats.json", b.text());
  const auto t = kineto::read_trace(path);
  CHECK(t.rank == -1);
  CHECK(t.world_size == -1);
  REQUIRE(t.gpu.size() == 2);
  CHECK(t.gpu[0].stream == -1);
  const auto p = profile_rank(t, {}, 3);
  CHECK(p.rank == 3);  // the file's position, with a note
  for (const auto& c : p.collectives) CHECK(c.group_size <= (1 << 24));
}

TEST_CASE("a trace nested 100,000 levels deep, a 65 MiB string, a directory: one line each, bounded memory") {
  const auto deep = measure_test::write_text("deep.json", "{\"traceEvents\": " + std::string(100000, '[') + "]");
  CHECK(contains(error_of([&] { kineto::read_trace(deep); }), "nested deeper than 64 levels"));
  // 65 MiB of one kernel name, gzip-compressed to ~65 KB: the reader stops at 64 MiB instead of holding it.
  const auto long_name = measure_test::write_gz(
      "long.json.gz", "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"" + std::string(65u << 20, 'k') + "\"}]}");
  const auto msg = error_of([&] { kineto::read_trace(long_name); });
  CHECK(contains(msg, "holds a single JSON value longer than 64 MiB starting at byte"));
  const auto dir = (measure_test::temp_dir() / "a_directory").string();
  std::filesystem::create_directories(dir);
  CHECK(error_of([&] { kineto::read_trace(dir); }) == "trace file '" + dir + "' is a directory, not a file");
}

TEST_CASE("a trace file name that is not UTF-8 still gives JSON output") {
  TraceBuilder b;
  b.launch("kernel", "k", 100, 10);
  const auto path = measure_test::write_text("bad\xff\xfename.json", b.text());
  const auto rep = profile_traces({path}, {});
  CHECK(nlohmann::json::accept(profile_json(rep)));
}

TEST_CASE("one rank has no bus bandwidth: an InputError, not busbw 0 and NaN errors (found by fuzz_nccl)") {
  // nccl-tests bus factor for all-reduce is 2(n−1)/n = 0 at n = 1; the fit then printed "busbw = 0 GB/s".
  const std::string one_rank = "#  Rank 15 Group 0 Pid 6740 on host device 7 [0000:8c:00] NVIDIA H100 80GB HBM3\n" +
                               regime_table(20);
  const auto f = parse_nccl_tests(one_rank, "t");
  CHECK(f.device_ranks == 1);
  CHECK(contains(error_of([&] { calibrate_block(f, 0, {}); }), "ran on 1 rank (device list)"));
  CalibrateOptions opt;
  opt.ranks = 1;
  CHECK(contains(error_of([&] { calibrate_block(parse_nccl_tests(regime_table(20), "t"), 0, opt); }),
                 "ran on 1 rank (--ranks)"));
  opt.ranks = 2;  // what the message asks for
  CHECK(calibrate_block(f, 0, opt).busbw_Bps > 0);
}

// Golden/validation tests: parsim profile against the independent reference numbers of TraceLens and HTA on real
// traces (tests/data/profiles, README there). The expected values are read from the tools' own REF_*.json output.
#include "helpers.hpp"

#include "sim/core/error.hpp"
#include "sim/measure/kineto.hpp"
#include "sim/measure/profile.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

using namespace parsim;
namespace fs = std::filesystem;

namespace {

nlohmann::json load(const fs::path& p) {
  std::ifstream in(p);
  // The REF files were written by Python's json module, which spells a missing value NaN.
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t at; (at = text.find("NaN")) != std::string::npos;) text.replace(at, 3, "null");
  return nlohmann::json::parse(text);
}

// Within 1 % of the reference (the acceptance bound); a zero reference must be met within 1 ns.
void check_close(double ours_s, double ref_ms, const std::string& what) {
  const double ref_s = ref_ms * 1e-3;
  INFO(what << ": parsim " << ours_s * 1e3 << " ms, reference " << ref_ms << " ms");
  CHECK(std::fabs(ours_s - ref_s) <= 0.01 * std::fabs(ref_s) + 1e-9);
}

// Each trace is parsed once per test run (the suite must stay fast); the analysis runs per option set.
const kineto::TraceData& cached(const fs::path& trace) {
  static std::map<std::string, kineto::TraceData> cache;
  auto it = cache.find(trace.string());
  if (it == cache.end()) it = cache.emplace(trace.string(), kineto::read_trace(trace.string())).first;
  return it->second;
}

RankProfile measure(const fs::path& trace, ProfileOptions opt = {}) { return profile_rank(cached(trace), opt); }

}  // namespace

TEST_CASE("every shared trace with TraceLens GPU-timeline numbers is measured within 1 %") {
  // REF_tracelens_gpu_timeline.json: TraceLens 171dd747 get_df_gpu_timeline(), default options, whole trace, in ms.
  int compared = 0, disagreements = 0;
  for (const auto& dir : fs::directory_iterator(measure_test::data("profiles"))) {
    const auto ref_path = dir.path() / "REF_tracelens_gpu_timeline.json";
    if (!fs::exists(ref_path)) continue;
    const auto ref = load(ref_path);
    for (const auto& [file, result] : ref["results"].items()) {
      const auto trace = dir.path() / file;
      REQUIRE_MESSAGE(fs::exists(trace), trace.string());
      const auto p = measure(trace);
      INFO(trace.string());
      if (result.is_string()) {
        // Known tool disagreement: TraceLens raised "No GPU events found" (legacy async_cpu_to_gpu flows, or no flows
        // at all). parsim links these traces another way and says so.
        CHECK(result.get<std::string>().find("No GPU events") != std::string::npos);
        CHECK(p.measurable);
        bool said = false;
        for (const auto& n : p.notes) said = said || n.find("TraceLens finds no GPU events") != std::string::npos;
        CHECK(said);
        ++disagreements;
        continue;
      }
      REQUIRE(p.measurable);
      check_close(p.total_s, result["total_time"]["time_ms"].get<double>(), "total");
      check_close(p.compute_s, result["computation_time"]["time_ms"].get<double>(), "computation");
      check_close(p.comm_s, result["total_comm_time"]["time_ms"].get<double>(), "total comm");
      check_close(p.exposed_comm_s, result["exposed_comm_time"]["time_ms"].get<double>(), "exposed comm");
      check_close(p.memcpy_s, result["total_memcpy_time"]["time_ms"].get<double>(), "total memcpy");
      check_close(p.exposed_memcpy_s, result["exposed_memcpy_time"]["time_ms"].get<double>(), "exposed memcpy");
      check_close(p.busy_s, result["busy_time"]["time_ms"].get<double>(), "busy");
      check_close(p.idle_s, result["idle_time"]["time_ms"].get<double>(), "idle");
      ++compared;
    }
  }
  // 7 traces with numbers (nccl_data, df_index_resolver, resnet, mi250, test_rank1, b200, qwen h100) and 3 where
  // TraceLens finds no GPU events (sampled rank 0 and 1, control_rank3).
  CHECK(compared == 7);
  CHECK(disagreements == 3);
}

TEST_CASE("TraceLens' checked-in CSV for the H100 Qwen trace") {
  // h100_REF_gpu_timeline.csv (TraceLens tests/traces/h100): total 34.892 ms, computation 31.903, idle 2.987.
  const auto p = measure(measure_test::data("profiles/tracelens-qwen0.5b-1gpu-h100-vs-mi300/"
                                            "h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"));
  std::ifstream csv(measure_test::data("profiles/tracelens-qwen0.5b-1gpu-h100-vs-mi300/h100_REF_gpu_timeline.csv"));
  std::map<std::string, double> ref;
  std::string line;
  while (std::getline(csv, line)) {
    const auto c1 = line.find(','), c2 = line.find(',', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    try {
      ref[line.substr(0, c1)] = std::stod(line.substr(c1 + 1, c2 - c1 - 1));
    } catch (...) {
    }
  }
  REQUIRE(ref.count("total_time"));
  check_close(p.total_s, ref["total_time"], "total");
  check_close(p.compute_s, ref["computation_time"], "computation");
  check_close(p.idle_s, ref["idle_time"], "idle");
  // 509 of its 1,707 GPU events have no CPU launch (TraceLens leaves them out, and so does parsim by default).
  CHECK(p.gpu_events == 1707);
  CHECK(p.counted_events == 1198);
}

TEST_CASE("--steps --all-kernels against HTA's temporal breakdown") {
  // REF_hta*.json: HTA f4d0062c get_temporal_breakdown over the ProfilerStep windows (last step excluded; a single
  // step or none: the whole trace), counting every GPU kernel, memcpy and memset (no launch linking), in µs.
  // What matches: the window (kernel_time) within 1 % everywhere except test_rank1 (see below); idle within 1 % of
  // the window. What differs by definition: HTA counts memsets as MEMORY (non-compute), TraceLens and parsim as
  // compute, so HTA's compute is compared with compute_s − memset_s, and only on traces with integer timestamps —
  // on float-timestamp traces (nccl_data, resnet, mi250, b200) HTA's compute comes out 0.7–14 % lower than the union
  // of the same kernels, a gap we could not close (HTA's ns conversion of fractional µs is the likely cause).
  // test_rank1 (CUDA graphs beside legacy launches): window within 1 %, but HTA's compute is 7.8 % lower and its idle
  // 24 ms higher than the kernels' union: also not closed.
  const std::map<std::string, bool> integer_ts{{"df_index_resolver_rank1.json.gz", true},
                                               {"sampled_rank-0.json.gz", true},
                                               {"sampled_rank-1.json.gz", true},
                                               {"control_rank3_of8_a100.json.gz", true}};
  ProfileOptions opt;
  opt.steps = true;
  opt.all_kernels = true;
  int compared = 0;
  for (const auto& dir : fs::directory_iterator(measure_test::data("profiles"))) {
    if (!dir.is_directory()) continue;
    for (const auto& entry : fs::directory_iterator(dir.path())) {
      const auto name = entry.path().filename().string();
      if (name.rfind("REF_hta", 0) != 0) continue;
      const auto ref = load(entry.path());
      if (!ref["temporal_breakdown"].is_array()) continue;  // HTA raised an error on this trace
      for (const auto& [rank, file] : ref["files"].items()) {
        const auto trace = dir.path() / file.get<std::string>();
        if (!fs::exists(trace)) continue;
        nlohmann::json row;
        for (const auto& r : ref["temporal_breakdown"])
          if (std::to_string(r["rank"].get<int>()) == rank) row = r;
        REQUIRE_FALSE(row.is_null());
        const auto p = measure(trace, opt);
        const double window = row["kernel_time(us)"].get<double>();
        INFO(trace.string() << ": parsim window " << p.total_s * 1e6 << " µs, compute " << p.compute_s * 1e6
                            << ", memset " << p.memset_s * 1e6 << ", idle " << p.idle_s * 1e6 << "; HTA " << row.dump());
        CHECK(std::fabs(p.total_s * 1e6 - window) <= 0.01 * window);
        if (file.get<std::string>() != "test_rank1_of2_v100.json.gz")
          CHECK(std::fabs(p.idle_s * 1e6 - row["idle_time(us)"].get<double>()) <= 0.01 * window);
        if (integer_ts.count(file.get<std::string>()))
          CHECK(std::fabs((p.compute_s - p.memset_s) * 1e6 - row["compute_time(us)"].get<double>()) <=
                0.01 * row["compute_time(us)"].get<double>());
        ++compared;
      }
    }
  }
  // nccl_data, df_index_resolver, sampled rank 0 and 1, mi250, resnet, control, test, b200; the Qwen H100 file holds
  // HTA's AssertionError instead of numbers.
  CHECK(compared == 9);
}

TEST_CASE("facts stated by the sources of the shared traces") {
  SUBCASE("df_index_resolver_rank1: peak GPU Total Allocated 6,629,508,096 B; 2,020 NCCL all-reduce kernels") {
    const auto p = measure(measure_test::data("profiles/hta-ddp-2rank-v100-memory/df_index_resolver_rank1.json.gz"));
    CHECK(p.has_memory);
    CHECK(p.peak_allocated_bytes == 6629508096.0);
    CHECK(p.comm_kernels == 2020);
    CHECK(p.rank == 1);
    CHECK(p.device == "Tesla V100-SXM2-32GB");
  }
  SUBCASE("nccl_data: 15 all-reduce and 6 broadcast kernels, sizes from the kernels' metadata") {
    const auto p = measure(measure_test::data("profiles/hta-nccl-meta-2rank-a100/nccl_data.json.gz"));
    int ar = 0, bc = 0;
    bool saw_2049000 = false;
    for (const auto& c : p.collectives) {
      ar += c.type == CollType::AllReduce;
      bc += c.type == CollType::Broadcast;
      CHECK(c.source == "kernel args");
      CHECK(c.group_size == 2);
      // 2,049,000 Float elements × 4 B = 8,196,000 B (one of the sizes the shared README lists)
      saw_2049000 = saw_2049000 || (c.type == CollType::AllReduce && c.bytes == 8196000.0);
    }
    CHECK(ar == 15);
    CHECK(bc == 6);
    CHECK(saw_2049000);
  }
  SUBCASE("b200: one _allgather_base of 25,136 → 201,088 BFloat16 over 8 ranks") {
    ProfileReport r = profile_traces({measure_test::data("profiles/tracelens-b200-8gpu-rank0/eager_trace.json.gz")}, {});
    REQUIRE(r.collectives.size() == 1);
    const auto& s = r.collectives[0];
    CHECK(s.type == CollType::AllGather);
    // all-gather size = output: 201,088 × 2 B = 402,176 B
    CHECK(s.bytes == 402176.0);
    CHECK(s.group_size == 8);
    // busbw = S / t × (n−1)/n, the kernel's own duration t (a single call)
    CHECK(s.busbw_GBps == doctest::Approx(402176.0 / s.mean_s / 1e9 * 7.0 / 8.0));
  }
  SUBCASE("control_rank3: 42 SendRecv and 18 AllReduce NCCL kernels, named only by their kernels") {
    const auto p = measure(measure_test::data("profiles/hta-trace-diff/control_rank3_of8_a100.json.gz"));
    int sr = 0, ar = 0;
    for (const auto& c : p.collectives) {
      sr += c.type == CollType::SendRecv;
      ar += c.type == CollType::AllReduce;
      CHECK(c.source == "kernel name");
    }
    CHECK(sr == 42);
    CHECK(ar == 18);
    CHECK(p.world_size == 8);
  }
  SUBCASE("test_rank1: TraceLens' default misses the legacy-linked work; --all-kernels finds the 64 NCCL kernels") {
    const auto trace = measure_test::data("profiles/hta-trace-diff/test_rank1_of2_v100.json.gz");
    const auto p = measure(trace);
    CHECK(p.comm_s == 0);  // as TraceLens reports
    bool warned = false;
    for (const auto& n : p.notes) warned = warned || n.find("legacy async_cpu_to_gpu") != std::string::npos;
    CHECK(warned);
    ProfileOptions all;
    all.all_kernels = true;
    const auto q = measure(trace, all);
    CHECK(q.comm_kernels == 64);  // HTA finds 64 NCCL kernels (shared README)
    CHECK(q.comm_s > 0);
  }
  SUBCASE("mi250 toy (HIP): rank from the file position, kernels on stream 0") {
    const auto p = measure(measure_test::data("profiles/hta-amd-mi250-toy/mi250_minitoy_train_ROCm6_2_kineto.json.gz"));
    CHECK(p.measurable);
    CHECK(p.world_size == -1);
    CHECK(p.device == "AMD Radeon Graphics");
  }
}

TEST_CASE("two ranks of the 128-rank job: one report per rank, skew of the matched send/recv kernels") {
  const auto r = profile_traces({measure_test::data("profiles/hta-128rank-sampled/sampled_rank-0.json.gz"),
                                 measure_test::data("profiles/hta-128rank-sampled/sampled_rank-1.json.gz")},
                                {});
  REQUIRE(r.ranks.size() == 2);
  CHECK(r.ranks[0].rank == 0);
  CHECK(r.ranks[1].rank == 1);
  // 10 SendRecv kernels on each rank (shared README), matched pairwise
  REQUIRE(r.skew.size() == 1);
  CHECK(r.skew[0].type == CollType::SendRecv);
  CHECK(r.skew[0].instances == 10);
  CHECK(r.straggler_rank >= 0);
}

// parsim_bench_measure — the scale of the measurement readers (issue 12, "Scale"). A benchmark, not a test: it prints
// figures and asserts nothing.
//   calibrate: parse + fit of synthetic nccl-tests tables of 3,000 / 30,000 / 200,000 rows (the exhaustive regime
//              search was cubic: 3,000 rows took 142 s; the coarse-to-fine search beyond 64 sizes is O(n log n));
//   profile:   a synthetic Kineto trace of --trace-mb MB (default 256; 1024 for the issue's 1 GB) written to
//              $TMPDIR, then read and measured; wall time and the process's peak RSS, which stays far below the file
//              size (the reader streams; it keeps ~100 bytes per GPU event and launch, and one token at a time).
//   build/tests/parsim_bench_measure [--trace-mb N] [--skip-trace]
#include "sim/core/text.hpp"
#include "sim/measure/calibrate.hpp"
#include "sim/measure/kineto.hpp"
#include "sim/measure/profile.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

using namespace parsim;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: KiB
}

void bench_calibrate(int rows) {
  // Two regimes (10 µs + S/20 GB/s and 60 µs + S/200 GB/s, the faster of the two), sizes 8 + 64·i² bytes.
  std::string s = "# all_reduce_perf\n#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
  for (int i = 0; i < rows; ++i) {
    const double bytes = 8.0 + 64.0 * static_cast<double>(i) * static_cast<double>(i);
    const double t = std::min(10 + bytes / 20e3, 60 + bytes / 200e3);
    s += std::to_string(static_cast<long long>(bytes)) + " 1 float sum -1 " + fmt_fixed(t, 4) + " 0 0 0 " +
         fmt_fixed(t, 4) + " 0 0 0\n";
  }
  const auto t0 = std::chrono::steady_clock::now();
  const NcclTestFile f = parse_nccl_tests(s, "bench");
  CalibrateOptions opt;
  opt.ranks = 2;
  const Calibration c = calibrate_block(f, 0, opt);
  std::printf("calibrate %7d rows: %8.3f s   (%zu regimes, alpha %.2f us, busbw %.1f GB/s)\n", rows, seconds_since(t0),
              c.regimes.size(), c.alpha_s * 1e6, c.busbw_Bps / 1e9);
}

void bench_profile(double target_mb) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/parsim_bench_trace_" + std::to_string(getpid()) + ".json";
  {
    // Per kernel: a cuda_runtime launch, the kernel, an ac2g flow start and end, and two python_function events the
    // reader skips — the mix of a real trace, where most bytes are CPU-side events.
    std::ofstream f(path, std::ios::binary);
    f << R"({"schemaVersion":1,"distributedInfo":{"backend":"nccl","rank":0,"world_size":8},)"
      << R"("deviceProperties":[{"id":0,"name":"Synthetic GPU"}],"traceEvents":[)";
    const double target = target_mb * 1e6;
    long long i = 0;
    char buf[1024];
    for (double written = 0; written < target; ++i) {
      const double ts = 1.7e15 + static_cast<double>(i) * 20.0;
      const int n = std::snprintf(
          buf, sizeof buf,
          R"(%s{"ph":"X","cat":"python_function","name":"torch/nn/modules/module.py(1532): _call_impl","pid":1,"tid":1,"ts":%.3f,"dur":15.0,"args":{"Python id":%lld,"Python parent id":%lld}},)"
          R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%.3f,"dur":4.0,"args":{"External id":%lld,"correlation":%lld}},)"
          R"({"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%.3f,"dur":12.5,"args":{"External id":%lld,"correlation":%lld,"stream":7,"device":0}},)"
          R"({"ph":"s","id":%lld,"pid":1,"tid":1,"ts":%.3f,"cat":"ac2g","name":"ac2g"},{"ph":"f","id":%lld,"pid":0,"tid":7,"ts":%.3f,"cat":"ac2g","name":"ac2g","bp":"e"})",
          i ? "," : "", ts, i, i, ts + 1, i, i, i % 10 == 0 ? "ncclDevKernel_AllReduce_Sum_bf16_RING_LL" : "sm90_xmma_gemm_bf16bf16_bf16f32",
          ts + 5, i, i, i, ts + 1, i, ts + 5);
      f.write(buf, n);
      written += n;
    }
    f << "]}";
  }
  const double size_mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  const double rss_before = peak_rss_mib();
  const auto t0 = std::chrono::steady_clock::now();
  const kineto::TraceData t = kineto::read_trace(path);
  const RankProfile p = profile_rank(t, {});
  const double secs = seconds_since(t0);
  std::printf("profile %.0f MB trace (%lld events, %zu kernels): %.2f s, %.0f MB/s, peak RSS %.0f MiB (%.0f MiB before "
              "reading); compute %.3f s, comm %.3f s\n",
              size_mb, static_cast<long long>(t.events), t.gpu.size(), secs, size_mb / secs, peak_rss_mib(),
              rss_before, p.compute_s, p.comm_s);
  std::filesystem::remove(path);
}

}  // namespace

int main(int argc, char** argv) {
  double trace_mb = 256;
  bool trace = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--trace-mb") && i + 1 < argc) trace_mb = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--skip-trace")) trace = false;
  }
  for (const int rows : {3000, 30000, 200000}) bench_calibrate(rows);
  if (trace) bench_profile(trace_mb);
  return 0;
}

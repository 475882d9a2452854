// Unit tests of the profile analysis on small synthetic traces whose answers can be worked out by hand.
#include "helpers.hpp"

#include "sim/core/error.hpp"
#include "sim/measure/kineto.hpp"
#include "sim/measure/profile.hpp"

#include <doctest/doctest.h>

using namespace parsim;
using measure_test::TraceBuilder;

namespace {
RankProfile profile_text(const std::string& name, const std::string& text, ProfileOptions opt = {}) {
  const auto path = measure_test::write_text(name, text);
  return profile_rank(kineto::read_trace(path), opt);
}
}  // namespace

TEST_CASE("interval union and difference") {
  // [0,2] and [1,3] overlap → [0,3]; [3,4] touches 3 and merges (TraceLens merges when start <= last end) → [0,4];
  // [6,7] stays apart. Union length 4 + 1 = 5.
  auto u = merge_intervals({{6, 7}, {1, 3}, {0, 2}, {3, 4}});
  REQUIRE(u.size() == 2);
  CHECK(u[0].start == 0);
  CHECK(u[0].end == 4);
  CHECK(total_length(u) == doctest::Approx(5));
  // b = [0,10] minus a = {[2,3], [5,12]} leaves [0,2] and [3,5]: length 2 + 2 = 4.
  auto d = subtract_intervals({{2, 3}, {5, 12}}, {{0, 10}});
  REQUIRE(d.size() == 2);
  CHECK(total_length(d) == doctest::Approx(4));
  // Nothing to subtract: b is unchanged (length 10).
  CHECK(total_length(subtract_intervals({}, {{0, 10}})) == doctest::Approx(10));
}

TEST_CASE("TraceLens GPU-timeline definitions on a hand-made timeline") {
  // Stream layout (µs):   compute kernel [0,100], memset [100,110] (memsets count as compute),
  //                        NCCL kernel [50,200], memcpy [190,260], then an idle gap, compute kernel [300,320].
  TraceBuilder t;
  t.launch("kernel", "gemm_kernel", 0, 100);
  t.launch("gpu_memset", "Memset (Device)", 100, 10);
  t.launch("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 50, 150);
  t.launch("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 190, 70);
  t.launch("kernel", "elementwise_kernel", 300, 20);
  const auto p = profile_text("hand.json", t.text());
  REQUIRE(p.measurable);
  // window = last end 320 − first start 0 = 320 µs
  CHECK(p.total_s == doctest::Approx(320e-6));
  // compute = |[0,110] ∪ [300,320]| = 110 + 20 = 130 µs
  CHECK(p.compute_s == doctest::Approx(130e-6));
  // comm = 150 µs; exposed = [110,200] = 90 µs
  CHECK(p.comm_s == doctest::Approx(150e-6));
  CHECK(p.exposed_comm_s == doctest::Approx(90e-6));
  // memcpy = 70 µs; minus compute: [190,260]; minus comm [50,200]: [200,260] = 60 µs exposed
  CHECK(p.memcpy_s == doctest::Approx(70e-6));
  CHECK(p.exposed_memcpy_s == doctest::Approx(60e-6));
  // busy = |[0,260] ∪ [300,320]| = 280; idle = 320 − 280 = 40 = total − compute − exposed comm − exposed memcpy
  CHECK(p.idle_s == doctest::Approx(40e-6));
  CHECK(p.idle_s == doctest::Approx(p.total_s - p.compute_s - p.exposed_comm_s - p.exposed_memcpy_s));
  CHECK(p.memset_s == doctest::Approx(10e-6));
  CHECK(p.comm_kernels == 1);
}

TEST_CASE("only GPU events linked to a CPU launch count by default; --all-kernels counts the rest") {
  TraceBuilder t;
  t.launch("kernel", "a", 0, 10);
  t.launch("kernel", "b", 20, 10);
  t.orphan("kernel", "c", 100, 50);  // no runtime call, no flow
  auto p = profile_text("orphan.json", t.text());
  // linked: [0,10] and [20,30] → window 30 µs, compute 20 µs
  CHECK(p.counted_events == 2);
  CHECK(p.total_s == doctest::Approx(30e-6));
  CHECK(p.compute_s == doctest::Approx(20e-6));
  ProfileOptions all;
  all.all_kernels = true;
  p = profile_text("orphan_all.json", t.text(), all);
  // all three: window [0,150] = 150 µs, compute 10 + 10 + 50 = 70 µs
  CHECK(p.counted_events == 3);
  CHECK(p.total_s == doctest::Approx(150e-6));
  CHECK(p.compute_s == doctest::Approx(70e-6));
}

TEST_CASE("a launch flow needs both ends, and an ac2g end names the GPU event by pid, tid and id") {
  TraceBuilder t;
  t.launch("kernel", "linked", 0, 10);
  // A kernel whose flow has a start but no end (the GPU side was dropped): not linked.
  t.launch("kernel", "half_flow", 50, 10, false);
  t.events.push_back({{"ph", "s"}, {"id", 1001}, {"pid", 100}, {"tid", 100}, {"ts", 45}, {"cat", "ac2g"}, {"name", "ac2g"}});
  auto p = profile_text("half.json", t.text());
  CHECK(p.counted_events == 1);
}

TEST_CASE("the linking key is External id when the first launch call has no correlation") {
  // TraceLens _set_linking_key: the first cuda_runtime/cuda_driver event whose name contains "launch".
  TraceBuilder t;
  t.events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 100}, {"tid", 100},
                      {"ts", 0}, {"dur", 1}, {"args", {{"External id", 7}}}});
  t.events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "k"}, {"pid", 0}, {"tid", 7}, {"ts", 5}, {"dur", 10},
                      {"args", {{"External id", 7}, {"correlation", 99}, {"stream", 7}}}});
  // The flow id carries the External id (7), not the correlation (99).
  t.events.push_back({{"ph", "s"}, {"id", 7}, {"pid", 100}, {"tid", 100}, {"ts", 0}, {"cat", "ac2g"}, {"name", "ac2g"}});
  t.events.push_back({{"ph", "f"}, {"id", 7}, {"pid", 0}, {"tid", 7}, {"ts", 5}, {"cat", "ac2g"}, {"name", "ac2g"}, {"bp", "e"}});
  auto p = profile_text("extid.json", t.text());
  CHECK(p.counted_events == 1);
  CHECK(p.linking.find("External id") != std::string::npos);
}

TEST_CASE("cudaGraphLaunch links every GPU event of the graph by correlation") {
  TraceBuilder t;
  t.events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 100}, {"tid", 100},
                      {"ts", 0}, {"dur", 1}, {"args", {{"correlation", 1}}}});
  t.events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaGraphLaunch"}, {"pid", 100}, {"tid", 100},
                      {"ts", 1}, {"dur", 1}, {"args", {{"correlation", 42}}}});
  for (int i = 0; i < 3; ++i)
    t.events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "graph_kernel"}, {"pid", 0}, {"tid", 7},
                        {"ts", 10 + 10 * i}, {"dur", 5}, {"args", {{"correlation", 42}, {"stream", 7}}}});
  auto p = profile_text("graph.json", t.text());
  // three kernels [10,15], [20,25], [30,35]: window 25 µs, compute 15 µs
  CHECK(p.counted_events == 3);
  CHECK(p.total_s == doctest::Approx(25e-6));
  CHECK(p.compute_s == doctest::Approx(15e-6));
}

TEST_CASE("legacy async_cpu_to_gpu flows and flow-less traces are linked when TraceLens would find nothing") {
  TraceBuilder legacy;
  legacy.launch("kernel", "k1", 0, 10, true, "async_cpu_to_gpu");
  legacy.launch("kernel", "k2", 20, 10, true, "async_cpu_to_gpu");
  auto p = profile_text("legacy.json", legacy.text());
  CHECK(p.counted_events == 2);
  CHECK(p.linking.find("async_cpu_to_gpu") != std::string::npos);

  TraceBuilder none;
  none.launch("kernel", "k1", 0, 10, false);
  none.launch("kernel", "k2", 20, 10, false);
  none.orphan("kernel", "k3", 40, 10);  // its correlation matches no runtime call
  p = profile_text("noflows.json", none.text());
  CHECK(p.counted_events == 2);
  CHECK(p.linking.find("correlation ids") != std::string::npos);
}

TEST_CASE("integer and float timestamps, string pids, old category names") {
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": "host", "tid": 1, "ts": 100, "dur": 3,
     "args": {"correlation": 5}},
    {"ph": "X", "cat": "Kernel", "name": "k", "pid": "gpu0", "tid": "stream 7", "ts": 105.5, "dur": 2.25,
     "args": {"correlation": 5}},
    {"ph": "s", "cat": "ac2g", "id": 5, "pid": "host", "tid": 1, "ts": 100},
    {"ph": "f", "cat": "ac2g", "id": 5, "pid": "gpu0", "tid": "stream 7", "ts": 105.5, "bp": "e"}]})";
  auto p = profile_text("oldnames.json", text);
  CHECK(p.counted_events == 1);
  CHECK(p.total_s == doctest::Approx(2.25e-6));
  CHECK(p.device == "unknown");  // no deviceProperties
}

TEST_CASE("peak allocated memory from [memory] events of the device only") {
  TraceBuilder t;
  t.launch("kernel", "k", 0, 10);
  t.memory(1, 1000, 2048);
  t.memory(2, 5000, 8192);
  t.memory(3, 3000, 8192);
  t.memory(4, 9e9, 9e9, 0);  // Device Type 0 = CPU: ignored
  auto p = profile_text("memory.json", t.text());
  CHECK(p.has_memory);
  CHECK(p.peak_allocated_bytes == 5000);
  CHECK(p.peak_reserved_bytes == 8192);
}

TEST_CASE("collective metadata: kernel args, record_param_comms by External id, by order, kernel name") {
  TraceBuilder t;
  t.distributed(0, 4);
  // Kernel args carry the metadata (PyTorch ≥ 2.4): all-gather, 1,000 BFloat16 in, 4,000 out, group of 4.
  t.launch("kernel", "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0, 8, true, "ac2g", -1,
           {{"Collective name", "_allgather_base"}, {"In msg nelems", 1000}, {"Out msg nelems", 4000},
            {"Group size", 4}, {"dtype", "BFloat16"}, {"Process Group Name", "0"}});
  // record_param_comms with the same External id as the kernel (RCCL's generic kernel names no collective).
  const int corr = t.launch("kernel", "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", 20, 16);
  t.cpu_op("record_param_comms", 14, 1,
           {{"External id", corr}, {"Collective name", "allreduce"}, {"In msg nelems", 1000000},
            {"Out msg nelems", 1000000}, {"Group size", 4}, {"dtype", "Float"}, {"Process Group Name", "0"},
            {"Process Group Ranks", "[0, 1, 2, 3]"}});
  // An old kernel name with no metadata at all.
  t.launch("kernel", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", 40, 4);
  auto p = profile_text("colls.json", t.text());
  REQUIRE(p.collectives.size() == 3);
  const auto& ag = p.collectives[0];
  CHECK(ag.type == CollType::AllGather);
  CHECK(ag.source == "kernel args");
  // all-gather size = output: 4,000 × 2 B = 8,000 B
  CHECK(ag.bytes == 8000);
  const auto& ar = p.collectives[1];
  CHECK(ar.type == CollType::AllReduce);
  CHECK(ar.source == "record_param_comms");
  // 1,000,000 Float = 4,000,000 B
  CHECK(ar.bytes == 4e6);
  const auto& sr = p.collectives[2];
  CHECK(sr.type == CollType::SendRecv);
  CHECK(sr.source == "kernel name");
  CHECK(sr.bytes < 0);
  CHECK(sr.group_size == 4);  // no metadata: the world size
  auto stats = collective_stats({p});
  for (const auto& s : stats) {
    if (s.type != CollType::AllReduce) continue;
    // algbw = 4e6 B / 16 µs = 250 GB/s; bus factor 2(n−1)/n = 1.5 for n = 4 → busbw 375 GB/s (nccl-tests).
    CHECK(s.algbw_GBps == doctest::Approx(250));
    CHECK(s.busbw_GBps == doctest::Approx(375));
  }
}

TEST_CASE("record_param_comms matched by order when no id matches") {
  TraceBuilder t;
  t.distributed(0, 2);
  t.launch("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 10, 5);
  t.launch("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 30, 5);
  t.cpu_op("record_param_comms", 1, 1, {{"External id", 1}, {"Collective name", "allreduce"}, {"In msg nelems", 10},
                                        {"Out msg nelems", 10}, {"dtype", "Float"}, {"Group size", 2}});
  t.cpu_op("record_param_comms", 21, 1, {{"External id", 2}, {"Collective name", "allreduce"}, {"In msg nelems", 20},
                                         {"Out msg nelems", 20}, {"dtype", "Float"}, {"Group size", 2}});
  auto p = profile_text("order.json", t.text());
  REQUIRE(p.collectives.size() == 2);
  // first kernel ↔ first record (10 Float = 40 B), second ↔ second (80 B)
  CHECK(p.collectives[0].bytes == 40);
  CHECK(p.collectives[1].bytes == 80);
  CHECK(p.collectives[0].source == "record_param_comms (sequence)");
}

TEST_CASE("kernel-name and metadata classification, dtype sizes, bus factors") {
  CHECK(collective_from_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)") == CollType::AllReduce);
  CHECK(collective_from_kernel_name("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)") == CollType::ReduceScatter);
  CHECK(collective_from_kernel_name("ncclKernel_Broadcast_RING_LL_Sum_int8_t(x)") == CollType::Broadcast);
  CHECK(collective_from_kernel_name("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)") == CollType::Unknown);
  CHECK(collective_from_metadata("_reduce_scatter_base") == CollType::ReduceScatter);
  CHECK(collective_from_metadata("all_gather_into_tensor") == CollType::AllGather);
  CHECK(collective_from_metadata("all_to_all") == CollType::AllToAll);
  CHECK(dtype_bytes("BFloat16") == 2);
  CHECK(dtype_bytes("Long") == 8);
  CHECK(dtype_bytes("Mystery") == 0);
  // nccl-tests doc/PERFORMANCE.md: AR 2(n−1)/n = 2·7/8 = 1.75 for n = 8; AG (n−1)/n = 0.875; send/recv 1
  CHECK(nccl_bus_factor(CollType::AllReduce, 8) == doctest::Approx(1.75));
  CHECK(nccl_bus_factor(CollType::AllGather, 8) == doctest::Approx(0.875));
  CHECK(nccl_bus_factor(CollType::SendRecv, 8) == doctest::Approx(1.0));
}

TEST_CASE("--steps keeps GPU work launched inside the ProfilerStep windows, all but the last step") {
  TraceBuilder t;
  t.step(1, 0, 100);
  t.step(2, 100, 100);
  t.step(3, 200, 100);  // left out, as HTA does
  t.launch("kernel", "warmup", 0, 10, true, "ac2g", -1);         // launched at −5: before the first step
  t.launch("kernel", "in1", 50, 20, true, "ac2g", 40);            // launched in step 1
  t.launch("kernel", "late", 210, 30, true, "ac2g", 190);         // launched in step 2, runs in step 3: kept
  t.launch("kernel", "step3", 260, 10, true, "ac2g", 250);        // launched in step 3: dropped
  ProfileOptions opt;
  opt.steps = true;
  auto p = profile_text("steps.json", t.text(), opt);
  // kept: [50,70] and [210,240] → window 190 µs, compute 50 µs; 2 steps of 100 µs each
  CHECK(p.counted_events == 2);
  CHECK(p.total_s == doctest::Approx(190e-6));
  CHECK(p.compute_s == doctest::Approx(50e-6));
  CHECK(p.steps_measured == 2);
  CHECK(p.step_mean_s == doctest::Approx(100e-6));
}

TEST_CASE("several ranks: start skew after clock alignment, and the straggler") {
  // Two ranks run the same two all-reduces. Rank 1's clock reads 1,000 µs ahead. Rank 1 arrives 30 µs late at the
  // first and 10 µs late at the second; both end together (NCCL finishes when the last rank's data is in).
  auto make = [](int rank, double offset, double late1, double late2) {
    TraceBuilder t;
    t.distributed(rank, 2);
    nlohmann::json meta = {{"Collective name", "allreduce"}, {"In msg nelems", 256}, {"Out msg nelems", 256},
                           {"dtype", "Float"}, {"Group size", 2}, {"Process Group Name", "0"}};
    t.launch("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(x)", offset + 100 + late1, 50 - late1, true, "ac2g", -1, meta);
    t.launch("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(x)", offset + 300 + late2, 40 - late2, true, "ac2g", -1, meta);
    return measure_test::write_text("rank" + std::to_string(rank) + ".json", t.text());
  };
  const auto f0 = make(0, 0, 0, 0), f1 = make(1, 1000, 30, 10);
  auto report = profile_traces({f0, f1}, {});
  REQUIRE(report.ranks.size() == 2);
  // End times: rank 0 150 and 340; rank 1 1150 and 1340 → offset 1,000 µs.
  CHECK(report.clock_offset_s[1] == doctest::Approx(1000e-6));
  REQUIRE(report.skew.size() == 1);
  // Skews 30 and 10 µs → mean 20, max 30; rank 1 arrives last both times.
  CHECK(report.skew[0].instances == 2);
  CHECK(report.skew[0].mean_skew_s == doctest::Approx(20e-6));
  CHECK(report.skew[0].max_skew_s == doctest::Approx(30e-6));
  CHECK(report.skew[0].last_rank == 1);
  CHECK(report.straggler_rank == 1);
  CHECK(report.mean_late_s[1] == doctest::Approx(20e-6));
  // Aggregated over ranks: 4 calls of 1,024 B run by 2 ranks.
  REQUIRE(report.collectives.size() == 1);
  CHECK(report.collectives[0].count == 4);
  CHECK(report.collectives[0].ranks == 2);
  CHECK(report.collectives[0].bytes == 1024);
}

TEST_CASE("a trace without GPU events says so, and profile_traces refuses when nothing is measurable") {
  TraceBuilder t;
  t.cpu_op("aten::add", 0, 10);
  const auto path = measure_test::write_text("cpu_only.json", t.text());
  const auto p = profile_rank(kineto::read_trace(path), {});
  CHECK_FALSE(p.measurable);
  REQUIRE_FALSE(p.notes.empty());
  CHECK(p.notes.back().find("no GPU events") != std::string::npos);
  CHECK_THROWS_AS(profile_traces({path}, {}), InputError);
  // One measurable rank is enough: the other is reported as not measurable.
  TraceBuilder g;
  g.launch("kernel", "k", 0, 10);
  const auto good = measure_test::write_text("gpu.json", g.text());
  const auto report = profile_traces({good, path}, {});
  CHECK(report.ranks[0].measurable);
  CHECK_FALSE(report.ranks[1].measurable);
}

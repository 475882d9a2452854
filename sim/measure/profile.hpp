// parsim sim/measure — what the GPUs of a real run did, from PyTorch-profiler (Kineto) traces (`parsim profile`).
//
// Definitions (docs/cli.md; TraceLens TreePerfAnalyzer.get_df_gpu_timeline() defaults, AMD-AGI/TraceLens @ 171dd747):
//   GPU events   = kernels, memcpys and memsets linked to a CPU launch (TraceLens: a cuda_runtime/cuda_driver call
//                  whose `correlation` (or `External id`, see kineto.hpp) has an `ac2g` flow start and end, the end
//                  pointing at the GPU event with that pid, tid and id; cudaGraphLaunch/hipGraphLaunch link every GPU
//                  event with its correlation). --all-kernels counts every GPU event.
//   total_s      = last end − first start of those events (the window)
//   compute_s    = |∪ kernels and memsets whose name does not contain "nccl"|
//   comm_s       = |∪ kernels and memsets whose name contains "nccl"| (NCCL and RCCL kernels)
//   exposed_comm_s = |comm ∖ compute|;  memcpy_s = |∪ memcpys|;  exposed_memcpy_s = |memcpy ∖ compute ∖ comm|
//   idle_s       = total − |∪ all events| = total − compute − exposed comm − exposed memcpy
// Where TraceLens finds no GPU events at all because the trace predates the `ac2g` flow name (flows named
// `async_cpu_to_gpu`) or has no flows, parsim links through the legacy flows, then through correlation ids, and says so.
// --steps keeps only GPU work launched inside the ProfilerStep windows (HTA's view: all steps but the last when there
// are several; a single step keeps the whole trace, as HTA does).
#pragma once
#include "sim/measure/kineto.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace parsim {

struct ProfileOptions {
  bool all_kernels = false;
  bool steps = false;
};

// ---- interval arithmetic (µs) -------------------------------------------------------------------------------
struct Interval {
  double start = 0, end = 0;
};
// Union of intervals: sorted, non-overlapping; touching intervals merge.
std::vector<Interval> merge_intervals(std::vector<Interval> v);
// b ∖ a for two merged (sorted, non-overlapping) lists.
std::vector<Interval> subtract_intervals(const std::vector<Interval>& a, const std::vector<Interval>& b);
double total_length(const std::vector<Interval>& v);

// ---- collectives -------------------------------------------------------------------------------------------
enum class CollType { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, Reduce, SendRecv, Send, Recv, Gather,
                      Scatter, Barrier, Unknown };
std::string to_string(CollType t);
// "allreduce", "_allgather_base", "all_gather_into_tensor", "_reduce_scatter_base", "send", … (PyTorch's names)
CollType collective_from_metadata(const std::string& collective_name);
// ncclKernel_AllReduce_RING_LL_Sum_float(…), ncclDevKernel_AllGather_RING_LL(…), ncclKernel_SendRecv_…;
// RCCL's ncclDevKernel_Generic names no collective → Unknown.
CollType collective_from_kernel_name(const std::string& kernel_name);
// Bytes of one element of a PyTorch dtype as record_param_comms writes it (Float 4, BFloat16 2, …); 0 when unknown.
double dtype_bytes(const std::string& dtype);
// nccl-tests doc/PERFORMANCE.md: busbw = algbw × factor — all-reduce 2(n−1)/n; all-gather, reduce-scatter and
// all-to-all (n−1)/n; broadcast, reduce, send/recv 1.
double nccl_bus_factor(CollType t, int n);

struct CollectiveCall {  // one communication kernel on one rank
  CollType type = CollType::Unknown;
  std::string dtype, process_group;
  double bytes = -1;           // nccl-tests convention: all-reduce buffer, all-gather output, reduce-scatter input
  int group_size = -1;
  double start_us = 0, dur_us = 0;
  std::string source;          // "kernel args" | "record_param_comms" | "record_param_comms (sequence)" | "kernel name"
};

struct CollectiveStats {
  CollType type = CollType::Unknown;
  std::string dtype, process_group, source;
  double bytes = -1;
  int group_size = -1;
  std::int64_t count = 0;
  int ranks = 0;               // ranks that ran it
  double mean_s = 0, min_s = 0, max_s = 0, total_s = 0;
  double algbw_GBps = -1, busbw_GBps = -1;  // -1 when the size is unknown (no metadata)
};

// ---- one rank ----------------------------------------------------------------------------------------------
struct StepWindow {
  std::int64_t number = -1;
  double start_us = 0, dur_s = 0;
};

struct RankProfile {
  std::string file, device;
  int rank = 0;
  std::int64_t world_size = -1;
  bool measurable = false;     // false: no GPU events to measure
  std::string linking;         // how GPU events were tied to their launches
  double total_s = 0, compute_s = 0, comm_s = 0, exposed_comm_s = 0, memcpy_s = 0, exposed_memcpy_s = 0;
  double memset_s = 0, busy_s = 0, idle_s = 0;
  double window_start_us = 0, window_end_us = 0;
  std::int64_t gpu_events = 0;       // in the trace
  std::int64_t counted_events = 0;   // linked (or all with --all-kernels), inside the steps with --steps
  std::int64_t comm_kernels = 0;
  std::vector<StepWindow> steps;     // every ProfilerStep in the trace
  int steps_measured = 0;            // steps inside the window with --steps (HTA's set), else all
  double step_mean_s = -1;           // mean duration of HTA's step set (all but the last of several); -1 without steps
  bool has_memory = false;
  double peak_allocated_bytes = 0, peak_reserved_bytes = 0;
  std::vector<CollectiveCall> collectives;
  std::vector<std::string> notes;
};

RankProfile profile_rank(const kineto::TraceData& trace, const ProfileOptions& opt, int fallback_rank = 0);

// ---- several ranks -----------------------------------------------------------------------------------------
struct SkewStats {           // the same collective (type, size, group; k-th occurrence) on every rank that ran it
  CollType type = CollType::Unknown;
  double bytes = -1;
  std::string process_group;
  std::int64_t instances = 0;
  double mean_skew_s = 0, max_skew_s = 0;  // latest − earliest start, after clock alignment
  int last_rank = -1;                      // the rank that arrived last most often
};

struct ProfileReport {
  std::vector<RankProfile> ranks;
  std::vector<CollectiveStats> collectives;
  std::vector<SkewStats> skew;
  std::vector<double> clock_offset_s;      // per rank (report order): median end-time offset against the first rank
  std::vector<double> mean_late_s;         // per rank: mean start delay after the earliest rank over matched collectives
  int straggler_rank = -1;                 // rank with the largest mean lateness (several ranks only)
  std::vector<std::string> notes;
};

// Aggregates calls by (type, dtype, bytes, group size, process group) over all ranks.
std::vector<CollectiveStats> collective_stats(const std::vector<RankProfile>& ranks);
// Start skew per matched collective and the straggler; needs ≥ 2 ranks with collectives.
void cross_rank_analysis(ProfileReport& report);

// Reads and measures every file (one per rank). Throws InputError when a file cannot be read or when no file has
// any GPU event to measure.
ProfileReport profile_traces(const std::vector<std::string>& files, const ProfileOptions& opt);

std::string profile_json(const ProfileReport& report);
std::string profile_table(const ProfileReport& report);

}  // namespace parsim

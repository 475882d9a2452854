// parsim sim/measure — a streaming reader for PyTorch-profiler (Kineto) Chrome-trace JSON, plain or gzip.
//
// The reader never builds a document: a SAX handler (nlohmann::json::sax_parse) walks the text as zlib inflates it and
// keeps, per event, only the few fields the analysis needs, and only for the events it needs:
//   - GPU activity (cat kernel | gpu_memcpy | gpu_memset; old traces: Kernel | Memcpy | Memset),
//   - CPU-side launches (cat cuda_runtime | cuda_driver; HIP traces use the same categories; old: Runtime),
//   - launch flows (cat ac2g, or async_cpu_to_gpu in traces from before ~2023), `s` and `f` ends,
//   - `record_param_comms` CPU ops (collective metadata), `ProfilerStep#N` annotations,
//   - `[memory]` allocator instants (only the running peak of `Total Allocated` / `Total Reserved` is kept).
// Everything else (python_function, cpu_op bodies, nested args such as shapes) is skipped as it streams by, so memory
// grows with the number of GPU events and launches, not with the file size.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace parsim::kineto {

// A JSON scalar used as an identifier (pid, tid, correlation, flow id): integers keep their value; strings are interned
// and mapped above kStringKeyBase so that 7 and "7" stay different, as they are in Python dictionaries.
using Key = std::int64_t;
constexpr Key kNoKey = INT64_MIN;
constexpr Key kStringKeyBase = Key{1} << 62;

enum class GpuKind : std::uint8_t { Kernel, Memcpy, Memset };

// Collective metadata as PyTorch records it (record_param_comms args; in newer PyTorch also the NCCL kernel's args).
struct CommMeta {
  std::string collective;          // "Collective name": allreduce, _allgather_base, _reduce_scatter_base, send, …
  std::string dtype;               // Float, BFloat16, Long, …
  std::string pg_name, pg_desc;    // "Process Group Name" / "Process Group Description"
  std::string pg_ranks;            // "Process Group Ranks", a string such as "[0, 1]"
  std::int64_t in_nelems = -1, out_nelems = -1, group_size = -1;
  bool present() const { return !collective.empty(); }
};

struct GpuEvent {
  double ts_us = 0, dur_us = 0;
  Key pid = kNoKey, tid = kNoKey;
  Key correlation = kNoKey, external_id = kNoKey;
  std::int64_t stream = -1;
  std::int32_t name = -1;          // index into TraceData::names
  std::int32_t meta = -1;          // index into TraceData::metas when the event's own args carry collective metadata
  GpuKind kind = GpuKind::Kernel;
};

struct RuntimeEvent {                // a CPU-side CUDA/HIP runtime or driver call
  double ts_us = 0;
  Key pid = kNoKey, tid = kNoKey;
  Key correlation = kNoKey, external_id = kNoKey;
  bool graph_launch = false;         // cudaGraphLaunch / hipGraphLaunch
};

struct FlowEvent {
  Key id = kNoKey, pid = kNoKey, tid = kNoKey;
  bool start = false;                // ph "s" (launch side) or "f" (GPU side)
  bool legacy = false;               // cat async_cpu_to_gpu (old name of ac2g)
};

struct ParamCommsEvent {             // a record_param_comms CPU op
  double ts_us = 0, dur_us = 0;
  Key pid = kNoKey, tid = kNoKey, external_id = kNoKey;
  std::int32_t meta = -1;            // -1 when the op carries no metadata (traces before ~mid-2023)
};

struct StepAnnotation {              // ProfilerStep#N on the CPU side
  double ts_us = 0, dur_us = 0;
  std::int64_t number = -1;
};

struct ProcessGroup {
  std::string name, desc;
  std::int64_t size = -1;
};

struct TraceData {
  std::string path;
  bool has_trace_events = false;
  bool has_device_properties = false;
  std::string device_name;           // deviceProperties[0].name when present
  std::int64_t rank = -1, world_size = -1;
  std::string backend;
  std::vector<ProcessGroup> process_groups;  // distributedInfo.pg_config

  std::vector<GpuEvent> gpu;
  std::vector<RuntimeEvent> runtime;
  std::vector<FlowEvent> flows;
  std::vector<ParamCommsEvent> param_comms;
  std::vector<StepAnnotation> steps;
  std::vector<std::string> names;    // interned GPU event names
  std::vector<CommMeta> metas;

  // TraceLens picks its linking key from the first launch call (a runtime/driver event whose name contains "launch",
  // in file order): "correlation" when that call's args have it, otherwise "External id".
  bool seen_launch = false;
  bool link_by_correlation = true;

  bool has_memory = false;           // any [memory] event on a device (Device Type != 0)
  double peak_allocated_bytes = 0, peak_reserved_bytes = 0;

  std::int64_t events = 0;           // every traceEvents entry seen
  // Complete ("X") events left out because their duration is negative or their time is beyond ±10^18 µs; they count
  // in no figure (profile notes how many).
  std::int64_t unusable_events = 0;
};

// Reads one trace. Throws InputError (one line, naming the file) when the file is missing or a directory, is corrupt
// gzip, is truncated or not JSON, nests deeper than 64 levels, holds one JSON value longer than 64 MiB, or is JSON
// without a `traceEvents` list. Memory: the reader keeps one JSON token at a time (at most 64 MiB) plus the compact
// records above, so it grows with the number of GPU events and launches (about 100 bytes each), not with the file.
TraceData read_trace(const std::string& path);

}  // namespace parsim::kineto

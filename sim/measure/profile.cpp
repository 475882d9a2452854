#include "sim/measure/profile.hpp"

#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace parsim {

// ---- intervals ---------------------------------------------------------------------------------------------------
std::vector<Interval> merge_intervals(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (!out.empty() && iv.start <= out.back().end) out.back().end = std::max(out.back().end, iv.end);
    else out.push_back(iv);
  }
  return out;
}

std::vector<Interval> subtract_intervals(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  std::size_t ai = 0;
  for (const auto& iv : b) {
    double cur = iv.start;
    while (ai < a.size() && a[ai].end <= iv.start) ++ai;
    for (std::size_t k = ai; k < a.size() && a[k].start < iv.end; ++k) {
      if (a[k].start > cur) out.push_back({cur, std::min(iv.end, a[k].start)});
      cur = std::max(cur, a[k].end);
      if (cur >= iv.end) break;
    }
    if (cur < iv.end) out.push_back({cur, iv.end});
  }
  return out;
}

double total_length(const std::vector<Interval>& v) {
  double s = 0;
  for (const auto& iv : v) s += iv.end - iv.start;
  return s;
}

// ---- collectives ---------------------------------------------------------------------------------------------------
std::string to_string(CollType t) {
  switch (t) {
    case CollType::AllReduce: return "all_reduce";
    case CollType::AllGather: return "all_gather";
    case CollType::ReduceScatter: return "reduce_scatter";
    case CollType::AllToAll: return "all_to_all";
    case CollType::Broadcast: return "broadcast";
    case CollType::Reduce: return "reduce";
    case CollType::SendRecv: return "send_recv";
    case CollType::Send: return "send";
    case CollType::Recv: return "recv";
    case CollType::Gather: return "gather";
    case CollType::Scatter: return "scatter";
    case CollType::Barrier: return "barrier";
    case CollType::Unknown: break;
  }
  return "unknown";
}

namespace {
std::string squash(const std::string& s) {  // lower case, without '_' and '-'
  std::string out;
  for (char c : s)
    if (c != '_' && c != '-' && c != ' ') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}
CollType classify_squashed(const std::string& n) {
  auto has = [&](const char* x) { return n.find(x) != std::string::npos; };
  if (has("allreduce")) return CollType::AllReduce;
  if (has("reducescatter")) return CollType::ReduceScatter;
  if (has("allgather")) return CollType::AllGather;
  if (has("alltoall")) return CollType::AllToAll;
  if (has("sendrecv")) return CollType::SendRecv;
  if (has("broadcast") || has("bcast")) return CollType::Broadcast;
  if (has("barrier")) return CollType::Barrier;
  if (has("gather")) return CollType::Gather;
  if (has("scatter")) return CollType::Scatter;
  if (has("reduce")) return CollType::Reduce;
  if (has("send")) return CollType::Send;
  if (has("recv")) return CollType::Recv;
  return CollType::Unknown;
}
}  // namespace

CollType collective_from_metadata(const std::string& collective_name) { return classify_squashed(squash(collective_name)); }

CollType collective_from_kernel_name(const std::string& kernel_name) {
  // The collective is the token after the ncclKernel_/ncclDevKernel_ prefix: ncclKernel_AllReduce_RING_LL_Sum_float,
  // ncclDevKernel_AllGather_RING_LL, ncclKernel_SendRecv_…; RCCL's ncclDevKernel_Generic carries none.
  for (const char* prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    const auto at = kernel_name.find(prefix);
    if (at == std::string::npos) continue;
    const std::size_t b = at + std::char_traits<char>::length(prefix);
    std::size_t e = b;
    while (e < kernel_name.size() && std::isalnum(static_cast<unsigned char>(kernel_name[e]))) ++e;
    const std::string token = squash(kernel_name.substr(b, e - b));
    if (token == "generic") return CollType::Unknown;
    return classify_squashed(token);
  }
  return CollType::Unknown;
}

double dtype_bytes(const std::string& dtype) {
  // PyTorch ScalarType names (c10/core/ScalarType.h) as record_param_comms prints them.
  static const std::map<std::string, double> sizes{
      {"float", 4},       {"float32", 4},   {"double", 8},       {"float64", 8},     {"half", 2},
      {"float16", 2},     {"bfloat16", 2},  {"long", 8},         {"int64", 8},       {"int", 4},
      {"int32", 4},       {"short", 2},     {"int16", 2},        {"char", 1},        {"int8", 1},
      {"byte", 1},        {"uint8", 1},     {"bool", 1},         {"complexfloat", 8}, {"complexdouble", 16},
      {"complexhalf", 4}, {"float8_e4m3fn", 1}, {"float8_e5m2", 1}, {"float8_e4m3fnuz", 1}, {"float8_e5m2fnuz", 1},
      {"uint16", 2},      {"uint32", 4},    {"uint64", 8}};
  const auto it = sizes.find(to_lower(trim(dtype)));
  return it == sizes.end() ? 0.0 : it->second;
}

double nccl_bus_factor(CollType t, int n) {
  if (n <= 0) return 1.0;
  const double nn = n;
  switch (t) {
    case CollType::AllReduce: return 2.0 * (nn - 1) / nn;  // nccl-tests doc/PERFORMANCE.md
    case CollType::AllGather:
    case CollType::ReduceScatter:
    case CollType::AllToAll: return (nn - 1) / nn;
    default: return 1.0;
  }
}

// ---- one rank ------------------------------------------------------------------------------------------------------
namespace {

using kineto::GpuEvent;
using kineto::GpuKind;
using kineto::Key;
using kineto::kNoKey;

struct Key3 {
  Key a, b, c;
  bool operator==(const Key3& o) const { return a == o.a && b == o.b && c == o.c; }
};
struct Key3Hash {
  std::size_t operator()(const Key3& k) const {
    std::size_t h = std::hash<Key>()(k.a);
    h = h * 1000003u ^ std::hash<Key>()(k.b);
    h = h * 1000003u ^ std::hash<Key>()(k.c);
    return h;
  }
};

// TraceLens's TraceToTree.add_gpu_ops_to_tree with `ac2g` flows (plus the legacy name when `legacy` is set).
std::vector<char> link_by_flows(const kineto::TraceData& t, bool legacy) {
  std::vector<char> linked(t.gpu.size(), 0);
  std::unordered_set<Key> starts;
  std::unordered_map<Key, std::pair<Key, Key>> ends;  // flow id → (pid, tid) of the `f` end; last one wins
  for (const auto& f : t.flows) {
    if (f.legacy && !legacy) continue;
    if (f.start) starts.insert(f.id);
    else ends[f.id] = {f.pid, f.tid};
  }
  auto link_value = [&](Key corr, Key ext) { return t.link_by_correlation ? corr : ext; };
  std::unordered_map<Key3, std::size_t, Key3Hash> by_pid_tid;  // (pid, tid, link id) → last GPU event
  std::unordered_map<Key, std::vector<std::size_t>> by_correlation;
  bool any_graph = false;
  for (const auto& r : t.runtime) any_graph = any_graph || r.graph_launch;
  for (std::size_t i = 0; i < t.gpu.size(); ++i) {
    const auto& g = t.gpu[i];
    const Key lid = link_value(g.correlation, g.external_id);
    if (lid != kNoKey && g.pid != kNoKey && g.tid != kNoKey) by_pid_tid[{g.pid, g.tid, lid}] = i;
    if (any_graph && g.correlation != kNoKey) by_correlation[g.correlation].push_back(i);
  }
  for (const auto& r : t.runtime) {
    const Key lid = link_value(r.correlation, r.external_id);
    if (lid == kNoKey) continue;
    if (r.graph_launch) {  // every GPU event of the graph carries the launch's correlation id
      auto it = by_correlation.find(lid);
      if (it != by_correlation.end())
        for (auto i : it->second) linked[i] = 1;
      continue;
    }
    if (!starts.count(lid)) continue;
    auto e = ends.find(lid);
    if (e == ends.end()) continue;
    auto g = by_pid_tid.find({e->second.first, e->second.second, lid});
    if (g != by_pid_tid.end()) linked[g->second] = 1;
  }
  return linked;
}

std::vector<char> link_by_correlation_only(const kineto::TraceData& t) {
  std::unordered_set<Key> corr;
  for (const auto& r : t.runtime)
    if (r.correlation != kNoKey) corr.insert(r.correlation);
  std::vector<char> linked(t.gpu.size(), 0);
  for (std::size_t i = 0; i < t.gpu.size(); ++i)
    linked[i] = t.gpu[i].correlation != kNoKey && corr.count(t.gpu[i].correlation) ? 1 : 0;
  return linked;
}

std::int64_t count(const std::vector<char>& v) { return std::count(v.begin(), v.end(), 1); }

bool is_comm(const kineto::TraceData& t, const GpuEvent& g) {
  // TraceLens GPUEventAnalyser.get_gpu_event_lists: kernels and memsets whose name contains "nccl" (case-sensitive).
  return g.kind != GpuKind::Memcpy && t.names[static_cast<std::size_t>(g.name)].find("nccl") != std::string::npos;
}

int ranks_in_list(const std::string& s) {  // "[0, 1, 2]" → 3
  int n = 0;
  bool in_number = false;
  for (char c : s) {
    const bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (digit && !in_number) ++n;
    in_number = digit;
  }
  return n;
}

}  // namespace

RankProfile profile_rank(const kineto::TraceData& t, const ProfileOptions& opt, int fallback_rank) {
  RankProfile p;
  p.file = utf8_sanitize(t.path);  // goes to JSON output, which must be UTF-8; a path may hold any bytes
  p.rank = t.rank >= 0 ? static_cast<int>(t.rank) : fallback_rank;
  p.world_size = t.world_size;
  p.device = t.has_device_properties && !t.device_name.empty() ? t.device_name : "unknown";
  p.gpu_events = static_cast<std::int64_t>(t.gpu.size());
  p.has_memory = t.has_memory;
  p.peak_allocated_bytes = t.peak_allocated_bytes;
  p.peak_reserved_bytes = t.peak_reserved_bytes;
  if (t.rank < 0) p.notes.push_back("no distributedInfo.rank: rank taken from the file's position (" +
                                    std::to_string(fallback_rank) + ")");
  if (!t.has_device_properties) p.notes.push_back("no deviceProperties in the trace");
  if (t.unusable_events > 0)
    p.notes.push_back(std::to_string(t.unusable_events) + " complete event(s) with a negative duration or a time beyond "
                      "±1e18 us left out of every figure (a kernel has no length to measure when its end precedes its "
                      "start)");

  // Steps (CPU-side ProfilerStep#N annotations), in time order.
  std::vector<kineto::StepAnnotation> steps = t.steps;
  std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.ts_us < b.ts_us; });
  for (const auto& s : steps) p.steps.push_back({s.number, s.ts_us, s.dur_us * 1e-6});
  // HTA's step set: all but the last when there are several (TraceAnalysis include_last_profiler_step=False).
  const std::size_t hta_steps = steps.size() > 1 ? steps.size() - 1 : steps.size();
  if (hta_steps > 0) {
    double sum = 0;
    for (std::size_t i = 0; i < hta_steps; ++i) sum += steps[i].dur_us;
    p.step_mean_s = sum / static_cast<double>(hta_steps) * 1e-6;
  }
  p.steps_measured = static_cast<int>(hta_steps);

  if (t.gpu.empty()) {
    p.linking = "none";
    p.notes.push_back("no GPU events (kernels, memcpys, memsets) in the trace: nothing to measure");
    return p;
  }

  // ---- link GPU events to their launches ----
  std::vector<char> linked = link_by_flows(t, false);
  const std::string key_name = t.link_by_correlation ? "correlation" : "External id";
  p.linking = "ac2g flows by " + key_name;
  if (count(linked) == 0) {
    const bool has_legacy = std::any_of(t.flows.begin(), t.flows.end(), [](const auto& f) { return f.legacy; });
    if (has_legacy) {
      linked = link_by_flows(t, true);
      p.linking = "legacy async_cpu_to_gpu flows by " + key_name;
      p.notes.push_back("launch flows use the old name async_cpu_to_gpu, which TraceLens ignores (TraceLens finds no "
                        "GPU events here); parsim links through them");
    }
    if (count(linked) == 0) {
      linked = link_by_correlation_only(t);
      p.linking = "correlation ids (no launch flows)";
      p.notes.push_back("no usable launch flows: GPU events linked to runtime launches by correlation id "
                        "(TraceLens finds no GPU events here)");
    }
  } else {
    // Events TraceLens leaves out although a legacy flow ties them to a launch (traces mixing both names, or CUDA graphs
    // beside old-style launches): say how much the default misses.
    const bool has_legacy = std::any_of(t.flows.begin(), t.flows.end(), [](const auto& f) { return f.legacy; });
    if (has_legacy) {
      const auto wider = link_by_flows(t, true);
      std::int64_t extra = 0, extra_comm = 0;
      for (std::size_t i = 0; i < t.gpu.size(); ++i)
        if (wider[i] && !linked[i]) {
          ++extra;
          if (is_comm(t, t.gpu[i])) ++extra_comm;
        }
      if (extra > 0 && !opt.all_kernels)
        p.notes.push_back(std::to_string(extra) + " GPU events (" + std::to_string(extra_comm) +
                          " NCCL kernels) are tied to their launch only by legacy async_cpu_to_gpu flows, which "
                          "TraceLens's default (and this one) ignores; --all-kernels counts them");
    }
  }
  const std::int64_t n_linked = count(linked);
  if (opt.all_kernels) {
    std::fill(linked.begin(), linked.end(), 1);
    p.linking += " (--all-kernels: every GPU event counted)";
  } else if (n_linked < p.gpu_events) {
    p.notes.push_back(std::to_string(p.gpu_events - n_linked) + " of " + std::to_string(p.gpu_events) +
                      " GPU events have no CPU launch and are not counted (--all-kernels counts them)");
  }

  // ---- --steps: keep GPU work launched inside the ProfilerStep windows ----
  if (opt.steps) {
    if (steps.size() > 1) {
      const double lo = steps.front().ts_us;
      const double hi = steps[hta_steps - 1].ts_us + steps[hta_steps - 1].dur_us;
      std::unordered_map<Key, double> launch_ts;
      for (const auto& r : t.runtime)
        if (r.correlation != kNoKey) launch_ts[r.correlation] = r.ts_us;
      for (std::size_t i = 0; i < t.gpu.size(); ++i) {
        if (!linked[i]) continue;
        const auto& g = t.gpu[i];
        double when = g.ts_us;
        if (g.correlation != kNoKey) {
          auto it = launch_ts.find(g.correlation);
          if (it != launch_ts.end()) when = it->second;
        }
        if (when < lo || when >= hi) linked[i] = 0;
      }
      p.notes.push_back("--steps: GPU work launched in ProfilerStep#" + std::to_string(steps.front().number) + "–#" +
                        std::to_string(steps[hta_steps - 1].number) + " (the last step is left out, as HTA does)");
    } else if (steps.size() == 1) {
      p.notes.push_back("--steps: a single ProfilerStep, so the whole trace is measured (as HTA does)");
    } else {
      p.steps_measured = 0;
      p.notes.push_back("--steps: no ProfilerStep annotations in the trace, so the whole trace is measured");
    }
  }

  // ---- timeline metrics ----
  std::vector<Interval> comp, comm, memcpy, memset, all;
  double base = INFINITY;
  for (std::size_t i = 0; i < t.gpu.size(); ++i)
    if (linked[i]) base = std::min(base, t.gpu[i].ts_us);
  for (std::size_t i = 0; i < t.gpu.size(); ++i) {
    if (!linked[i]) continue;
    const auto& g = t.gpu[i];
    ++p.counted_events;
    // end = ts + dur in absolute µs first, as TraceLens and HTA compute it: with µs-since-epoch timestamps near 1.7e15
    // a double resolves 0.25 µs, and rounding the end there (not the duration) reproduces their numbers exactly.
    const Interval iv{g.ts_us - base, (g.ts_us + g.dur_us) - base};
    all.push_back(iv);
    if (g.kind == GpuKind::Memcpy) {
      memcpy.push_back(iv);
    } else if (is_comm(t, g)) {
      comm.push_back(iv);
    } else {
      comp.push_back(iv);
      if (g.kind == GpuKind::Memset) memset.push_back(iv);
    }
  }
  if (p.counted_events == 0) {
    p.notes.push_back("no GPU event is left to measure after linking" + std::string(opt.steps ? " and --steps" : ""));
    return p;
  }
  p.measurable = true;
  comp = merge_intervals(std::move(comp));
  comm = merge_intervals(std::move(comm));
  memcpy = merge_intervals(std::move(memcpy));
  memset = merge_intervals(std::move(memset));
  all = merge_intervals(std::move(all));
  const double total = all.back().end - all.front().start;
  const double busy = total_length(all);
  p.window_start_us = base + all.front().start;
  p.window_end_us = base + all.back().end;
  p.total_s = total * 1e-6;
  p.compute_s = total_length(comp) * 1e-6;
  p.comm_s = total_length(comm) * 1e-6;
  p.exposed_comm_s = total_length(subtract_intervals(comp, comm)) * 1e-6;
  p.memcpy_s = total_length(memcpy) * 1e-6;
  p.exposed_memcpy_s = total_length(subtract_intervals(comm, subtract_intervals(comp, memcpy))) * 1e-6;
  p.memset_s = total_length(memset) * 1e-6;
  p.busy_s = busy * 1e-6;
  p.idle_s = (total - busy) * 1e-6;

  // ---- collectives: metadata from the kernel's args, its record_param_comms (External id), or order ----
  std::unordered_map<Key, std::int32_t> meta_by_ext;
  std::vector<const kineto::ParamCommsEvent*> rpc_with_meta;
  for (const auto& r : t.param_comms) {
    if (r.meta < 0) continue;
    if (r.external_id != kNoKey) meta_by_ext[r.external_id] = r.meta;
    rpc_with_meta.push_back(&r);
  }
  std::sort(rpc_with_meta.begin(), rpc_with_meta.end(), [](auto* a, auto* b) { return a->ts_us < b->ts_us; });
  std::vector<std::size_t> comm_idx;
  for (std::size_t i = 0; i < t.gpu.size(); ++i)
    if (linked[i] && is_comm(t, t.gpu[i]) && t.gpu[i].kind == GpuKind::Kernel) comm_idx.push_back(i);
  std::sort(comm_idx.begin(), comm_idx.end(), [&](auto a, auto b) { return t.gpu[a].ts_us < t.gpu[b].ts_us; });
  p.comm_kernels = static_cast<std::int64_t>(comm_idx.size());
  std::vector<std::int32_t> meta(comm_idx.size(), -1);
  std::vector<std::string> source(comm_idx.size(), "kernel name");
  std::size_t unmatched = 0;
  for (std::size_t k = 0; k < comm_idx.size(); ++k) {
    const auto& g = t.gpu[comm_idx[k]];
    if (g.meta >= 0) {
      meta[k] = g.meta;
      source[k] = "kernel args";
    } else if (g.external_id != kNoKey && meta_by_ext.count(g.external_id)) {
      meta[k] = meta_by_ext[g.external_id];
      source[k] = "record_param_comms";
    } else {
      ++unmatched;
    }
  }
  // Fallback by order: when no kernel matched by id but the counts agree, the k-th kernel is the k-th record.
  if (unmatched == comm_idx.size() && !comm_idx.empty() && rpc_with_meta.size() == comm_idx.size()) {
    for (std::size_t k = 0; k < comm_idx.size(); ++k) {
      meta[k] = rpc_with_meta[k]->meta;
      source[k] = "record_param_comms (sequence)";
    }
  }
  std::map<std::string, std::int64_t> pg_sizes;
  for (const auto& pg : t.process_groups) pg_sizes[pg.name] = pg.size;
  bool guessed_group = false;
  for (std::size_t k = 0; k < comm_idx.size(); ++k) {
    const auto& g = t.gpu[comm_idx[k]];
    CollectiveCall c;
    c.start_us = g.ts_us;
    c.dur_us = g.dur_us;
    c.source = source[k];
    const std::string& kname = t.names[static_cast<std::size_t>(g.name)];
    c.type = collective_from_kernel_name(kname);
    if (meta[k] >= 0) {
      const auto& m = t.metas[static_cast<std::size_t>(meta[k])];
      const CollType from_meta = collective_from_metadata(m.collective);
      if (from_meta != CollType::Unknown) c.type = from_meta;
      c.dtype = m.dtype;
      c.process_group = m.pg_name;
      const double eb = dtype_bytes(m.dtype);
      const auto nel = std::max(m.in_nelems, m.out_nelems);
      if (eb > 0 && nel >= 0) c.bytes = eb * static_cast<double>(nel);
      if (m.group_size > 0) c.group_size = static_cast<int>(m.group_size);
      else if (!m.pg_ranks.empty() && ranks_in_list(m.pg_ranks) > 0) c.group_size = ranks_in_list(m.pg_ranks);
      else if (pg_sizes.count(m.pg_name) && pg_sizes[m.pg_name] > 0) c.group_size = static_cast<int>(pg_sizes[m.pg_name]);
    }
    if (c.group_size <= 0 && t.world_size > 0) {
      c.group_size = static_cast<int>(t.world_size);
      guessed_group = true;
    }
    p.collectives.push_back(c);
  }
  if (guessed_group)
    p.notes.push_back("some collectives carry no group size: the world size is used for their bus bandwidth");
  const auto unknown = std::count_if(p.collectives.begin(), p.collectives.end(),
                                     [](const auto& c) { return c.type == CollType::Unknown; });
  if (unknown > 0)
    p.notes.push_back(std::to_string(unknown) + " communication kernels name no collective (e.g. RCCL's "
                      "ncclDevKernel_Generic) and have no record_param_comms metadata: type unknown");
  return p;
}

// ---- several ranks -------------------------------------------------------------------------------------------------
std::vector<CollectiveStats> collective_stats(const std::vector<RankProfile>& ranks) {
  struct Acc {
    CollectiveStats s;
    std::vector<int> ranks;
  };
  std::map<std::tuple<int, std::string, double, int, std::string>, Acc> groups;
  for (const auto& r : ranks) {
    for (const auto& c : r.collectives) {
      auto key = std::make_tuple(static_cast<int>(c.type), c.dtype, c.bytes, c.group_size, c.process_group);
      auto& a = groups[key];
      auto& s = a.s;
      const double d = c.dur_us * 1e-6;
      if (s.count == 0) {
        s.type = c.type;
        s.dtype = c.dtype;
        s.bytes = c.bytes;
        s.group_size = c.group_size;
        s.process_group = c.process_group;
        s.source = c.source;
        s.min_s = s.max_s = d;
      }
      ++s.count;
      s.total_s += d;
      s.min_s = std::min(s.min_s, d);
      s.max_s = std::max(s.max_s, d);
      if (std::find(a.ranks.begin(), a.ranks.end(), r.rank) == a.ranks.end()) a.ranks.push_back(r.rank);
    }
  }
  std::vector<CollectiveStats> out;
  for (auto& [key, a] : groups) {
    auto s = a.s;
    s.ranks = static_cast<int>(a.ranks.size());
    s.mean_s = s.total_s / static_cast<double>(s.count);
    if (s.bytes > 0 && s.mean_s > 0) {
      // nccl-tests doc/PERFORMANCE.md: algbw = S / t; busbw = algbw × bus factor (all-reduce 2(n−1)/n, …)
      s.algbw_GBps = s.bytes / s.mean_s / 1e9;
      s.busbw_GBps = s.algbw_GBps * nccl_bus_factor(s.type, s.group_size);
    }
    out.push_back(s);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.total_s > b.total_s; });
  return out;
}

void cross_rank_analysis(ProfileReport& report) {
  const std::size_t n = report.ranks.size();
  report.clock_offset_s.assign(n, 0.0);
  report.mean_late_s.assign(n, 0.0);
  report.skew.clear();
  report.straggler_rank = -1;
  if (n < 2) return;
  // Occurrence k of (type, bytes, group) on every rank that ran it is one collective.
  using SeriesKey = std::tuple<int, double, std::string>;
  std::vector<std::map<SeriesKey, std::vector<const CollectiveCall*>>> series(n);
  for (std::size_t r = 0; r < n; ++r)
    for (const auto& c : report.ranks[r].collectives)
      series[r][{static_cast<int>(c.type), c.bytes, c.process_group}].push_back(&c);
  // Ranks' host clocks differ (different nodes). A collective ends almost together everywhere (no rank can finish
  // before the last one has sent its data), so the median end-time difference to the first rank estimates the offset.
  for (std::size_t r = 1; r < n; ++r) {
    std::vector<double> diffs;
    for (const auto& [key, calls0] : series[0]) {
      auto it = series[r].find(key);
      if (it == series[r].end()) continue;
      const std::size_t m = std::min(calls0.size(), it->second.size());
      for (std::size_t k = 0; k < m; ++k)
        diffs.push_back((it->second[k]->start_us + it->second[k]->dur_us) - (calls0[k]->start_us + calls0[k]->dur_us));
    }
    if (diffs.empty()) continue;
    std::nth_element(diffs.begin(), diffs.begin() + static_cast<long>(diffs.size() / 2), diffs.end());
    report.clock_offset_s[r] = diffs[diffs.size() / 2] * 1e-6;
  }
  std::set<SeriesKey> keys;
  for (const auto& s : series)
    for (const auto& [key, calls] : s) keys.insert(key);
  std::vector<double> late_sum(n, 0.0);
  std::vector<std::int64_t> late_count(n, 0);
  for (const auto& key : keys) {
    SkewStats st;
    st.type = static_cast<CollType>(std::get<0>(key));
    st.bytes = std::get<1>(key);
    st.process_group = std::get<2>(key);
    std::vector<int> last_counts(n, 0);
    for (std::size_t k = 0;; ++k) {
      std::vector<std::pair<double, std::size_t>> starts;  // aligned start, rank index
      for (std::size_t r = 0; r < n; ++r) {
        auto it = series[r].find(key);
        if (it != series[r].end() && k < it->second.size())
          starts.push_back({it->second[k]->start_us * 1e-6 - report.clock_offset_s[r], r});
      }
      if (starts.size() < 2) break;
      auto [mn, mx] = std::minmax_element(starts.begin(), starts.end());
      const double skew = mx->first - mn->first;
      ++st.instances;
      st.mean_skew_s += skew;
      st.max_skew_s = std::max(st.max_skew_s, skew);
      ++last_counts[mx->second];
      for (const auto& [s, r] : starts) {
        late_sum[r] += s - mn->first;
        ++late_count[r];
      }
    }
    if (st.instances == 0) continue;
    st.mean_skew_s /= static_cast<double>(st.instances);
    const auto best = std::max_element(last_counts.begin(), last_counts.end()) - last_counts.begin();
    st.last_rank = report.ranks[static_cast<std::size_t>(best)].rank;
    report.skew.push_back(st);
  }
  double worst = -1;
  for (std::size_t r = 0; r < n; ++r) {
    if (late_count[r] == 0) continue;
    report.mean_late_s[r] = late_sum[r] / static_cast<double>(late_count[r]);
    if (report.mean_late_s[r] > worst) {
      worst = report.mean_late_s[r];
      report.straggler_rank = report.ranks[r].rank;
    }
  }
  if (report.skew.empty())
    report.notes.push_back("no collective appears on two or more ranks: no start skew to report");
}

ProfileReport profile_traces(const std::vector<std::string>& files, const ProfileOptions& opt) {
  if (files.empty()) throw InputError("profile needs at least one trace file (Kineto JSON, plain or .gz)");
  ProfileReport report;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto trace = kineto::read_trace(files[i]);
    report.ranks.push_back(profile_rank(trace, opt, static_cast<int>(i)));
  }
  const bool any = std::any_of(report.ranks.begin(), report.ranks.end(), [](const auto& r) { return r.measurable; });
  if (!any) {
    const auto& r = report.ranks.front();
    std::string why = r.gpu_events == 0 ? "it has no GPU events (kernels, memcpys, memsets)"
                                        : "none of its GPU events is left to measure";
    throw InputError(files.size() == 1 ? "nothing to measure in '" + files.front() + "': " + why
                                       : "nothing to measure: no trace has GPU events to measure");
  }
  std::map<int, int> seen;
  for (const auto& r : report.ranks) ++seen[r.rank];
  for (const auto& [rank, n] : seen)
    if (n > 1) report.notes.push_back("rank " + std::to_string(rank) + " appears in " + std::to_string(n) + " files");
  report.collectives = collective_stats(report.ranks);
  cross_rank_analysis(report);
  return report;
}

}  // namespace parsim

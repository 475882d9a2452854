// Rendering of `parsim profile` results: JSON (docs/cli.md contract keys first) and a plain-text table.
#include "sim/measure/profile.hpp"

#include "sim/core/json_strict.hpp"
#include "sim/core/text.hpp"
#include "sim/core/types.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <iomanip>
#include <sstream>

namespace parsim {
namespace {

using ojson = nlohmann::ordered_json;

ojson num_or_null(double v, bool valid = true) { return valid && std::isfinite(v) ? ojson(v) : ojson(nullptr); }

std::string human_bytes(double b) {
  if (b < 0) return "?";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  std::ostringstream o;
  o << (u == 0 ? fmt_fixed(b, 0) : fmt_num(b, 4)) << " " << units[u];
  return o.str();
}

ojson stats_json(const std::vector<CollectiveStats>& stats) {
  ojson arr = ojson::array();
  for (const auto& s : stats) {
    ojson j;
    j["type"] = to_string(s.type);
    j["dtype"] = s.dtype.empty() ? ojson(nullptr) : ojson(s.dtype);
    j["bytes"] = s.bytes >= 0 ? ojson(static_cast<std::int64_t>(std::llround(s.bytes))) : ojson(nullptr);
    j["group_size"] = s.group_size > 0 ? ojson(s.group_size) : ojson(nullptr);
    j["process_group"] = s.process_group.empty() ? ojson(nullptr) : ojson(s.process_group);
    j["count"] = s.count;
    j["ranks"] = s.ranks;
    j["mean_us"] = s.mean_s * 1e6;
    j["min_us"] = s.min_s * 1e6;
    j["max_us"] = s.max_s * 1e6;
    j["total_s"] = s.total_s;
    j["algbw_gbytes_per_s"] = num_or_null(s.algbw_GBps, s.algbw_GBps >= 0);
    j["busbw_gbytes_per_s"] = num_or_null(s.busbw_GBps, s.busbw_GBps >= 0);
    j["source"] = s.source;
    arr.push_back(j);
  }
  return arr;
}

}  // namespace

std::string profile_json(const ProfileReport& report) {
  ojson root;
  ojson ranks = ojson::array();
  for (const auto& r : report.ranks) {
    ojson j;
    j["rank"] = r.rank;
    j["total_s"] = r.total_s;
    j["compute_s"] = r.compute_s;
    j["comm_s"] = r.comm_s;
    j["exposed_comm_s"] = r.exposed_comm_s;
    j["idle_s"] = r.idle_s;
    j["memcpy_s"] = r.memcpy_s;
    j["exposed_memcpy_s"] = r.exposed_memcpy_s;
    j["memset_s"] = r.memset_s;
    j["busy_s"] = r.busy_s;
    j["measurable"] = r.measurable;
    j["file"] = r.file;
    j["device"] = r.device;
    j["world_size"] = r.world_size > 0 ? ojson(r.world_size) : ojson(nullptr);
    j["linking"] = r.linking;
    j["gpu_events"] = r.gpu_events;
    j["counted_gpu_events"] = r.counted_events;
    j["comm_kernels"] = r.comm_kernels;
    j["window_us"] = {{"start", r.window_start_us}, {"end", r.window_end_us}};
    ojson steps;
    steps["count"] = r.steps.size();
    steps["measured"] = r.steps_measured;
    steps["mean_s"] = num_or_null(r.step_mean_s, r.step_mean_s >= 0);
    ojson numbers = ojson::array();
    for (const auto& s : r.steps) numbers.push_back(s.number);
    steps["numbers"] = numbers;
    j["steps"] = steps;
    if (r.has_memory) {
      j["memory"] = {{"peak_allocated_bytes", r.peak_allocated_bytes},
                     {"peak_allocated_gib", r.peak_allocated_bytes / kGiB},
                     {"peak_reserved_bytes", r.peak_reserved_bytes},
                     {"peak_reserved_gib", r.peak_reserved_bytes / kGiB}};
    } else {
      j["memory"] = nullptr;
    }
    j["collectives"] = stats_json(collective_stats({r}));
    j["notes"] = r.notes;
    ranks.push_back(j);
  }
  root["ranks"] = ranks;
  root["collectives"] = stats_json(report.collectives);
  ojson skew = ojson::array();
  for (const auto& s : report.skew) {
    skew.push_back({{"type", to_string(s.type)},
                    {"bytes", s.bytes >= 0 ? ojson(static_cast<std::int64_t>(std::llround(s.bytes))) : ojson(nullptr)},
                    {"process_group", s.process_group.empty() ? ojson(nullptr) : ojson(s.process_group)},
                    {"instances", s.instances},
                    {"mean_skew_us", s.mean_skew_s * 1e6},
                    {"max_skew_us", s.max_skew_s * 1e6},
                    {"last_rank", s.last_rank}});
  }
  root["skew"] = skew;
  if (report.ranks.size() > 1) {
    ojson late = ojson::object(), offset = ojson::object();
    for (std::size_t i = 0; i < report.ranks.size(); ++i) {
      const auto key = std::to_string(report.ranks[i].rank);
      late[key] = i < report.mean_late_s.size() ? report.mean_late_s[i] * 1e6 : 0.0;
      offset[key] = i < report.clock_offset_s.size() ? report.clock_offset_s[i] * 1e6 : 0.0;
    }
    root["stragglers"] = {{"slowest_rank", report.straggler_rank >= 0 ? ojson(report.straggler_rank) : ojson(nullptr)},
                          {"mean_late_us", late},
                          {"clock_offset_us", offset}};
  } else {
    root["stragglers"] = nullptr;
  }
  root["notes"] = report.notes;
  return dump_output(root) + "\n";
}

std::string profile_table(const ProfileReport& report) {
  std::ostringstream o;
  auto ms = [](double s) { return fmt_fixed(s * 1e3, 3); };
  auto pct = [](double a, double b) { return b > 0 ? fmt_fixed(100.0 * a / b, 1) : std::string("-"); };
  o << "GPU timeline per rank (TraceLens definitions; times in ms)\n";
  o << std::left << std::setw(6) << "rank" << std::right << std::setw(12) << "window" << std::setw(12) << "compute"
    << std::setw(12) << "comm" << std::setw(12) << "exp.comm" << std::setw(12) << "memcpy" << std::setw(12) << "idle"
    << std::setw(10) << "comp %" << std::setw(8) << "steps" << std::setw(14) << "peak alloc" << "  device\n";
  for (const auto& r : report.ranks) {
    o << std::left << std::setw(6) << r.rank << std::right;
    if (!r.measurable) {
      o << "  no GPU events to measure (" << r.file << ")\n";
      continue;
    }
    o << std::setw(12) << ms(r.total_s) << std::setw(12) << ms(r.compute_s) << std::setw(12) << ms(r.comm_s)
      << std::setw(12) << ms(r.exposed_comm_s) << std::setw(12) << ms(r.memcpy_s) << std::setw(12) << ms(r.idle_s)
      << std::setw(10) << pct(r.compute_s, r.total_s) << std::setw(8) << r.steps_measured << std::setw(14)
      << (r.has_memory ? fmt_num(r.peak_allocated_bytes / kGiB, 4) + " GiB" : std::string("-")) << "  " << r.device
      << "\n";
  }
  for (const auto& r : report.ranks) {
    if (r.measurable && r.step_mean_s > 0)
      o << "rank " << r.rank << ": mean ProfilerStep " << ms(r.step_mean_s) << " ms over " << r.steps_measured
        << " steps; " << r.counted_events << " of " << r.gpu_events << " GPU events counted (" << r.linking << ")\n";
    else if (r.measurable)
      o << "rank " << r.rank << ": " << r.counted_events << " of " << r.gpu_events << " GPU events counted ("
        << r.linking << ")\n";
  }
  if (!report.collectives.empty()) {
    o << "\nCollectives (all ranks; busbw = algbw x bus factor, nccl-tests convention)\n";
    o << std::left << std::setw(16) << "type" << std::setw(10) << "dtype" << std::right << std::setw(12) << "size"
      << std::setw(6) << "n" << std::setw(8) << "count" << std::setw(12) << "mean us" << std::setw(12) << "min us"
      << std::setw(12) << "max us" << std::setw(12) << "busbw GB/s" << "  source\n";
    for (const auto& s : report.collectives) {
      o << std::left << std::setw(16) << to_string(s.type) << std::setw(10) << (s.dtype.empty() ? "-" : s.dtype)
        << std::right << std::setw(12) << (s.bytes >= 0 ? human_bytes(s.bytes) : std::string("?")) << std::setw(6)
        << (s.group_size > 0 ? std::to_string(s.group_size) : std::string("?")) << std::setw(8) << s.count
        << std::setw(12) << fmt_fixed(s.mean_s * 1e6, 1) << std::setw(12) << fmt_fixed(s.min_s * 1e6, 1)
        << std::setw(12) << fmt_fixed(s.max_s * 1e6, 1) << std::setw(12)
        << (s.busbw_GBps >= 0 ? fmt_fixed(s.busbw_GBps, 2) : std::string("-")) << "  " << s.source << "\n";
    }
  }
  if (!report.skew.empty()) {
    o << "\nStart skew across ranks (clocks aligned on collective end times)\n";
    o << std::left << std::setw(16) << "type" << std::right << std::setw(12) << "size" << std::setw(10) << "matched"
      << std::setw(14) << "mean skew us" << std::setw(14) << "max skew us" << std::setw(12) << "last rank\n";
    for (const auto& s : report.skew)
      o << std::left << std::setw(16) << to_string(s.type) << std::right << std::setw(12) << human_bytes(s.bytes)
        << std::setw(10) << s.instances << std::setw(14) << fmt_fixed(s.mean_skew_s * 1e6, 1) << std::setw(14)
        << fmt_fixed(s.max_skew_s * 1e6, 1) << std::setw(11) << s.last_rank << "\n";
    if (report.straggler_rank >= 0) o << "slowest rank (largest mean lateness): " << report.straggler_rank << "\n";
  }
  bool header = false;
  for (const auto& r : report.ranks)
    for (const auto& n : r.notes) {
      if (!header) o << "\nNotes\n";
      header = true;
      o << "rank " << r.rank << ": " << n << "\n";
    }
  for (const auto& n : report.notes) {
    if (!header) o << "\nNotes\n";
    header = true;
    o << n << "\n";
  }
  return o.str();
}

}  // namespace parsim

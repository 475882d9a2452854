#include "sim/engine/engine.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace parsim::engine {

// ---------------------------------------------------------------- TaskGraph
void TaskGraph::clear() {
  duration_.clear();
  stream_.clear();
  tag_.clear();
  dep_from_.clear();
  dep_to_.clear();
  stream_device_.clear();
  stream_class_.clear();
  device_slowdown_.clear();
}

void TaskGraph::reserve(std::size_t tasks, std::size_t deps) {
  duration_.reserve(tasks);
  stream_.reserve(tasks);
  tag_.reserve(tasks);
  dep_from_.reserve(deps);
  dep_to_.reserve(deps);
}

int TaskGraph::add_device(double comm_slowdown) {
  device_slowdown_.push_back(comm_slowdown);
  return static_cast<int>(device_slowdown_.size()) - 1;
}

StreamId TaskGraph::add_stream(int device, StreamClass cls) {
  if (device < 0 || device >= static_cast<int>(device_slowdown_.size())) throw std::logic_error("add_stream: bad device");
  stream_device_.push_back(device);
  stream_class_.push_back(cls);
  return static_cast<StreamId>(stream_device_.size() - 1);
}

TaskId TaskGraph::add_task(StreamId stream, TimeNs duration, std::uint32_t tag) {
  if (stream >= stream_device_.size()) throw std::logic_error("add_task: bad stream");
  if (duration < 0) throw std::logic_error("add_task: negative duration");
  duration_.push_back(duration);
  stream_.push_back(stream);
  tag_.push_back(tag);
  return static_cast<TaskId>(duration_.size() - 1);
}

void TaskGraph::add_dep(TaskId before, TaskId after) {
  dep_from_.push_back(before);
  dep_to_.push_back(after);
}

const std::vector<std::pair<TaskId, TaskId>> TaskGraph::edges() const {
  std::vector<std::pair<TaskId, TaskId>> e;
  e.reserve(dep_from_.size());
  for (std::size_t i = 0; i < dep_from_.size(); ++i) e.emplace_back(dep_from_[i], dep_to_[i]);
  return e;
}

std::string TaskGraph::check_acyclic() const {
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  G g(duration_.size());
  for (std::size_t i = 0; i < dep_from_.size(); ++i) boost::add_edge(dep_from_[i], dep_to_[i], g);
  std::vector<TaskId> last(stream_device_.size(), static_cast<TaskId>(-1));
  for (TaskId t = 0; t < duration_.size(); ++t) {  // stream order is an implicit dependency
    if (last[stream_[t]] != static_cast<TaskId>(-1)) boost::add_edge(last[stream_[t]], t, g);
    last[stream_[t]] = t;
  }
  std::vector<std::size_t> order;
  try {
    boost::topological_sort(g, std::back_inserter(order));
  } catch (const boost::not_a_dag&) {
    return "task graph has a cycle through its dependencies and stream order";
  }
  return {};
}

// ---------------------------------------------------------------- Executor
void Executor::push(TimeNs t, TaskId task) {
  heap_.push_back(Event{t, seq_++, task, version_[task]});
  std::push_heap(heap_.begin(), heap_.end(), [](const Event& a, const Event& b) {
    return a.time != b.time ? a.time > b.time : a.seq > b.seq;  // min-heap on (time, seq)
  });
}

namespace {
TimeNs stretched(double work_ns, double rate) { return static_cast<TimeNs>(std::llround(work_ns / rate)); }
}  // namespace

void Executor::try_start(const TaskGraph& g, StreamId s, TimeNs now, Timeline& out) {
  if (stream_busy_[s] || stream_pos_[s] == stream_begin_[s + 1]) return;
  TaskId t = stream_tasks_[stream_pos_[s]];
  if (pending_preds_[t] != 0) return;
  ++stream_pos_[s];
  stream_busy_[s] = 1;
  stream_running_[s] = t;
  out.start[t] = now;
  const int dev = g.stream_device_[s];
  if (g.stream_class_[s] == StreamClass::Comm) {
    push(now + g.duration_[t], t);
    set_comm_active(g, dev, +1, now);
    return;
  }
  const double sd = g.device_slowdown_[dev];
  remaining_[t] = static_cast<double>(g.duration_[t]);
  last_update_[t] = now;
  const double rate = (sd > 0 && device_comm_active_[dev] > 0) ? 1.0 / (1.0 + sd) : 1.0;
  push(now + stretched(remaining_[t], rate), t);
}

void Executor::set_comm_active(const TaskGraph& g, int device, int delta, TimeNs now) {
  const int before = device_comm_active_[device];
  device_comm_active_[device] += delta;
  const double sd = g.device_slowdown_[device];
  if (sd <= 0 || (before > 0) == (device_comm_active_[device] > 0)) return;
  const double old_rate = before > 0 ? 1.0 / (1.0 + sd) : 1.0;
  const double new_rate = device_comm_active_[device] > 0 ? 1.0 / (1.0 + sd) : 1.0;
  // Re-plan the running compute tasks of this device: work done so far at the old rate, the rest at the new one.
  for (std::uint32_t i = device_begin_[device]; i < device_begin_[device + 1]; ++i) {
    const StreamId s = device_compute_[i];
    if (!stream_busy_[s]) continue;
    TaskId t = stream_running_[s];
    remaining_[t] = std::max(0.0, remaining_[t] - static_cast<double>(now - last_update_[t]) * old_rate);
    last_update_[t] = now;
    ++version_[t];
    push(now + stretched(remaining_[t], new_rate), t);
  }
}

void Executor::run(const TaskGraph& g, Timeline& out) {
  const std::size_t n = g.duration_.size(), ns = g.stream_device_.size();
  out.start.assign(n, 0);
  out.end.assign(n, -1);
  out.makespan = 0;
  out.events = 0;

  // CSR successor lists (counting sort keeps insertion order: deterministic).
  succ_begin_.assign(n + 1, 0);
  pending_preds_.assign(n, 0);
  for (std::size_t i = 0; i < g.dep_from_.size(); ++i) {
    ++succ_begin_[g.dep_from_[i] + 1];
    ++pending_preds_[g.dep_to_[i]];
  }
  for (std::size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
  succ_.resize(g.dep_from_.size());
  {
    std::vector<std::uint32_t>& fill = stream_pos_;  // reuse as a cursor
    fill.assign(succ_begin_.begin(), succ_begin_.end() - 1);
    for (std::size_t i = 0; i < g.dep_from_.size(); ++i) succ_[fill[g.dep_from_[i]]++] = g.dep_to_[i];
  }
  // Per-stream task lists in insertion order.
  stream_begin_.assign(ns + 1, 0);
  for (std::size_t t = 0; t < n; ++t) ++stream_begin_[g.stream_[t] + 1];
  for (std::size_t s = 0; s < ns; ++s) stream_begin_[s + 1] += stream_begin_[s];
  stream_tasks_.resize(n);
  stream_pos_.assign(stream_begin_.begin(), stream_begin_.end() - 1);
  for (std::size_t t = 0; t < n; ++t) stream_tasks_[stream_pos_[g.stream_[t]]++] = static_cast<TaskId>(t);
  stream_pos_.assign(stream_begin_.begin(), stream_begin_.end() - 1);

  // Compute streams per device, for re-planning under SM contention without scanning every stream.
  const std::size_t nd = g.device_slowdown_.size();
  device_begin_.assign(nd + 1, 0);
  for (StreamId s = 0; s < ns; ++s)
    if (g.stream_class_[s] == StreamClass::Compute) ++device_begin_[g.stream_device_[s] + 1];
  for (std::size_t d = 0; d < nd; ++d) device_begin_[d + 1] += device_begin_[d];
  device_compute_.resize(device_begin_[nd]);
  {
    std::vector<std::uint32_t> cur(device_begin_.begin(), device_begin_.end() - 1);
    for (StreamId s = 0; s < ns; ++s)
      if (g.stream_class_[s] == StreamClass::Compute) device_compute_[cur[g.stream_device_[s]]++] = s;
  }
  stream_busy_.assign(ns, 0);
  stream_running_.assign(ns, 0);
  device_comm_active_.assign(g.device_slowdown_.size(), 0);
  remaining_.assign(n, 0.0);
  last_update_.assign(n, 0);
  version_.assign(n, 0);
  heap_.clear();
  seq_ = 0;

  for (StreamId s = 0; s < ns; ++s) try_start(g, s, 0, out);
  std::size_t done = 0;
  auto later = [](const Event& a, const Event& b) { return a.time != b.time ? a.time > b.time : a.seq > b.seq; };
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const Event ev = heap_.back();
    heap_.pop_back();
    if (ev.version != version_[ev.task]) continue;  // superseded by a re-plan
    ++out.events;
    const TaskId t = ev.task;
    const TimeNs now = ev.time;
    const StreamId s = g.stream_[t];
    out.end[t] = now;
    out.makespan = std::max(out.makespan, now);
    ++done;
    stream_busy_[s] = 0;
    if (g.stream_class_[s] == StreamClass::Comm) set_comm_active(g, g.stream_device_[s], -1, now);
    for (std::uint32_t i = succ_begin_[t]; i < succ_begin_[t + 1]; ++i) {
      const TaskId v = succ_[i];
      if (--pending_preds_[v] == 0) try_start(g, g.stream_[v], now, out);
    }
    try_start(g, s, now, out);
  }
  if (done != n) {
    throw std::logic_error("engine: deadlock — " + std::to_string(n - done) + " of " + std::to_string(n) +
                           " tasks can never start (cycle through dependencies and stream order)");
  }
}

}  // namespace parsim::engine

#include "sim/engine/engine.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace parsim::engine {

namespace {
constexpr StreamId kNoStream = ~StreamId{0};
// Pending events up to which the event queue stays an unsorted array (see heap_place below).
constexpr std::size_t kLinearMax = 32;
}  // namespace

// ---------------------------------------------------------------- TaskGraph
void TaskGraph::clear() {
  derived_.ready = false;
  tasks_.clear();
  dep_from_.clear();
  dep_to_.clear();
  stream_device_.clear();
  stream_class_.clear();
  device_slowdown_.clear();
  device_queue_.clear();
  device_host_stream_.clear();
  host_items_.clear();
  any_nic_ = false;
}

void TaskGraph::reserve(std::size_t tasks, std::size_t deps) {
  tasks_.reserve(tasks);
  host_items_.reserve(tasks);
  dep_from_.reserve(deps);
  dep_to_.reserve(deps);
}

int TaskGraph::add_device(double comm_slowdown) {
  derived_.ready = false;
  device_slowdown_.push_back(comm_slowdown);
  device_queue_.push_back(kDefaultLaunchQueue);
  device_host_stream_.push_back(kNoStream);
  return static_cast<int>(device_slowdown_.size()) - 1;
}

void TaskGraph::set_launch_queue(int device, int depth) {
  if (device < 0 || device >= static_cast<int>(device_slowdown_.size()) || depth < 0)
    throw std::logic_error("set_launch_queue: bad device or depth");
  device_queue_[device] = depth;
}

StreamId TaskGraph::add_stream(int device, StreamClass cls) {
  if (device < 0 || device >= static_cast<int>(device_slowdown_.size())) throw std::logic_error("add_stream: bad device");
  if (cls == StreamClass::Host && device_host_stream_[device] != kNoStream)
    throw std::logic_error("add_stream: a device has one host stream");
  derived_.ready = false;
  stream_device_.push_back(device);
  stream_class_.push_back(cls);
  const auto s = static_cast<StreamId>(stream_device_.size() - 1);
  if (cls == StreamClass::Host) device_host_stream_[device] = s;
  return s;
}

void TaskGraph::fail(const char* what) { throw std::logic_error(what); }

TaskId TaskGraph::add_host_task(int device, TimeNs duration, std::uint32_t tag, std::uint64_t order, bool drain) {
  if (device < 0 || device >= static_cast<int>(device_slowdown_.size())) throw std::logic_error("add_host_task: bad device");
  if (order == kNotOnHost) throw std::logic_error("add_host_task: bad order");
  StreamId s = device_host_stream_[device];
  if (s == kNoStream) s = add_stream(device, StreamClass::Host);
  const TaskId t = add_task(s, duration, tag);  // (resets derived_.ready)
  tasks_[t].host_order = order;
  tasks_[t].drain = drain ? 1 : 0;
  host_items_.push_back(t);
  return t;
}

void TaskGraph::set_nic(TaskId task, TimeNs nic_ns) {
  if (task >= tasks_.size() || nic_ns < 0) throw std::logic_error("set_nic: bad task or time");
  tasks_[task].nic_ns = std::min(nic_ns, tasks_[task].duration);
  if (nic_ns > 0) any_nic_ = true;
}

const std::vector<std::pair<TaskId, TaskId>> TaskGraph::edges() const {
  std::vector<std::pair<TaskId, TaskId>> e;
  e.reserve(dep_from_.size());
  for (std::size_t i = 0; i < dep_from_.size(); ++i) e.emplace_back(dep_from_[i], dep_to_[i]);
  return e;
}

std::string TaskGraph::check_acyclic() const {
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  G g(tasks_.size());
  for (std::size_t i = 0; i < dep_from_.size(); ++i) boost::add_edge(dep_from_[i], dep_to_[i], g);
  std::vector<TaskId> last(stream_device_.size(), static_cast<TaskId>(-1));
  for (TaskId t = 0; t < tasks_.size(); ++t) {  // stream order is an implicit dependency (host streams: below)
    if (stream_class_[tasks_[t].stream] == StreamClass::Host) continue;
    if (last[tasks_[t].stream] != static_cast<TaskId>(-1)) boost::add_edge(last[tasks_[t].stream], t, g);
    last[tasks_[t].stream] = t;
  }
  // Host program order: item i+1 cannot begin before item i (a host task ends, an issued task's issue begins).
  std::vector<std::pair<std::uint64_t, TaskId>> prog;
  for (std::size_t d = 0; d < device_slowdown_.size(); ++d) {
    prog.clear();
    for (TaskId t : host_items_)
      if (stream_device_[tasks_[t].stream] == static_cast<int>(d)) prog.emplace_back(tasks_[t].host_order, t);
    std::stable_sort(prog.begin(), prog.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 1; i < prog.size(); ++i)
      if (stream_class_[tasks_[prog[i - 1].second].stream] == StreamClass::Host) boost::add_edge(prog[i - 1].second, prog[i].second, g);
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
namespace {
// Rounded to the nearest ns (work and rates are non-negative: x + 0.5 truncated, without a libm call on the hot path).
TimeNs round_ns(double x) { return static_cast<TimeNs>(x + 0.5); }
TimeNs stretched(double work_ns, double rate) { return round_ns(rate == 1.0 ? work_ns : work_ns / rate); }
// std::llround(x) for x ≥ 0 without the libm call (x − trunc(x) is exact, so the comparison with 0.5 rounds half away
// from zero as llround does); other values take the libm path.
TimeNs llround_nonneg(double x) {
  if (!(x >= 0.0 && x < 4.611686018427387904e18)) return static_cast<TimeNs>(std::llround(x));
  const auto r = static_cast<TimeNs>(x);
  return r + (x - static_cast<double>(r) >= 0.5 ? 1 : 0);
}
// a / k rounded half up, in integers (a ≥ 0, k ≥ 1).
TimeNs div_round(TimeNs a, std::uint32_t k) { return k == 1 ? a : (a + k / 2) / k; }
}  // namespace

// The event queue: pending events keyed by (time, seq), each task's completion event findable (TaskState::heap_pos),
// so that a re-plan moves the task's one event instead of leaving a stale copy behind. Keys are unique (seq), so the
// pop order — and the timeline — is that of any priority queue over the same events. A step keeps few events pending
// (≈ 8 on average over the llama3-70b / 64-GPU sweep: one per busy stream and host), so the queue starts as an
// unsorted array — push and re-plan O(1), pop a scan — and turns into a binary min-heap on the same array once more
// than kLinearMax events are pending (long pipelines), for the rest of the run.
void Executor::heap_place(std::size_t i, const Event& e) {
  heap_[i] = e;
  if (e.kind() == kCompletion) ts_[e.task()].heap_pos = static_cast<std::uint32_t>(i);
}

// Sifts a hole at i up (heap_up) or down (heap_down) to where `e` belongs and places `e` there. The element is
// passed by value rather than read back from heap_[i]: an event the caller has just written field by field, read back
// as a whole, would stall on store-to-load forwarding.
void Executor::heap_up(std::size_t i, Event e) {
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!earlier(e, heap_[parent])) break;
    heap_place(i, heap_[parent]);
    i = parent;
  }
  heap_place(i, e);
}

void Executor::heap_down(std::size_t i, Event e) {
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && earlier(heap_[c + 1], heap_[c])) ++c;
    if (!earlier(heap_[c], e)) break;
    heap_place(i, heap_[c]);
    i = c;
  }
  heap_place(i, e);
}

// More than kLinearMax pending events: the array becomes a heap (Floyd's construction; positions follow).
void Executor::queue_grew() {
  heap_mode_ = true;
  for (std::size_t i = heap_.size() / 2; i-- > 0;) heap_down(i, heap_[i]);
}

Executor::Event Executor::heap_pop() {
  std::size_t at = 0;
  if (!heap_mode_) {  // a scan for the least (time, seq)
    TimeNs bt = heap_[0].time;
    std::uint64_t bs = heap_[0].seq;
    const std::size_t n = heap_.size();
    for (std::size_t i = 1; i < n; ++i) {
      const TimeNs t = heap_[i].time;
      if (t > bt) continue;  // (most entries: one test)
      if (t < bt || heap_[i].seq < bs) {
        bt = t;
        bs = heap_[i].seq;
        at = i;
      }
    }
  }
  const Event top = heap_[at];
  if (top.kind() == kCompletion) ts_[top.task()].heap_pos = kNotQueued;
  const Event last = heap_.back();
  heap_.pop_back();
  if (at < heap_.size()) {
    if (heap_mode_) {
      heap_down(0, last);
    } else {
      heap_place(at, last);
    }
  }
  return top;
}

void Executor::push(TimeNs t, TaskId task) {
  const Event e = make_event(t, seq_++, task, kCompletion);
  const std::uint32_t at = ts_[task].heap_pos;
  if (at != kNotQueued) {  // a re-plan: the task's pending completion moves
    // (Its task and kind stay; the new sequence number is the largest, so it is sooner only by its time.)
    Event& old = heap_[at];
    if (!heap_mode_) {
      old.time = e.time;
      old.seq = e.seq;
      return;
    }
    if (e.time < old.time) heap_up(at, e);
    else heap_down(at, e);
    return;
  }
  ts_[task].heap_pos = static_cast<std::uint32_t>(heap_.size());
  heap_.push_back(e);
  if (heap_mode_) heap_up(heap_.size() - 1, e);
  else if (heap_.size() > kLinearMax) queue_grew();
}

void Executor::push_wake(TimeNs t, StreamId s) {
  const Event e = make_event(t, seq_++, s, kWake);
  heap_.push_back(e);
  if (heap_mode_) heap_up(heap_.size() - 1, e);
  else if (heap_.size() > kLinearMax) queue_grew();
}

double Executor::rate(const TaskGraph& g, TaskId t) const {
  const TaskGraph::Task& task = g.tasks_[t];  // (its stream's device and class, copied into the task)
  const int dev = task.device;
  double r = 1.0;
  if (task.cls == StreamClass::Compute) {
    const double sd = g.device_slowdown_[dev];
    if (sd > 0 && device_comm_active_[dev] > 0) r = 1.0 / (1.0 + sd);
  }
  if (task.nic_ns > 0 && device_nic_active_[dev] > 1) {
    // The other running NIC tasks of the device, each weighted by the share of its own time it spends on the NIC
    // (the device's running sum, less this task's own share).
    const double load = std::max(0.0, device_nic_load_[dev] - nic_share(g, t));
    const double d = static_cast<double>(g.tasks_[t].duration), b = static_cast<double>(g.tasks_[t].nic_ns);
    r *= d / (d + load * b);
  }
  return r;
}

// The end event of a running task: its remaining work at its current rate, and never before its last kernel was
// issued and has run (TaskState::floor).
void Executor::schedule_end(const TaskGraph& g, TaskId t, TimeNs now) {
  (void)g;
  push(std::max(std::max(now, ts_[t].last_update) + stretched(ts_[t].remaining, ts_[t].rate), ts_[t].floor), t);
}

void Executor::replan(const TaskGraph& g, TaskId t, TimeNs now, double old_rate) { replan_at(g, t, now, old_rate, rate(g, t)); }

// A re-plan whose new rate the caller knows (SM contention: every compute task of the device gets the same one).
void Executor::replan_at(const TaskGraph& g, TaskId t, TimeNs now, double old_rate, double new_rate) {
  TaskState& st = ts_[t];
  if (now > st.last_update) {  // (a task that starts later has done no work yet)
    st.remaining = std::max(0.0, st.remaining - static_cast<double>(now - st.last_update) * old_rate);
    st.last_update = now;
  }
  st.rate = new_rate;
  schedule_end(g, t, now);
}

void Executor::try_start_head(const TaskGraph& g, StreamId s, TaskId t, TimeNs now, Timeline& out) {
  const TaskGraph::Task& task = g.tasks_[t];  // (its stream's device and class, copied into the task)
  if (task.host_order != TaskGraph::kNotOnHost) {  // (issued: try_start checked)
    if (ts_[t].ready_at > now && task.cls != StreamClass::Compute) {  // issued, first kernel not launched yet
      if (wake_at_[s] != ts_[t].ready_at) {
        wake_at_[s] = ts_[t].ready_at;
        push_wake(ts_[t].ready_at, s);
      }
      return;
    }
  }
  // A compute task whose first kernel is launched later starts then, without a wake event: the stream is held for
  // it (in-order: nothing else could start on it), and rate changes before its start only re-plan its end
  // (replan() counts no work before TaskState::last_update). Communication tasks wait for a wake: they change the device's
  // SM-contention and NIC state when they start.
  const TimeNs at = std::max(now, ts_[t].ready_at);
  ++stream_pos_[s];
  stream_busy_[s] = 1;
  stream_running_[s] = t;
  ts_[t].started = 1;
  out.start[t] = at;
  const int dev = task.device;
  ts_[t].remaining = static_cast<double>(task.duration);
  ts_[t].last_update = at;
  const int comm = task.cls == StreamClass::Comm ? 1 : 0, nic = task.nic_ns > 0 ? 1 : 0;
  if (comm | nic) set_active(g, dev, comm, nic, now, t);
  ts_[t].rate = rate(g, t);
  schedule_end(g, t, now);
  // The host may be waiting for this task to start (its launch queue was full).
  if (hwait_[dev] == HostWait::Start && hwait_task_[dev] == t) queue_constraint(g, dev, now, out);
}

// A task of `device` starts (+1) or ends (−1): `comm_delta` for a Comm-stream task, `nic_delta` for a task with a NIC
// part (`except`: that task itself, whose rate its caller sets). Re-plans every running task of the device whose rate
// this changes — compute tasks when the device's communication goes from idle to busy or back (SM contention), NIC
// tasks when the set of running NIC tasks changes while more than one is or was running — each once.
void Executor::set_active(const TaskGraph& g, int device, int comm_delta, int nic_delta, TimeNs now, TaskId except) {
  const int comm_before = device_comm_active_[device], nic_before = device_nic_active_[device];
  device_comm_active_[device] += comm_delta;
  device_nic_active_[device] += nic_delta;
  if (nic_delta != 0)  // (exactly 0 again once no NIC task runs: no rounding residue carries over)
    device_nic_load_[device] =
        device_nic_active_[device] == 0 ? 0.0 : device_nic_load_[device] + nic_delta * nic_share(g, except);
  const bool sm = g.device_slowdown_[device] > 0 && (comm_before > 0) != (device_comm_active_[device] > 0);
  const bool nic = nic_delta != 0 && (nic_before > 1 || device_nic_active_[device] > 1);
  if (!sm && !nic) return;
  // Work done so far at the old rate, the rest at the new one.
  if (!nic) {  // SM contention alone: only the compute streams change rate (the same tasks, in the same stream order
               // as the loop below would re-plan them: the same event sequence numbers)
    for (std::uint32_t i = d_->compute_begin[device]; i < d_->compute_begin[device + 1]; ++i) {
      const StreamId s = d_->compute_streams[i];
      if (!stream_busy_[s]) continue;
      const TaskId t = stream_running_[s];
      if (t != except) replan(g, t, now, ts_[t].rate);
    }
    return;
  }
  for (std::uint32_t i = d_->device_begin[device]; i < d_->device_begin[device + 1]; ++i) {
    const StreamId s = d_->device_streams[i];
    if (!stream_busy_[s]) continue;
    const TaskId t = stream_running_[s];
    if (t == except) continue;
    if ((sm && g.stream_class_[s] == StreamClass::Compute) || (nic && g.tasks_[t].nic_ns > 0))
      replan(g, t, now, ts_[t].rate);
  }
}

// The host waited for task X (hwait_task_) to start because its launch queue was full: the kernel it waited for is
// at fraction hwait_frac_ of X, and its own last launch follows hwait_extra_ after that.
void Executor::apply_queue(const TaskGraph& g, int device, const Timeline& out) {
  const TaskId x = hwait_task_[device];
  const TimeNs t_r =
      out.start[x] + llround_nonneg(hwait_frac_[device] * static_cast<double>(g.tasks_[x].duration));
  hfree_[device] = std::max(hfree_[device], t_r + hwait_extra_[device]);
  hwait_[device] = HostWait::None;
}

void Executor::queue_constraint(const TaskGraph& g, int device, TimeNs /*now*/, Timeline& out) {
  apply_queue(g, device, out);
  resume_.push_back(device);
}

void Executor::advance_host(const TaskGraph& g, int dev, TimeNs now, Timeline& out) {
  if (hwait_[dev] != HostWait::None) return;
  if (hsync_[dev] >= 0) {  // a sync after an issue: wait for the drain, then its host time
    if (outstanding_[dev] > 0) {
      hwait_[dev] = HostWait::Drain;
      return;
    }
    hfree_[dev] = std::max(hfree_[dev], now) + hsync_[dev];
    hsync_[dev] = -1;
  }
  const std::uint32_t end = d_->host_begin[dev + 1];
  const int q = g.device_queue_[dev];
  while (hpos_[dev] < end) {
    const std::uint32_t item = hpos_[dev];
    const TaskId t = d_->host_prog[item];
    if (g.tasks_[t].cls == StreamClass::Host) {
      if (pending_[t] > 0) {
        hwait_[dev] = HostWait::Preds;
        return;
      }
      if (g.tasks_[t].drain && outstanding_[dev] > 0) {
        hwait_[dev] = HostWait::Drain;
        return;
      }
      const TimeNs s = std::max(hfree_[dev], now);
      out.start[t] = s;
      ts_[t].started = 1;
      hfree_[dev] = s + g.tasks_[t].duration;
      ++hpos_[dev];
      if (d_->succ_begin[t] == d_->succ_begin[t + 1]) {
        // Nothing depends on it but the program order, which hfree_ carries: it ends without an event.
        out.end[t] = hfree_[dev];
        out.makespan = std::max(out.makespan, hfree_[dev]);
        ++host_done_;
        continue;
      }
      push(hfree_[dev], t);
      continue;
    }
    // Issue a GPU task: its K kernels are launched one after another over host_ns.
    const TimeNs h = g.tasks_[t].host_ns, first = div_round(h, g.tasks_[t].kernels);
    const TimeNs hs = std::max(hfree_[dev], now);
    unissued_[t] = 0;
    ts_[t].ready_at = hs + first;
    hfree_[dev] = hs + h;
    ts_[t].floor = hfree_[dev] + div_round(g.tasks_[t].duration, g.tasks_[t].kernels);
    ++outstanding_[dev];
    ++hpos_[dev];
    // Launch queue: at most q launched kernels wait to start, so launching this task's last kernel (program index
    // c + K − 1) needs the GPU to have started kernel c + K − 1 − q.
    if (q > 0) {
      const std::int64_t r = static_cast<std::int64_t>(kprefix_[item] + g.tasks_[t].kernels) - 1 - q;
      if (r >= 0) {
        std::uint32_t& qp = qpos_[dev];
        while (qp + 1 < end && kprefix_[qp + 1] <= static_cast<std::uint64_t>(r)) ++qp;
        while (qp < item && g.tasks_[d_->host_prog[qp]].kernels == 0) ++qp;  // host tasks launch nothing
        const TaskId x = d_->host_prog[qp];
        // Already started and over even at its last kernel by the time the host is free: nothing to wait for
        // (apply_queue would leave hfree_ as it is, since the waited-for kernel starts at most duration after X).
        if (!ts_[x].started || out.start[x] + g.tasks_[x].duration + first > hfree_[dev]) {
          const double frac = (static_cast<double>(r) - static_cast<double>(kprefix_[qp])) /
                              std::max(1.0, static_cast<double>(g.tasks_[x].kernels));
          hwait_task_[dev] = x;
          hwait_frac_[dev] = std::clamp(frac, 0.0, 1.0);
          hwait_extra_[dev] = first;
          hwait_[dev] = HostWait::Start;
          if (ts_[x].started) apply_queue(g, dev, out);
        }
      }
    }
    try_start(g, g.tasks_[t].stream, now, out);
    if (g.tasks_[t].drain) {
      hsync_[dev] = g.tasks_[t].sync_after;
      if (hwait_[dev] != HostWait::None) return;  // the launch queue first; the sync when the host resumes
      if (outstanding_[dev] > 0) {
        hwait_[dev] = HostWait::Drain;
        return;
      }
      hfree_[dev] = std::max(hfree_[dev], now) + hsync_[dev];
      hsync_[dev] = -1;
      continue;
    }
    if (hwait_[dev] != HostWait::None) return;
  }
}

// A stable sort of [b, e) that merges its ascending runs (a host program is registered in a few sorted runs: the
// passes, the receives, the data-parallel collectives, the step's end), with buffers kept between runs. Equal keys
// keep their order, as std::stable_sort does.
template <class It, class Less>
void Executor::merge_runs(It b, It e, Less less) {
  const std::size_t n = static_cast<std::size_t>(e - b);
  run_bounds_.clear();
  run_bounds_.push_back(0);
  for (std::size_t i = 1; i < n; ++i)
    if (less(b[i], b[i - 1])) run_bounds_.push_back(static_cast<std::uint32_t>(i));
  run_bounds_.push_back(static_cast<std::uint32_t>(n));
  sort_a_.assign(b, e);
  sort_b_.resize(n);
  std::vector<std::uint32_t>* src = &sort_a_;
  std::vector<std::uint32_t>* dst = &sort_b_;
  while (run_bounds_.size() > 2) {
    std::size_t w = 0;
    for (std::size_t r = 0; r + 1 < run_bounds_.size(); r += 2) {
      const std::uint32_t lo = run_bounds_[r], mid = run_bounds_[r + 1];
      const std::uint32_t hi = r + 2 < run_bounds_.size() ? run_bounds_[r + 2] : mid;
      std::merge(src->begin() + lo, src->begin() + mid, src->begin() + mid, src->begin() + hi, dst->begin() + lo, less);
      run_bounds_[w++] = lo;
    }
    run_bounds_[w++] = static_cast<std::uint32_t>(n);
    run_bounds_.resize(w);
    std::swap(src, dst);
  }
  std::copy(src->begin(), src->end(), b);
}

// The structure's derived lists, into the graph (kept there until its structure changes).
void Executor::prepare(const TaskGraph& g) {
  TaskGraph::Derived& d = g.derived_;
  const std::size_t n = g.tasks_.size(), ns = g.stream_device_.size(), nd = g.device_slowdown_.size();
  // CSR successor lists (counting sort keeps insertion order: deterministic).
  d.succ_begin.assign(n + 1, 0);
  d.pending.assign(n, 0);
  for (std::size_t i = 0; i < g.dep_from_.size(); ++i) {
    ++d.succ_begin[g.dep_from_[i] + 1];
    ++d.pending[g.dep_to_[i]];
  }
  for (std::size_t i = 0; i < n; ++i) d.succ_begin[i + 1] += d.succ_begin[i];
  d.succ.resize(g.dep_from_.size());
  {
    std::vector<std::uint32_t>& fill = stream_pos_;  // reuse as a cursor
    fill.assign(d.succ_begin.begin(), d.succ_begin.end() - 1);
    for (std::size_t i = 0; i < g.dep_from_.size(); ++i) {
      const TaskId to = g.dep_to_[i];
      d.succ[fill[g.dep_from_[i]]++] = to | (g.tasks_[to].cls == StreamClass::Host ? TaskGraph::kHostSucc : 0);
    }
  }
  d.task_stream.resize(n);
  d.awaits_issue.resize(n);
  for (std::size_t t = 0; t < n; ++t) {
    d.task_stream[t] = g.tasks_[t].stream;
    d.awaits_issue[t] = g.tasks_[t].host_order != TaskGraph::kNotOnHost && g.tasks_[t].cls != StreamClass::Host;
  }
  // Per-stream task lists in insertion order.
  d.stream_begin.assign(ns + 1, 0);
  for (std::size_t t = 0; t < n; ++t) ++d.stream_begin[g.tasks_[t].stream + 1];
  for (std::size_t s = 0; s < ns; ++s) d.stream_begin[s + 1] += d.stream_begin[s];
  d.stream_tasks.resize(n);
  stream_pos_.assign(d.stream_begin.begin(), d.stream_begin.end() - 1);
  for (std::size_t t = 0; t < n; ++t) d.stream_tasks[stream_pos_[g.tasks_[t].stream]++] = static_cast<TaskId>(t);

  // GPU streams per device, for re-planning under SM contention and NIC sharing without scanning every stream.
  d.device_begin.assign(nd + 1, 0);
  for (StreamId s = 0; s < ns; ++s)
    if (g.stream_class_[s] != StreamClass::Host) ++d.device_begin[g.stream_device_[s] + 1];
  for (std::size_t i = 0; i < nd; ++i) d.device_begin[i + 1] += d.device_begin[i];
  d.device_streams.resize(d.device_begin[nd]);
  {
    std::vector<std::uint32_t>& cur = hpos_;  // reuse as a cursor
    cur.assign(d.device_begin.begin(), d.device_begin.end() - 1);
    for (StreamId s = 0; s < ns; ++s)
      if (g.stream_class_[s] != StreamClass::Host) d.device_streams[cur[g.stream_device_[s]]++] = s;
  }
  d.compute_begin.assign(nd + 1, 0);
  for (StreamId s = 0; s < ns; ++s)
    if (g.stream_class_[s] == StreamClass::Compute) ++d.compute_begin[g.stream_device_[s] + 1];
  for (std::size_t i = 0; i < nd; ++i) d.compute_begin[i + 1] += d.compute_begin[i];
  d.compute_streams.resize(d.compute_begin[nd]);
  {
    std::vector<std::uint32_t>& cur = hpos_;  // reuse as a cursor
    cur.assign(d.compute_begin.begin(), d.compute_begin.end() - 1);
    for (StreamId s = 0; s < ns; ++s)
      if (g.stream_class_[s] == StreamClass::Compute) d.compute_streams[cur[g.stream_device_[s]]++] = s;
  }
  // Host programs: the registered items of each device, in program order (stable: equal orders keep call order).
  d.host_begin.assign(nd + 1, 0);
  for (TaskId t : g.host_items_) ++d.host_begin[g.tasks_[t].device + 1];
  for (std::size_t i = 0; i < nd; ++i) d.host_begin[i + 1] += d.host_begin[i];
  d.host_prog.resize(g.host_items_.size());
  {
    std::vector<std::uint32_t>& cur = hpos_;
    cur.assign(d.host_begin.begin(), d.host_begin.end() - 1);
    for (TaskId t : g.host_items_) d.host_prog[cur[g.tasks_[t].device]++] = t;
  }
  for (std::size_t i = 0; i < nd; ++i) {
    auto b = d.host_prog.begin() + d.host_begin[i], e = d.host_prog.begin() + d.host_begin[i + 1];
    auto by_order = [&g](TaskId x, TaskId y) { return g.tasks_[x].host_order < g.tasks_[y].host_order; };
    if (!std::is_sorted(b, e, by_order)) merge_runs(b, e, by_order);
  }
  d.ready = true;
}

void Executor::run(const TaskGraph& g, Timeline& out) {
  const std::size_t n = g.tasks_.size(), ns = g.stream_device_.size(), nd = g.device_slowdown_.size();
  out.start.assign(n, 0);
  out.end.assign(n, -1);
  out.makespan = 0;
  out.events = 0;

  if (!g.derived_.ready) prepare(g);
  d_ = &g.derived_;
  ts_.assign(n, TaskState{});  // every task's run state at once
  pending_.assign(d_->pending.begin(), d_->pending.end());
  unissued_.assign(d_->awaits_issue.begin(), d_->awaits_issue.end());
  stream_pos_.assign(d_->stream_begin.begin(), d_->stream_begin.end() - 1);
  // Kernels issued before each host program item (kernel counts are numbers: set_values may change them).
  kprefix_.resize(d_->host_prog.size() + 1);
  for (std::size_t d = 0; d < nd; ++d) {
    std::uint64_t k = 0;
    for (std::uint32_t i = d_->host_begin[d]; i < d_->host_begin[d + 1]; ++i) {
      kprefix_[i] = k;
      k += g.tasks_[d_->host_prog[i]].kernels;
    }
  }
  hpos_.assign(d_->host_begin.begin(), d_->host_begin.end() - 1);
  qpos_.assign(d_->host_begin.begin(), d_->host_begin.end() - 1);
  hfree_.assign(nd, 0);
  hwait_.assign(nd, HostWait::None);
  hwait_task_.assign(nd, 0);
  hwait_frac_.assign(nd, 0.0);
  hwait_extra_.assign(nd, 0);
  hsync_.assign(nd, -1);
  outstanding_.assign(nd, 0);
  resume_.clear();
  host_done_ = 0;

  stream_busy_.assign(ns, 0);
  wake_at_.assign(ns, -1);
  stream_running_.assign(ns, 0);
  device_comm_active_.assign(nd, 0);
  device_nic_active_.assign(nd, 0);
  device_nic_load_.assign(nd, 0.0);
  heap_.clear();
  heap_mode_ = false;
  seq_ = 0;

  auto run_resumes = [&](TimeNs now) {
    while (!resume_.empty()) {
      const int d = resume_.back();
      resume_.pop_back();
      advance_host(g, d, now, out);
    }
  };
  for (std::size_t d = 0; d < nd; ++d) advance_host(g, static_cast<int>(d), 0, out);
  for (StreamId s = 0; s < ns; ++s)
    if (g.stream_class_[s] != StreamClass::Host) try_start(g, s, 0, out);
  run_resumes(0);
  std::size_t done = 0;
  while (!heap_.empty()) {
    const Event ev = heap_pop();
    const TimeNs now = ev.time;
    if (ev.kind() == kWake) {  // an issued task's first kernel is launched now
      try_start(g, ev.task(), now, out);
      run_resumes(now);
      continue;
    }
    ++out.events;
    const TaskId t = ev.task();
    const TaskGraph::Task& task = g.tasks_[t];
    const StreamId s = task.stream;
    const int dev = task.device;
    out.end[t] = now;
    out.makespan = std::max(out.makespan, now);
    ++done;
    const bool gpu = task.cls != StreamClass::Host;
    if (gpu) {
      stream_busy_[s] = 0;
      const int comm = task.cls == StreamClass::Comm ? 1 : 0, nic = task.nic_ns > 0 ? 1 : 0;
      if (comm | nic) set_active(g, dev, -comm, -nic, now, t);
      if (task.host_order != TaskGraph::kNotOnHost && --outstanding_[dev] == 0 && hwait_[dev] == HostWait::Drain) {
        hwait_[dev] = HostWait::None;
        resume_.push_back(dev);
      }
    }
    for (std::uint32_t i = d_->succ_begin[t]; i < d_->succ_begin[t + 1]; ++i) {
      const std::uint32_t e = d_->succ[i];
      const TaskId v = e & ~TaskGraph::kHostSucc;
      if (--pending_[v] != 0) continue;
      if (e & TaskGraph::kHostSucc) {
        const int vd = g.tasks_[v].device;
        if (hwait_[vd] == HostWait::Preds && d_->host_prog[hpos_[vd]] == v) {
          hwait_[vd] = HostWait::None;
          resume_.push_back(vd);
        }
      } else {
        try_start(g, d_->task_stream[v], now, out);
      }
    }
    if (gpu) try_start(g, s, now, out);
    run_resumes(now);
  }
  if (done + host_done_ != n) {
    // Name what is stuck: the head of every stream with tasks left, and where every unfinished host stopped.
    std::vector<StuckItem> stuck;
    auto finished = [&](TaskId t) { return out.end[t] >= 0; };  // (end stays -1 until a task finishes)
    auto unfinished_pred = [&](TaskId t) {
      for (std::size_t i = 0; i < g.dep_to_.size(); ++i)  // (only on this error path: a linear scan is fine)
        if (g.dep_to_[i] == t && out.end[g.dep_from_[i]] < 0)
          return g.dep_from_[i];
      return t;
    };
    for (std::size_t d = 0; d < nd; ++d) {
      if (hpos_[d] == d_->host_begin[d + 1]) continue;
      const TaskId t = d_->host_prog[hpos_[d]];
      StuckItem it{t, static_cast<int>(d), StuckItem::Wait::HostPreds, t};
      if (hsync_[d] >= 0 || hwait_[d] == HostWait::Drain) {
        it.wait = StuckItem::Wait::HostDrain;
        for (std::uint32_t i = d_->host_begin[d]; i < hpos_[d]; ++i) {
          const TaskId x = d_->host_prog[i];
          if (!g.is_host_task(x) && !finished(x)) {
            it.on = x;
            break;
          }
        }
      } else if (hwait_[d] == HostWait::Start) {
        it.wait = StuckItem::Wait::HostQueue;
        it.on = hwait_task_[d];
      } else {
        it.on = unfinished_pred(t);
      }
      stuck.push_back(it);
    }
    for (StreamId s = 0; s < ns; ++s) {
      if (g.stream_class_[s] == StreamClass::Host || stream_pos_[s] == d_->stream_begin[s + 1] || stream_busy_[s]) continue;
      const TaskId t = d_->stream_tasks[stream_pos_[s]];
      const int d = g.stream_device_[s];
      if (pending_[t] != 0)
        stuck.push_back(StuckItem{t, d, StuckItem::Wait::Pred, unfinished_pred(t)});
      else
        stuck.push_back(StuckItem{t, d, StuckItem::Wait::Issue, t});
    }
    std::string what = deadlock_message(n - done - host_done_, n, stuck, nullptr, nullptr);
    throw DeadlockError(what, n - done - host_done_, n, std::move(stuck));  // (the text first: argument evaluation order is unspecified)
  }
}

std::string deadlock_message(std::size_t remaining, std::size_t tasks, const std::vector<StuckItem>& stuck,
                             std::string (*name)(const void*, TaskId), const void* ctx) {
  return "engine: deadlock — " + std::to_string(remaining) + " of " + std::to_string(tasks) +
         " tasks can never start (cycle through dependencies, stream order and host program order): " +
         describe_stuck(stuck, name, ctx);
}

std::string describe_stuck(const std::vector<StuckItem>& stuck, std::string (*name)(const void*, TaskId),
                           const void* ctx) {
  auto nm = [&](TaskId t) { return name ? name(ctx, t) : "task " + std::to_string(t); };
  std::string r;
  constexpr std::size_t kMaxNamed = 16;  // (a 16-stage pipeline has 64 streams and hosts: keep the line readable)
  for (std::size_t i = 0; i < stuck.size(); ++i) {
    const StuckItem& it = stuck[i];
    if (i == kMaxNamed) {
      r += "; and " + std::to_string(stuck.size() - kMaxNamed) + " more";
      break;
    }
    if (!r.empty()) r += "; ";
    const std::string dev = "device " + std::to_string(it.device);
    switch (it.wait) {
      case StuckItem::Wait::Pred: r += nm(it.task) + " waits for " + nm(it.on); break;
      case StuckItem::Wait::Issue: r += nm(it.task) + " waits for its host (" + dev + ") to issue it"; break;
      case StuckItem::Wait::HostPreds: r += "host of " + dev + " at " + nm(it.task) + " waits for " + nm(it.on); break;
      case StuckItem::Wait::HostDrain:
        r += "host of " + dev + " synchronizes before " + nm(it.task) + " and waits for " + nm(it.on);
        break;
      case StuckItem::Wait::HostQueue:
        r += "host of " + dev + " at " + nm(it.task) + " waits (launch queue full) for " + nm(it.on) + " to start";
        break;
    }
  }
  return r;
}

}  // namespace parsim::engine

// parsim sim/engine — a discrete-event executor of tasks on in-order streams, issued by a host.
//
// The engine knows only time, tasks, streams, dependencies and hosts. A task has a duration (integer nanoseconds),
// runs on one stream, and carries an opaque 32-bit tag that only the analysis layer interprets. Streams execute their
// tasks in the order they were added (like CUDA streams); a task starts when it is at the head of its stream, the
// stream is free, and all its predecessors have finished. Streams belong to a device; while any communication stream
// of a device is busy, that device's compute streams progress at 1/(1+slowdown) of their speed (communication kernels
// take SMs and memory bandwidth from compute) — durations then stretch, and the engine re-plans their end events.
//
// The host (the CPU thread that launches a rank's kernels). A device may have a host program: the GPU tasks it
// issues (issue()) and its own host work (add_host_task()), in program order. The host walks the program one item
// at a time and never runs two at once:
//   - issuing a GPU task of K kernels costs the host `host_ns`; the task cannot start on the GPU before its first
//     kernel is issued (issue start + host_ns/K) and cannot end before its last one is issued and has run (issue end
//     + duration/K). A chain of kernels shorter than their launch cost therefore runs at the host's pace — a kernel
//     becomes launch-bound through the event engine, not through a factor. The host does not wait for the GPU: it
//     runs ahead asynchronously;
//   - unless the launch queue is full: at most `launch_queue` issued kernels may be waiting to start (CUDA blocks the
//     launching thread once ≈ 1,024 are pending, docs/host-model.md §2.6); the host then waits for the GPU to start
//     the kernel `launch_queue` positions back (kernels inside one task are taken as evenly spread over its duration);
//   - a host task (a device→host sync, Python work between passes) occupies the host for its duration once its
//     dependencies are done; with `drain`, it also waits until every GPU task the host issued before it has finished
//     (torch.cuda.synchronize()). A sync on a drained queue therefore exposes the host's issue time of what follows.
// GPU tasks that are not issued by a host (no host program, or not registered) start as soon as they are ready.
//
// Shared NICs: a task — a collective on a Comm stream, or a compute pass whose in-pass communication crosses nodes —
// may declare how much of its duration is spent moving bytes over the device's NICs at full share (set_nic). While
// other such tasks of the device run, each progresses at D/(D + B·Σ_j B_j/D_j) of its speed (D its duration, B its
// NIC time; the sum over the device's other running NIC tasks, each weighted by the share of its own time it is on
// the NIC): its NIC part is stretched by the expected number of others on the NIC at the same moment, the rest —
// latency, NVLink hops, compute — is not. k transfers that are all NIC (B = D) progress at 1/k each (processor
// sharing); a transfer beside a pass that is on the NIC 10 % of its time loses 10 %, and the NIC stays busy at most
// its capacity. Compute passes combine it with SM contention (product of the rates). The engine re-plans the end
// events whenever the set of running NIC tasks changes, as it does for SM contention.
//
// Events are ordered by (time, sequence number): equal inputs give bit-identical timelines. No globals: one
// TaskGraph + Executor per evaluation, reusable (clear() keeps the allocations) so the sweep can run thousands per
// second per thread.
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace parsim::engine {

using TimeNs = std::int64_t;
using TaskId = std::uint32_t;
using StreamId = std::uint32_t;

// Compute and Comm streams are GPU streams; a Host stream holds a device's host tasks (one per device, created by
// add_host_task).
enum class StreamClass : std::uint8_t { Compute, Comm, Host };

// CUDA's launch-queue depth per device (docs/host-model.md §2.6: 1,022 ops queued in a real trace, launches block
// beyond ≈ 1,000 per stream — forums.developer.nvidia.com/t/68937).
constexpr int kDefaultLaunchQueue = 1024;

class TaskGraph {
public:
  void clear();
  void reserve(std::size_t tasks, std::size_t deps);
  // A device groups streams that share SMs; slowdown is the compute slowdown while any of its Comm streams is busy.
  int add_device(double comm_slowdown = 0.0);
  // Issued kernels that may wait for the GPU before the host blocks (0 = unlimited).
  void set_launch_queue(int device, int depth);
  StreamId add_stream(int device, StreamClass cls);
  // (add_task, add_dep and issue are inline: the lowering calls them for every task of every plan)
  TaskId add_task(StreamId stream, TimeNs duration, std::uint32_t tag) {
    if (stream >= stream_device_.size()) fail("add_task: bad stream");
    if (duration < 0) fail("add_task: negative duration");
    if (tasks_.size() >= kHostSucc) fail("add_task: more than 2^31 tasks");
    derived_.ready = false;
    Task& t = tasks_.emplace_back();
    t.duration = duration;
    t.stream = stream;
    t.tag = tag;
    t.device = stream_device_[stream];
    t.cls = stream_class_[stream];
    return static_cast<TaskId>(tasks_.size() - 1);
  }
  void add_dep(TaskId before, TaskId after) {  // `after` cannot start before `before` has finished
    derived_.ready = false;
    dep_from_.push_back(before);
    dep_to_.push_back(after);
  }

  // The host of the task's device issues this GPU task (on a Compute or Comm stream): `host_ns` of host time for
  // `kernels` ≥ 1 GPU operations, at position `order` of the host's program (smaller first; equal orders keep the
  // order of the calls).
  // With `sync_after_ns` ≥ 0 the host synchronizes right after issuing it (torch.cuda.synchronize(): it waits until
  // every GPU task it issued, this one included, has finished, then spends sync_after_ns) — the same as a drain
  // host task at the next position, without a task of its own.
  void issue(TaskId task, TimeNs host_ns, std::uint32_t kernels, std::uint64_t order, TimeNs sync_after_ns = -1) {
    if (task >= tasks_.size() || tasks_[task].cls == StreamClass::Host) fail("issue: not a GPU task");
    Task& t = tasks_[task];
    if (t.host_order != kNotOnHost) fail("issue: task already issued");
    if (host_ns < 0 || order == kNotOnHost) fail("issue: bad host time or order");
    derived_.ready = false;
    t.host_ns = host_ns;
    t.kernels = std::max<std::uint32_t>(1, kernels);
    t.host_order = order;
    if (sync_after_ns >= 0) {
      t.drain = 1;
      t.sync_after = sync_after_ns;
    }
    host_items_.push_back(task);
  }
  // Host work of `device` at program position `order`: `duration` of host time once its dependencies have finished
  // (and, with `drain`, once every GPU task the host issued before it has finished).
  TaskId add_host_task(int device, TimeNs duration, std::uint32_t tag, std::uint64_t order, bool drain = false);
  // `nic_ns` (≤ duration) of this task's duration is NIC transfer at full share (see the header comment).
  void set_nic(TaskId task, TimeNs nic_ns);
  // Replaces the numbers of an existing task, keeping the graph's structure (streams, dependencies, host programs):
  // for a graph built once and run again with other costs (sim/step's shape cache). The same as building it with
  // these numbers: duration; NIC part as set_nic (0: none); for an issued GPU task its issue time, kernels and, when
  // it was issued with a sync after, that sync's host time (ignored otherwise).
  void set_values(TaskId task, TimeNs duration, TimeNs nic_ns, TimeNs host_ns, std::uint32_t kernels,
                  TimeNs sync_after_ns) {
    if (task >= tasks_.size() || duration < 0 || nic_ns < 0 || host_ns < 0) fail("set_values: bad task or time");
    Task& t = tasks_[task];
    t.duration = duration;
    t.nic_ns = std::min(nic_ns, duration);
    if (t.nic_ns > 0) any_nic_ = true;
    if (t.cls == StreamClass::Host || t.host_order == kNotOnHost) return;
    t.host_ns = host_ns;
    t.kernels = std::max<std::uint32_t>(1, kernels);
    if (t.drain) t.sync_after = std::max<TimeNs>(0, sync_after_ns);
  }

  std::size_t num_tasks() const { return tasks_.size(); }
  std::size_t num_streams() const { return stream_device_.size(); }
  std::size_t num_deps() const { return dep_from_.size(); }
  std::size_t num_devices() const { return device_slowdown_.size(); }
  TimeNs duration(TaskId t) const { return tasks_[t].duration; }
  StreamId stream(TaskId t) const { return tasks_[t].stream; }
  std::uint32_t tag(TaskId t) const { return tasks_[t].tag; }
  StreamClass stream_class(StreamId s) const { return stream_class_[s]; }
  int stream_device(StreamId s) const { return stream_device_[s]; }
  bool is_host_task(TaskId t) const { return tasks_[t].cls == StreamClass::Host; }
  bool issued(TaskId t) const { return tasks_[t].host_order != kNotOnHost && !is_host_task(t); }
  // Position of an issued GPU task or a host task in its host's program (meaningful when issued() or is_host_task()).
  std::uint64_t host_order(TaskId t) const { return tasks_[t].host_order; }
  TimeNs host_ns(TaskId t) const { return tasks_[t].host_ns; }
  std::uint32_t kernels(TaskId t) const { return tasks_[t].kernels; }
  TimeNs nic_ns(TaskId t) const { return tasks_[t].nic_ns; }
  const std::vector<std::pair<TaskId, TaskId>> edges() const;
  // Dependency i is dep_from(i) → dep_to(i), in insertion order (no copy, unlike edges()).
  TaskId dep_from(std::size_t i) const { return dep_from_[i]; }
  TaskId dep_to(std::size_t i) const { return dep_to_[i]; }

  // Uses Boost.Graph to check the graph (dependencies plus stream order) is acyclic; returns an empty string when it
  // is, else a description of a task on a cycle. For tests and debugging (the executor also detects deadlock).
  std::string check_acyclic() const;

private:
  friend class Executor;
  [[noreturn]] static void fail(const char* what);  // throws std::logic_error(what)
  static constexpr std::uint64_t kNotOnHost = ~std::uint64_t{0};
  static constexpr std::uint32_t kHostSucc = std::uint32_t{1} << 31;  // Derived::succ: the successor is a host task
  // A task's fields in one record (one cache line), read together by the executor.
  struct Task {
    TimeNs duration = 0;
    TimeNs host_ns = 0;          // issue cost (GPU tasks) — 0 when not issued
    TimeNs sync_after = 0;       // GPU tasks with drain: host time of the sync once drained
    TimeNs nic_ns = 0;
    std::uint64_t host_order = kNotOnHost;  // program position, kNotOnHost when not on a host program
    StreamId stream = 0;
    std::uint32_t tag = 0;
    std::uint32_t kernels = 0;   // GPU operations of an issued task
    int device = 0;              // its stream's device and class (copied: no indirection on the hot path)
    StreamClass cls = StreamClass::Compute;
    std::uint8_t drain = 0;      // host tasks: wait for the issued GPU work to drain; GPU tasks: sync after issue
  };
  std::vector<Task> tasks_;
  std::vector<TaskId> dep_from_, dep_to_;
  std::vector<int> stream_device_;
  std::vector<StreamClass> stream_class_;
  std::vector<double> device_slowdown_;
  std::vector<int> device_queue_;
  std::vector<StreamId> device_host_stream_;  // kNoStream until add_host_task creates it
  std::vector<std::uint32_t> host_items_;     // tasks registered on a host program, in call order
  bool any_nic_ = false;
  // What the executor derives from the structure alone, kept until the structure changes (every add_* / issue /
  // clear resets `ready`; set_nic and set_values keep it): a graph re-run with other numbers skips the derivation.
  struct Derived {
    bool ready = false;
    std::vector<std::uint32_t> succ_begin, succ;             // successors (CSR, insertion order); an entry is the
                                                             // successor's id, with kHostSucc set for a host task
                                                             // (the event loop's test without its task record)
    std::vector<std::uint32_t> pending;                      // per task: its predecessors
    std::vector<std::uint32_t> task_stream;                  // per task: its stream (compact: the event loop's read)
    std::vector<std::uint8_t> awaits_issue;                  // per task: 1 for a GPU task on a host program
    std::vector<std::uint32_t> stream_begin, stream_tasks;   // per stream: its tasks in insertion order
    std::vector<std::uint32_t> device_begin, device_streams; // per device: its GPU streams
    std::vector<std::uint32_t> compute_begin, compute_streams;  // per device: its Compute streams (SM contention)
    std::vector<std::uint32_t> host_begin, host_prog;        // per device: its host program in program order
  };
  mutable Derived derived_;  // (filled by Executor::run: one executor at a time per graph)
};

struct Timeline {
  std::vector<TimeNs> start, end;  // per task (host tasks: host time)
  TimeNs makespan = 0;
  std::int64_t events = 0;         // events processed
};

// What Executor::run throws when tasks remain that can never start: the head of each blocked stream and the item
// each stuck host is at, with what it waits for, so that a caller can name the cycle (sim/step/evaluate.cpp names
// them with the lowering's task information).
struct StuckItem {
  enum class Wait : std::uint8_t { Pred, Issue, HostPreds, HostDrain, HostQueue };
  TaskId task;      // a stream's head task, or the host program item a host stopped at
  int device;
  Wait wait;        // Pred: an unfinished predecessor (`on`); Issue: its host has not issued it yet; Host*: the host
                    // waits for its predecessors (`on` = one unfinished), for its issued GPU work to drain (`on` = one
                    // unfinished issued task), or for a queued kernel to start (`on`)
  TaskId on;
};
class DeadlockError : public std::logic_error {
public:
  DeadlockError(const std::string& what, std::size_t remaining, std::size_t tasks, std::vector<StuckItem> stuck)
      : std::logic_error(what), remaining_(remaining), tasks_(tasks), stuck_(std::move(stuck)) {}
  std::size_t remaining() const { return remaining_; }  // tasks that never ran
  std::size_t tasks() const { return tasks_; }
  const std::vector<StuckItem>& stuck() const { return stuck_; }

private:
  std::size_t remaining_, tasks_;
  std::vector<StuckItem> stuck_;
};
// One line naming the stuck items (the first 16), "; "-separated, naming tasks with `name` (task id → text; null: "task <id>").
std::string describe_stuck(const std::vector<StuckItem>& stuck, std::string (*name)(const void*, TaskId),
                           const void* ctx);
// The deadlock's one-line message: how many of the tasks never ran, then describe_stuck (the engine's own message
// names tasks by id; a caller that knows what the tasks are passes `name`).
std::string deadlock_message(std::size_t remaining, std::size_t tasks, const std::vector<StuckItem>& stuck,
                             std::string (*name)(const void*, TaskId), const void* ctx);

class Executor {
public:
  // Runs the graph to completion. Throws DeadlockError (a std::logic_error) if tasks remain that can never start (a
  // cycle through dependencies, stream order and host program order), naming the first stuck task of every blocked
  // stream and host.
  void run(const TaskGraph& g, Timeline& out);

private:
  // A pending event: its time and sequence number, and in one word its task (completion) or stream (wake) and its
  // kind — one word, so that an event is built in registers (two 32-bit fields are merged through memory by the
  // compiler, and the wide reload after a narrow store stalls store-to-load forwarding on the hot path).
  struct Event {
    TimeNs time;
    std::uint64_t seq;
    std::uint64_t id_kind;   // task or stream (low 32 bits) | kind << 32
    TaskId task() const { return static_cast<TaskId>(id_kind); }
    std::uint32_t kind() const { return static_cast<std::uint32_t>(id_kind >> 32); }
  };
  static constexpr std::uint32_t kCompletion = 0, kWake = 1;
  static constexpr std::uint32_t kNotQueued = ~std::uint32_t{0};
  static Event make_event(TimeNs t, std::uint64_t seq, std::uint32_t id, std::uint32_t kind) {
    return Event{t, seq, static_cast<std::uint64_t>(id) | (static_cast<std::uint64_t>(kind) << 32)};
  }
  static bool earlier(const Event& a, const Event& b) { return a.time != b.time ? a.time < b.time : a.seq < b.seq; }
  void heap_place(std::size_t i, const Event& e);
  void heap_up(std::size_t i, Event e);
  void heap_down(std::size_t i, Event e);
  Event heap_pop();
  void queue_grew();
  enum class HostWait : std::uint8_t { None, Preds, Drain, Start };
  void push(TimeNs t, TaskId task);
  void push_wake(TimeNs t, StreamId s);
  // Starts the head task of stream s if it can start now (the test of a busy or finished stream inline: most calls).
  // The tests that stop most calls — a busy or finished stream, a head with unfinished predecessors or not issued yet
  // by its host (which calls try_start when it issues it) — inline; the start itself in try_start_head.
  void try_start(const TaskGraph& g, StreamId s, TimeNs now, Timeline& out) {
    if (stream_busy_[s] || stream_pos_[s] == d_->stream_begin[s + 1]) return;
    const TaskId t = d_->stream_tasks[stream_pos_[s]];
    if (pending_[t] != 0 || unissued_[t] != 0) return;
    try_start_head(g, s, t, now, out);
  }
  void try_start_head(const TaskGraph& g, StreamId s, TaskId t, TimeNs now, Timeline& out);
  void advance_host(const TaskGraph& g, int device, TimeNs now, Timeline& out);
  void queue_constraint(const TaskGraph& g, int device, TimeNs now, Timeline& out);
  void set_active(const TaskGraph& g, int device, int comm_delta, int nic_delta, TimeNs now, TaskId except);
  void apply_queue(const TaskGraph& g, int device, const Timeline& out);
  double rate(const TaskGraph& g, TaskId t) const;
  template <class It, class Less>
  void merge_runs(It b, It e, Less less);
  void replan(const TaskGraph& g, TaskId t, TimeNs now, double old_rate);
  void replan_at(const TaskGraph& g, TaskId t, TimeNs now, double old_rate, double new_rate);
  void schedule_end(const TaskGraph& g, TaskId t, TimeNs now);

  // The structure derived from the graph (TaskGraph::Derived, filled by prepare() when the structure changed), and
  // the run state — kept between runs to avoid allocation.
  void prepare(const TaskGraph& g);
  const TaskGraph::Derived* d_ = nullptr;
  std::vector<std::uint32_t> stream_pos_;
  std::vector<std::uint8_t> stream_busy_;
  std::vector<TimeNs> wake_at_;         // per stream: the pending wake event's time (-1: none)
  std::vector<TaskId> stream_running_;
  std::vector<int> device_comm_active_, device_nic_active_;
  std::vector<double> device_nic_load_;  // per device: Σ nic_ns/duration of its running NIC tasks
  static double nic_share(const TaskGraph& g, TaskId t) {
    return static_cast<double>(g.tasks_[t].nic_ns) / static_cast<double>(g.tasks_[t].duration);
  }
  // Per task, in one record (one cache line): what the event loop reads and writes together.
  struct TaskState {
    double remaining = 0.0;    // work left (ns at full speed) of a running task
    double rate = 1.0;         // its current rate
    TimeNs last_update = 0;
    TimeNs ready_at = 0;       // issued: when its first kernel is launched
    TimeNs floor = 0;          // issued: its end is never before its last kernel is launched and has run
    std::uint32_t heap_pos = kNotQueued;  // its completion event's index in heap_ (kNotQueued: none)
    std::uint8_t started = 0;
  };
  std::vector<TaskState> ts_;
  // Per task: its unfinished predecessors — apart from TaskState, so that the event loop's decrement over a finished
  // task's successors touches 4 bytes a task (the array stays in cache) rather than each successor's record.
  std::vector<std::uint32_t> pending_;
  std::vector<std::uint8_t> unissued_;  // per task: 1 while a GPU task on a host program waits for its host to issue it
  std::vector<Event> heap_;  // the event queue: unsorted while small, a binary heap once large (heap_mode_)
  bool heap_mode_ = false;  // (the switch-over size, kLinearMax, is in engine.cpp)
  std::uint64_t seq_ = 0;
  // Host programs (CSR by device) and their state.
  std::vector<std::uint64_t> kprefix_;  // kernels issued before each program item
  std::vector<std::uint32_t> hpos_, qpos_;
  std::vector<TimeNs> hfree_;
  std::vector<HostWait> hwait_;
  std::vector<TaskId> hwait_task_;     // Start: the task whose start the host waits for
  std::vector<double> hwait_frac_;     // … the waited-for kernel's position inside it (fraction of its duration)
  std::vector<TimeNs> hwait_extra_;    // … host time from that kernel's start to the end of the blocked issue
  std::vector<TimeNs> hsync_;          // per device: a sync after an issue is pending (its host time; -1: none)
  std::vector<int> resume_;            // devices whose host can go on (processed after each event)
  std::size_t host_done_ = 0;          // host tasks with no successors, finished without an event
  std::vector<std::int64_t> outstanding_;
  std::vector<std::uint32_t> run_bounds_, sort_a_, sort_b_;  // merge_runs' buffers
};

}  // namespace parsim::engine

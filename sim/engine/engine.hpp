// parsim sim/engine — a discrete-event executor of tasks on in-order streams.
//
// The engine knows only time, tasks, streams and dependencies. A task has a duration (integer nanoseconds), runs on
// one stream, and carries an opaque 32-bit tag that only the analysis layer interprets. Streams execute their tasks
// in the order they were added (like CUDA streams); a task starts when it is at the head of its stream, the stream is
// free, and all its predecessors have finished. Streams belong to a device; while any communication stream of a
// device is busy, that device's compute streams progress at 1/(1+slowdown) of their speed (communication kernels
// take SMs and memory bandwidth from compute) — durations then stretch, and the engine re-plans their end events.
//
// Events are ordered by (time, sequence number): equal inputs give bit-identical timelines. No globals: one
// TaskGraph + Executor per evaluation, reusable (clear() keeps the allocations) so the sweep can run thousands per
// second per thread.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace parsim::engine {

using TimeNs = std::int64_t;
using TaskId = std::uint32_t;
using StreamId = std::uint32_t;

enum class StreamClass : std::uint8_t { Compute, Comm };

class TaskGraph {
public:
  void clear();
  void reserve(std::size_t tasks, std::size_t deps);
  // A device groups streams that share SMs; slowdown is the compute slowdown while any of its Comm streams is busy.
  int add_device(double comm_slowdown = 0.0);
  StreamId add_stream(int device, StreamClass cls);
  TaskId add_task(StreamId stream, TimeNs duration, std::uint32_t tag);
  void add_dep(TaskId before, TaskId after);  // `after` cannot start before `before` has finished

  std::size_t num_tasks() const { return duration_.size(); }
  std::size_t num_streams() const { return stream_device_.size(); }
  std::size_t num_deps() const { return dep_from_.size(); }
  TimeNs duration(TaskId t) const { return duration_[t]; }
  StreamId stream(TaskId t) const { return stream_[t]; }
  std::uint32_t tag(TaskId t) const { return tag_[t]; }
  StreamClass stream_class(StreamId s) const { return stream_class_[s]; }
  int stream_device(StreamId s) const { return stream_device_[s]; }
  const std::vector<std::pair<TaskId, TaskId>> edges() const;
  // Dependency i is dep_from(i) → dep_to(i), in insertion order (no copy, unlike edges()).
  TaskId dep_from(std::size_t i) const { return dep_from_[i]; }
  TaskId dep_to(std::size_t i) const { return dep_to_[i]; }

  // Uses Boost.Graph to check the graph (dependencies plus stream order) is acyclic; returns an empty string when it
  // is, else a description of a task on a cycle. For tests and debugging (the executor also detects deadlock).
  std::string check_acyclic() const;

private:
  friend class Executor;
  std::vector<TimeNs> duration_;
  std::vector<StreamId> stream_;
  std::vector<std::uint32_t> tag_;
  std::vector<TaskId> dep_from_, dep_to_;
  std::vector<int> stream_device_;
  std::vector<StreamClass> stream_class_;
  std::vector<double> device_slowdown_;
};

struct Timeline {
  std::vector<TimeNs> start, end;  // per task
  TimeNs makespan = 0;
  std::int64_t events = 0;         // events processed
};

class Executor {
public:
  // Runs the graph to completion. Throws std::logic_error if tasks remain that can never start (a cycle through
  // dependencies and stream order).
  void run(const TaskGraph& g, Timeline& out);

private:
  struct Event {
    TimeNs time;
    std::uint64_t seq;
    TaskId task;
    std::uint32_t version;
  };
  void push(TimeNs t, TaskId task);
  void try_start(const TaskGraph& g, StreamId s, TimeNs now, Timeline& out);
  void set_comm_active(const TaskGraph& g, int device, int delta, TimeNs now);

  // CSR successors, per-stream task lists, and run state — kept between runs to avoid allocation.
  std::vector<std::uint32_t> succ_begin_, succ_;
  std::vector<std::uint32_t> stream_begin_, stream_tasks_, stream_pos_;
  std::vector<std::uint32_t> pending_preds_;
  std::vector<std::uint8_t> stream_busy_;
  std::vector<TaskId> stream_running_;
  std::vector<int> device_comm_active_;
  std::vector<std::uint32_t> device_begin_, device_compute_;  // compute streams of each device (CSR)
  std::vector<double> remaining_;       // work left (ns at full speed) of running compute tasks
  std::vector<TimeNs> last_update_;
  std::vector<std::uint32_t> version_;
  std::vector<Event> heap_;
  std::uint64_t seq_ = 0;
};

}  // namespace parsim::engine

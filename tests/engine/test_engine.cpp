#include "sim/engine/engine.hpp"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace parsim::engine;

TEST_CASE("tasks on one stream run in insertion order, back to back") {
  TaskGraph g;
  int d = g.add_device();
  StreamId s = g.add_stream(d, StreamClass::Compute);
  TaskId a = g.add_task(s, 10, 0), b = g.add_task(s, 20, 1), c = g.add_task(s, 5, 2);
  Executor ex;
  Timeline tl;
  ex.run(g, tl);
  // a: [0,10), b: [10,30), c: [30,35)
  CHECK(tl.start[a] == 0);
  CHECK(tl.end[b] == 30);
  CHECK(tl.start[c] == 30);
  CHECK(tl.makespan == 35);
  CHECK(tl.events == 3);
}

TEST_CASE("independent streams overlap; a dependency delays the consumer") {
  TaskGraph g;
  int d0 = g.add_device(), d1 = g.add_device();
  StreamId s0 = g.add_stream(d0, StreamClass::Compute), s1 = g.add_stream(d1, StreamClass::Compute);
  TaskId a = g.add_task(s0, 100, 0);
  TaskId b = g.add_task(s1, 30, 0);
  TaskId c = g.add_task(s1, 10, 0);
  g.add_dep(a, c);
  Executor ex;
  Timeline tl;
  ex.run(g, tl);
  // b runs [0,30) in parallel with a [0,100); c waits for a: [100,110) although its stream is free at 30.
  CHECK(tl.end[b] == 30);
  CHECK(tl.start[c] == 100);
  CHECK(tl.makespan == 110);
}

TEST_CASE("a stream is in-order: a ready task waits behind a blocked head") {
  TaskGraph g;
  int d = g.add_device();
  StreamId comp = g.add_stream(d, StreamClass::Compute), comm = g.add_stream(d, StreamClass::Comm);
  TaskId x = g.add_task(comp, 50, 0);
  TaskId blocked = g.add_task(comm, 10, 0);  // needs x
  TaskId ready = g.add_task(comm, 10, 0);    // no deps, but queued behind `blocked`
  g.add_dep(x, blocked);
  Executor ex;
  Timeline tl;
  ex.run(g, tl);
  // blocked: [50,60); ready: [60,70) — like a CUDA stream, not a thread pool.
  CHECK(tl.start[blocked] == 50);
  CHECK(tl.start[ready] == 60);
}

TEST_CASE("compute slows down while a communication kernel of the same device runs") {
  TaskGraph g;
  int d = g.add_device(0.25);  // compute at 1/1.25 = 0.8 speed while comm is active
  StreamId comp = g.add_stream(d, StreamClass::Compute), comm = g.add_stream(d, StreamClass::Comm);
  TaskId k = g.add_task(comp, 100, 0);
  TaskId c = g.add_task(comm, 40, 0);
  Executor ex;
  Timeline tl;
  ex.run(g, tl);
  // During [0,40) compute does 40·0.8 = 32 ns of work; 68 ns remain at full speed → ends at 108.
  CHECK(tl.end[c] == 40);
  CHECK(tl.end[k] == 108);
}

TEST_CASE("a cycle through stream order and dependencies is reported, not hung") {
  TaskGraph g;
  int d = g.add_device();
  StreamId s0 = g.add_stream(d, StreamClass::Compute), s1 = g.add_stream(d, StreamClass::Comm);
  TaskId a1 = g.add_task(s0, 1, 0), a2 = g.add_task(s0, 1, 0);
  TaskId b1 = g.add_task(s1, 1, 0), b2 = g.add_task(s1, 1, 0);
  g.add_dep(b2, a1);  // a1 needs b2, but b2 is behind b1, which needs a2, which is behind a1
  g.add_dep(a2, b1);
  CHECK_FALSE(g.check_acyclic().empty());
  Executor ex;
  Timeline tl;
  CHECK_THROWS_AS(ex.run(g, tl), std::logic_error);
}

TEST_CASE("identical graphs give bit-identical timelines, and the executor is reusable") {
  auto build = [](TaskGraph& g) {
    g.clear();
    int d = g.add_device(0.1);
    StreamId a = g.add_stream(d, StreamClass::Compute), b = g.add_stream(d, StreamClass::Comm);
    TaskId prev = g.add_task(a, 7, 0);
    for (int i = 0; i < 200; ++i) {
      TaskId x = g.add_task(a, 13 + i % 7, static_cast<std::uint32_t>(i));
      TaskId y = g.add_task(b, 11 + i % 5, static_cast<std::uint32_t>(i));
      g.add_dep(prev, y);
      prev = x;
    }
  };
  TaskGraph g;
  Executor ex;
  Timeline t1, t2;
  build(g);
  ex.run(g, t1);
  build(g);
  ex.run(g, t2);
  CHECK(g.check_acyclic().empty());
  CHECK(t1.start == t2.start);
  CHECK(t1.end == t2.end);
  CHECK(t1.makespan == t2.makespan);
}

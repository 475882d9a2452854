#include "sim/engine/engine.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

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

TEST_CASE("a deadlock through host program order and the launch queue names the stuck tasks") {
  // The shape of the bug a legacy-Megatron interleaved plan hit (tests/step/test_deadlock.cpp): the host issues a
  // reduction r (comm stream) that depends on a compute task c issued AFTER it, with a launch queue of depth 1 and a
  // filler kernel f in between. Issuing c's kernel (program kernel 2) needs the kernel 1 position back — r — to have
  // started; r needs c to finish; c is never issued. The report names r's wait and the host's.
  TaskGraph g;
  int d = g.add_device();
  g.set_launch_queue(d, 1);
  StreamId comp = g.add_stream(d, StreamClass::Compute), comm = g.add_stream(d, StreamClass::Comm);
  TaskId r = g.add_task(comm, 10, 0), f = g.add_task(comp, 10, 1), c = g.add_task(comp, 10, 2);
  g.add_dep(c, r);
  g.issue(r, 1, 1, 0);
  g.issue(f, 1, 1, 1);
  g.issue(c, 1, 1, 2);
  Executor ex;
  Timeline tl;
  try {
    ex.run(g, tl);
    FAIL("no deadlock reported");
  } catch (const DeadlockError& e) {
    const std::string what = e.what();
    CHECK(what.find("task " + std::to_string(r) + " waits for task " + std::to_string(c)) != std::string::npos);
    CHECK(what.find("launch queue full") != std::string::npos);
    bool host_item = false;
    for (const StuckItem& it : e.stuck()) host_item = host_item || it.wait == StuckItem::Wait::HostQueue;
    CHECK(host_item);
  }
  // Issued in dependency order (c before r), the same graph runs.
  TaskGraph ok;
  d = ok.add_device();
  ok.set_launch_queue(d, 1);
  comp = ok.add_stream(d, StreamClass::Compute);
  comm = ok.add_stream(d, StreamClass::Comm);
  r = ok.add_task(comm, 10, 0);
  f = ok.add_task(comp, 10, 1);
  c = ok.add_task(comp, 10, 2);
  ok.add_dep(c, r);
  ok.issue(f, 1, 1, 0);
  ok.issue(c, 1, 1, 1);
  ok.issue(r, 1, 1, 2);
  CHECK_NOTHROW(ex.run(ok, tl));
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

// ---- the host (docs/host-model.md §6.1): issue costs, launch-bound kernels, syncs, the launch queue ----

TEST_CASE("host: a chain of kernels shorter than their launch runs at the host's pace") {
  // 10 one-kernel tasks of 2 µs on the GPU, each costing the host 10 µs to issue. Task i is issued over
  // [10i, 10i+10] µs, its only kernel is launched at the end of that (first = host/K = 10 µs after issue start), so it
  // runs [10i+10, 10i+12]: the last ends at 10·10 + 2 = 102 µs, not the 20 µs of GPU time.
  TaskGraph g;
  int d = g.add_device();
  StreamId s = g.add_stream(d, StreamClass::Compute);
  std::vector<TaskId> t;
  for (int i = 0; i < 10; ++i) {
    t.push_back(g.add_task(s, 2000, 0));
    g.issue(t.back(), 10000, 1, static_cast<std::uint64_t>(i));
  }
  Executor ex;
  Timeline tl;
  ex.run(g, tl);
  CHECK(tl.start[t[0]] == 10000);
  CHECK(tl.start[t[5]] == 60000);
  CHECK(tl.end[t[9]] == 102000);
  CHECK(tl.makespan == 102000);
}

TEST_CASE("host: long kernels hide the host") {
  // 10 tasks of 100 µs, 10 µs of issue each: only the first launch is exposed. Task 0 runs [10, 110] µs and the
  // others follow back to back (task i is issued long before the GPU reaches it): makespan 10 + 10·100 = 1,010 µs.
  TaskGraph g;
  int d = g.add_device();
  StreamId s = g.add_stream(d, StreamClass::Compute);
  TaskId last = 0;
  for (int i = 0; i < 10; ++i) {
    last = g.add_task(s, 100000, 0);
    g.issue(last, 10000, 1, static_cast<std::uint64_t>(i));
  }
  Executor ex;
  Timeline tl;
  ex.run(g, tl);
  CHECK(tl.start[last] == 910000);
  CHECK(tl.makespan == 1010000);
}

TEST_CASE("host: an aggregated task of K kernels is bounded by its issue like the chain it stands for") {
  // One task of 10 kernels, 20 µs of GPU time, 100 µs of issue: its first kernel is launched at 100/10 = 10 µs (the
  // task starts then), its last at 100 µs and runs 20/10 = 2 µs: end = max(10 + 20, 100 + 2) = 102 µs — the same as
  // the 10-task chain above. With 1 µs of issue the GPU bounds it: start 0.1 µs, end 20.1 µs.
  struct Case {
    TimeNs host, start, end;
  };
  for (const Case& c : {Case{100000, 10000, 102000}, Case{1000, 100, 20100}}) {
    const TimeNs host = c.host, start = c.start, end = c.end;
    TaskGraph g;
    int d = g.add_device();
    StreamId s = g.add_stream(d, StreamClass::Compute);
    TaskId t = g.add_task(s, 20000, 0);
    g.issue(t, host, 10, 0);
    Executor ex;
    Timeline tl;
    ex.run(g, tl);
    CHECK(tl.start[t] == start);
    CHECK(tl.end[t] == end);
  }
}

TEST_CASE("host: a sync drains the queue and exposes the issue of what follows") {
  // A: 100 µs on the GPU, 10 µs of issue → runs [10, 110]. The sync (drain, 20 µs round trip) waits for A: host
  // [110, 130]. B: 100 µs on the GPU, 50 µs of issue for 5 kernels → issued [130, 180], first kernel at 140, last at
  // 180 + 100/5: B runs [140, 240]. Without the sync B would be issued at [10, 60] and follow A: [110, 210].
  for (bool sync : {true, false}) {
    TaskGraph g;
    int d = g.add_device();
    StreamId s = g.add_stream(d, StreamClass::Compute);
    TaskId a = g.add_task(s, 100000, 0);
    g.issue(a, 10000, 1, 0);
    TaskId h = 0;
    if (sync) h = g.add_host_task(d, 20000, 0, 1, /*drain=*/true);
    TaskId b = g.add_task(s, 100000, 0);
    g.issue(b, 50000, 5, 2);
    CHECK(g.check_acyclic().empty());
    Executor ex;
    Timeline tl;
    ex.run(g, tl);
    if (sync) {
      CHECK(tl.start[h] == 110000);
      CHECK(tl.end[h] == 130000);
      CHECK(tl.start[b] == 140000);
      CHECK(tl.end[b] == 240000);
    } else {
      CHECK(tl.start[b] == 110000);
      CHECK(tl.end[b] == 210000);
    }
  }
}

TEST_CASE("host: a sync right after an issue (sync_after) equals a drain host task at the next position") {
  // The same step as above with the sync folded into A's issue (Megatron's batch_isend_irecv then
  // torch.cuda.synchronize()): A runs [10, 110]; the host drains until 110 and spends 20 µs → 130; B is issued
  // [130, 180], its first kernel at 140 and its last at 180 + 100/5 = 200 ≤ 240: B runs [140, 240].
  TaskGraph g;
  int d = g.add_device();
  StreamId s = g.add_stream(d, StreamClass::Compute);
  TaskId a = g.add_task(s, 100000, 0);
  g.issue(a, 10000, 1, 0, /*sync_after_ns=*/20000);
  TaskId b = g.add_task(s, 100000, 0);
  g.issue(b, 50000, 5, 2);
  Executor ex;
  Timeline tl;
  ex.run(g, tl);
  CHECK(tl.start[a] == 10000);
  CHECK(tl.end[a] == 110000);
  CHECK(tl.start[b] == 140000);
  CHECK(tl.end[b] == 240000);
  CHECK(tl.makespan == 240000);
}

TEST_CASE("host: a host task waits for its dependencies (a stream sync), not for the whole device") {
  // A on the compute stream [1, 101] µs; C on the comm stream, 500 µs, issued second ([1, 2]) → runs [2, 502].
  // The host task waits for A only (.item() on the compute stream): [101, 121]; D, issued after it, starts at 122.
  TaskGraph g;
  int d = g.add_device();
  StreamId comp = g.add_stream(d, StreamClass::Compute), comm = g.add_stream(d, StreamClass::Comm);
  TaskId a = g.add_task(comp, 100000, 0);
  g.issue(a, 1000, 1, 0);
  TaskId c = g.add_task(comm, 500000, 0);
  g.issue(c, 1000, 1, 1);
  TaskId h = g.add_host_task(d, 20000, 0, 2);
  g.add_dep(a, h);
  TaskId e = g.add_task(comp, 1000, 0);
  g.issue(e, 1000, 1, 3);
  Executor ex;
  Timeline tl;
  ex.run(g, tl);
  CHECK(tl.start[c] == 2000);
  CHECK(tl.start[h] == 101000);
  CHECK(tl.end[h] == 121000);
  CHECK(tl.start[e] == 122000);
  CHECK(tl.makespan == 502000);
}

TEST_CASE("host: the launch queue stops the host q kernels ahead of the GPU") {
  // Queue depth 4; ten one-kernel tasks of 100 µs on the GPU, 1 µs of issue each. Task i runs [1 + 100i, 101 + 100i].
  // Issuing task i ≥ 4 needs the GPU to have started task i − 4 (then + 1 µs of launch): the host finishes issuing
  // task 9 at start(5) + 1 = 502 µs, and the host task after it starts there. Without the limit it starts at 10 µs.
  for (int depth : {4, 0}) {
    TaskGraph g;
    int d = g.add_device();
    g.set_launch_queue(d, depth);
    StreamId s = g.add_stream(d, StreamClass::Compute);
    for (int i = 0; i < 10; ++i) g.issue(g.add_task(s, 100000, 0), 1000, 1, static_cast<std::uint64_t>(i));
    TaskId h = g.add_host_task(d, 1000, 0, 10);
    Executor ex;
    Timeline tl;
    ex.run(g, tl);
    CHECK(tl.start[h] == (depth == 4 ? 502000 : 10000));
    CHECK(tl.makespan == 1001000);
  }
}

TEST_CASE("nic: concurrent NIC transfers of one device share its NICs") {
  // A: 100 µs, all of it on the NIC (f_A = 1); B: 100 µs, half on the NIC (f_B = 0.5); both start at 0.
  // rate = D/(D + B·Σ others' f): A runs at 100/(100 + 100·0.5) = 2/3, B at 100/(100 + 50·1) = 2/3 → both end at
  // 150 µs. The NIC is used at f_A·2/3 + f_B·2/3 = 1: exactly its capacity. On two devices both end at 100.
  for (bool shared : {true, false}) {
    TaskGraph g;
    int d0 = g.add_device(), d1 = shared ? d0 : g.add_device();
    StreamId s0 = g.add_stream(d0, StreamClass::Comm), s1 = g.add_stream(d1, StreamClass::Comm);
    TaskId a = g.add_task(s0, 100000, 0), b = g.add_task(s1, 100000, 0);
    g.set_nic(a, 100000);
    g.set_nic(b, 50000);
    Executor ex;
    Timeline tl;
    ex.run(g, tl);
    CHECK(tl.end[b] == (shared ? 150000 : 100000));
    CHECK(tl.end[a] == (shared ? 150000 : 100000));
  }
}

TEST_CASE("nic: two bandwidth-bound transfers take the sum of their NIC times; a compute pass shares by its NIC share") {
  // Processor sharing: A (80 µs, 80 on the NIC) and B (40 µs, 40 on the NIC) start together, each at rate
  // D/(D + B·1) = 1/2. B ends at 80 µs (40 of work at 1/2); A has 80 − 40 = 40 µs left, alone → ends at 120 µs
  // = 80 + 40, the sum of their NIC times.
  {
    TaskGraph g;
    int d = g.add_device();
    StreamId s0 = g.add_stream(d, StreamClass::Comm), s1 = g.add_stream(d, StreamClass::Comm);
    TaskId a = g.add_task(s0, 80000, 0), b = g.add_task(s1, 40000, 0);
    g.set_nic(a, 80000);
    g.set_nic(b, 40000);
    Executor ex;
    Timeline tl;
    ex.run(g, tl);
    CHECK(tl.end[b] == 80000);
    CHECK(tl.end[a] == 120000);
  }
  // A compute pass of 100 µs whose in-pass communication is 10 µs on the NIC (f = 0.1) beside a transfer of 100 µs all
  // on the NIC (f = 1), no SM slowdown: the pass runs at 100/(100 + 10·1) = 1/1.1, the transfer at
  // 100/(100 + 100·0.1) = 1/1.1 → both end at 110 µs (the pass's NIC part is shared half and half: 10 → 20 µs; the
  // transfer loses the NIC for the pass's 10 µs). NIC use: 0.1/1.1 + 1/1.1 = 1.
  {
    TaskGraph g;
    int d = g.add_device();
    StreamId sc = g.add_stream(d, StreamClass::Compute), sm = g.add_stream(d, StreamClass::Comm);
    TaskId p = g.add_task(sc, 100000, 0), x = g.add_task(sm, 100000, 0);
    g.set_nic(p, 10000);
    g.set_nic(x, 100000);
    Executor ex;
    Timeline tl;
    ex.run(g, tl);
    CHECK(tl.end[p] == 110000);
    CHECK(tl.end[x] == 110000);
  }
}

TEST_CASE("event queue: the timeline is the same whether few or many events are pending") {
  // The queue is an unsorted array while at most 32 events are pending and a binary heap beyond (engine.hpp
  // kLinearMax); both pop the least (time, seq). Device 0 runs the contention case above twice in a row (compute
  // 100 ns with a 40 ns comm kernel at the start, then the same again after it): [0,40) at 0.8 → 32 ns done, the
  // remaining 68 ns end at 108; the second pair starts at 108 (comm after the first comm and the first compute, by
  // dependency) → ends at 108 + 108 = 216. `fillers` other devices each hold 3 streams of 9 tasks of 7 + s ns
  // (s = stream index on the device, so several events share a time): 0 fillers keep ≤ 4 events pending, 20 fillers
  // ≈ 60 (heap). Filler stream s of any device ends at 9·(7 + s).
  for (int fillers : {0, 20}) {
    TaskGraph g;
    int d = g.add_device(0.25);
    StreamId comp = g.add_stream(d, StreamClass::Compute), comm = g.add_stream(d, StreamClass::Comm);
    TaskId k1 = g.add_task(comp, 100, 0), c1 = g.add_task(comm, 40, 0);
    TaskId k2 = g.add_task(comp, 100, 0), c2 = g.add_task(comm, 40, 0);
    g.add_dep(k1, c2);
    std::vector<TaskId> last;
    for (int f = 0; f < fillers; ++f) {
      int fd = g.add_device(0.0);
      for (int s = 0; s < 3; ++s) {
        StreamId fs = g.add_stream(fd, s == 0 ? StreamClass::Compute : StreamClass::Comm);
        TaskId t = 0;
        for (int i = 0; i < 9; ++i) t = g.add_task(fs, 7 + s, 0);
        last.push_back(t);
      }
    }
    Executor ex;
    Timeline tl;
    ex.run(g, tl);
    CHECK(tl.end[c1] == 40);
    CHECK(tl.end[k1] == 108);
    CHECK(tl.start[c2] == 108);
    CHECK(tl.end[k2] == 216);
    for (std::size_t i = 0; i < last.size(); ++i) CHECK(tl.end[last[i]] == 9 * (7 + static_cast<TimeNs>(i % 3)));
  }
}

TEST_CASE("host: a launch-queue wait on a kernel that has already run changes nothing") {
  // Queue depth 2; ten one-kernel tasks of 2 µs, 10 µs of issue each: task i is issued over [10i, 10i + 10] and runs
  // [10i + 10, 10i + 12]. Issuing task i ≥ 2 needs kernel r = i + 1 − 1 − 2 = i − 2 started; task i − 2 ran over
  // [10i − 10, 10i − 8], so even its end plus one launch (10 µs) is ≤ 10i + 10, when the host is free: the host never
  // waits (the engine skips the wait without computing it), exactly as with no limit.
  for (int depth : {2, 0}) {
    TaskGraph g;
    int d = g.add_device();
    g.set_launch_queue(d, depth);
    StreamId s = g.add_stream(d, StreamClass::Compute);
    std::vector<TaskId> ts;
    for (int i = 0; i < 10; ++i) {
      ts.push_back(g.add_task(s, 2000, 0));
      g.issue(ts.back(), 10000, 1, static_cast<std::uint64_t>(i));
    }
    Executor ex;
    Timeline tl;
    ex.run(g, tl);
    for (int i = 0; i < 10; ++i) {
      CHECK(tl.start[ts[i]] == 10000 * i + 10000);
      CHECK(tl.end[ts[i]] == 10000 * i + 12000);
    }
  }
}

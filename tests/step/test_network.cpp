// The network as shared (issue 9 item 7): the lowering declares the NIC part of every communication that leaves the
// node — DP / expert-DP buckets, ZeRO / FSDP gathers, pipeline transfers between nodes, and the in-pass TP / CP / EP
// traffic of groups that span nodes — so that the engine shares one rank's NICs between the collectives it runs at
// the same time (sim/engine: TaskGraph::set_nic). Each expected value is derived in a comment before its assertion.
#include "helpers.hpp"
#include "sim/step/lowered.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

using namespace parsim;
using namespace parsim::testing;

namespace {

struct Run {
  Evaluator ev;
  StepReport rep;
  const Lowered& lw() const { return ev.executed().lowered; }
  const engine::Timeline& tl() const { return ev.executed().timeline; }
};

void run(Run& r, const Scenario& sc) {
  EvalOptions opt;
  opt.keep_timeline = true;  // every micro-batch lowered
  r.rep = r.ev.run(sc, opt);
}

// Seconds → the engine's integer nanoseconds, as the lowering rounds them (lower/builder.hpp to_ns).
engine::TimeNs lowering_ns(double s) { return static_cast<engine::TimeNs>(std::llround(std::max(0.0, s) * 1e9)); }

bool is_comm(TaskKind k) { return k == TaskKind::GradReduce || k == TaskKind::ParamGather || k == TaskKind::PipeRecv; }

}  // namespace

TEST_CASE("network: a DP group inside one node puts nothing on the NICs; across nodes every bucket declares its part") {
  // llama3-8b dp8 on one 8-GPU H100 node: the DP group never leaves the node, so no task has a NIC part and the
  // timeline is the one without NIC sharing.
  {
    Run r;
    run(r, scenario("llama3-8b", "dp8zero1", "h100", 64, 1, 4096));
    for (engine::TaskId t = 0; t < r.lw().graph.num_tasks(); ++t) CHECK(r.lw().graph.nic_ns(t) == 0);
  }
  // dp16 (two nodes): every gradient reduce-scatter and parameter all-gather crosses the NICs. A task of nb buckets
  // declares nb × nic_busy_s of one bucket (CollectiveCost: the bucket's bytes on the NIC tier over the rank's NIC
  // share, at most the bucket's time), so its NIC part is the same fraction of its duration as one bucket's.
  Run r;
  const Scenario sc = scenario("llama3-8b", "dp16zero1", "h100", 128, 1, 4096);
  run(r, sc);
  const GroupShape g = group_shape(sc.plan, GroupKind::DPxCP, sc.hw.node.gpus_per_node);
  REQUIRE(g.nodes == 2);
  int comm_tasks = 0;
  for (engine::TaskId t = 0; t < r.lw().graph.num_tasks(); ++t) {
    const TaskInfo& ti = r.lw().info[r.lw().graph.tag(t)];
    if (ti.kind != TaskKind::GradReduce && ti.kind != TaskKind::ParamGather) continue;
    ++comm_tasks;
    const double bucket = sc.train.bucket_bytes;
    const double nb = std::max(1.0, std::floor(ti.bytes / bucket));
    const CollectiveCost one = collective_time(sc.hw, ti.coll, ti.bytes / nb, g);
    const double expected = one.nic_busy_s / one.time_s;  // the bucket's NIC fraction
    REQUIRE(one.nic_busy_s > 0);
    const double got = static_cast<double>(r.lw().graph.nic_ns(t)) / static_cast<double>(r.lw().graph.duration(t));
    CHECK(got == doctest::Approx(expected).epsilon(1e-3));
  }
  CHECK(comm_tasks > 0);
}

TEST_CASE("network: pipeline transfers between nodes share the rank's NICs with the DP buckets they overlap") {
  // llama3-8b tp8pp4dp4vpp2 (interleaved 1F1B) on 8-GPU H100 nodes: adjacent stages are tp·dp = 32 ranks (4 nodes)
  // apart, so every pipeline receive declares StepCosts::p2p_nic_s; dp4 with tp8 leaves the node, so every bucket
  // declares its part too. Under interleaving a chunk's gradient buckets start after its last backward while the
  // other chunk's backward receives are still in flight (under plain 1F1B the stage's last backward ends its
  // receives before its buckets start). A task running beside another NIC task progresses at D/(D + B·f_other)
  // (sim/engine): it never takes less than its duration D, and at least one receive overlaps a bucket and is
  // stretched.
  Run r;
  const Scenario sc = scenario("llama3-8b", "tp8pp4dp4vpp2", "h100", 64, 1, 4096);
  run(r, sc);
  const auto& g = r.lw().graph;
  const auto& tl = r.tl();
  REQUIRE(r.ev.costs().p2p_nic_s > 0);
  CHECK(r.ev.costs().p2p_nic_s <= r.ev.costs().p2p_s);
  int recvs = 0, stretched = 0;
  for (engine::TaskId t = 0; t < g.num_tasks(); ++t) {
    const TaskInfo& ti = r.lw().info[g.tag(t)];
    if (!is_comm(ti.kind)) continue;
    CHECK(g.nic_ns(t) > 0);
    CHECK(tl.end[t] - tl.start[t] >= g.duration(t) - 1);
    if (ti.kind != TaskKind::PipeRecv) continue;
    ++recvs;
    CHECK(g.nic_ns(t) == lowering_ns(r.ev.costs().p2p_nic_s));
    // Overlapped by a DP task of the same stage?
    for (engine::TaskId u = 0; u < g.num_tasks(); ++u) {
      const TaskInfo& ui = r.lw().info[g.tag(u)];
      if (ui.stage != ti.stage || (ui.kind != TaskKind::GradReduce && ui.kind != TaskKind::ParamGather)) continue;
      if (tl.start[u] < tl.end[t] && tl.start[t] < tl.end[u] && tl.end[t] - tl.start[t] > g.duration(t) + 1) {
        ++stretched;
        break;
      }
    }
  }
  CHECK(recvs > 0);
  CHECK(stretched > 0);
}

TEST_CASE("network: in-pass traffic of a group that spans nodes declares its NIC part; results are deterministic") {
  // llama3-8b tp16 on 8-GPU H100 nodes: the TP group spans two nodes, so every forward/backward carries
  // nic_share[tp] × its TP time as NIC part (share = nic_busy_s / time_s of the all-gather of one activation under
  // sequence parallelism), and no CP/EP share exists. With tp8 the group stays in the node: no share.
  Run r;
  const Scenario sc = scenario("llama3-8b", "tp16", "h100", 16, 1, 4096);
  run(r, sc);
  const StepCosts& k = r.ev.costs();
  CHECK(k.nic_share[Axis::tp] > 0);
  CHECK(k.nic_share[Axis::tp] <= 1);
  CHECK(k.nic_share[Axis::cp] == 0);
  CHECK(k.nic_share[Axis::ep] == 0);
  const GroupShape tg = group_shape(sc.plan, GroupKind::TP, sc.hw.node.gpus_per_node);
  const CollectiveCost ag = collective_time(megatron_compute(sc.hw), Collective::AllGather, activation_bytes(sc), tg);
  CHECK(k.nic_share[Axis::tp] == doctest::Approx(ag.nic_busy_s / ag.time_s));
  int passes = 0;
  for (engine::TaskId t = 0; t < r.lw().graph.num_tasks(); ++t) {
    const TaskInfo& ti = r.lw().info[r.lw().graph.tag(t)];
    if (!is_pass(ti.kind)) continue;
    const PassCost& c = r.lw().cost(ti);
    if (c.tp_s <= 0) continue;
    ++passes;
    CHECK(r.lw().graph.nic_ns(t) == lowering_ns(k.nic_share[Axis::tp] * c.tp_s));
  }
  CHECK(passes > 0);
  Run tp8;
  run(tp8, scenario("llama3-8b", "tp8", "h100", 16, 1, 4096));
  CHECK(tp8.ev.costs().nic_share[Axis::tp] == 0);

  // Same inputs → bit-identical timelines (the engine's NIC re-plans are ordered by (time, sequence)).
  Run a, b;
  const Scenario pp = scenario("llama3-8b", "tp8pp4dp4vpp2", "h100", 64, 1, 4096);
  run(a, pp);
  run(b, pp);
  CHECK(a.tl().start == b.tl().start);
  CHECK(a.tl().end == b.tl().end);
  CHECK(a.rep.step_time_s == b.rep.step_time_s);
}

// Chrome-trace / Perfetto JSON of the simulated step (contract: docs/cli.md, Trace). One process per
// pipeline stage, one thread per stream — compute, then one per parallel axis (tp, cp, ep, dp, pp: kAxes order) —,
// X events in µs from the step's start, a memory counter per stage. The trace IS the simulation's timeline: its last
// event ends at step_time_s — under --optimizer-sync post-validation the step time is the longest stage's span instead
// (consecutive steps overlap; otherData says which). Passes are named F (forward), B (backward), "B input" and
// "W weight" (a split backward's input- and weight-gradient halves, zero-bubble B and W), with "(F&B)" on the two
// passes of an overlapped DualPipe pair; the embedding and the LM head are drawn where the lowering placed them
// (TaskInfo::edges).
// Every event is built with the JSON library (names are escaped) and has a `cat`egory (pass, layer, edge, optimizer,
// pp, dp, tp, cp, ep); each pipeline send is a flow arrow (`s` on the sending pass, `f` on the receive); only tracks
// that hold events are named; a trace beyond kMaxTraceEvents events is refused before anything is written.
#include "sim/core/error.hpp"
#include "sim/core/file_io.hpp"
#include "sim/core/json_strict.hpp"
#include "sim/present/render.hpp"
#include "sim/step/analysis.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace parsim {

namespace {

constexpr int kCompute = 0;
int track(Axis a) { return 1 + static_cast<int>(axis_index(a)); }  // one thread per axis, in kAxes order
constexpr int kHost = 16;  // the rank's host thread (syncs, get_batch, the step's fixed work)

const char* pass_letter(TaskKind k) {
  switch (k) {
    case TaskKind::Forward: return "F";
    case TaskKind::Backward: return "B";
    case TaskKind::BackwardInput: return "B input";
    case TaskKind::BackwardWeight: return "W weight";
    default: return "?";
  }
}
const char* pass_suffix(TaskKind k) {
  switch (k) {
    case TaskKind::Forward: return " fwd";
    case TaskKind::Backward: return " bwd";
    case TaskKind::BackwardInput: return " bwd-input";
    case TaskKind::BackwardWeight: return " bwd-weight";
    default: return "";
  }
}

using json = nlohmann::json;

// At most this many events per trace (~200 bytes each: ~0.4 GB). `--trace` at 10^5 micro-batches wrote 1.9 GB without
// a word (issue 12); Perfetto's UI loads a few million events at most.
constexpr std::int64_t kMaxTraceEvents = 2'000'000;

class Writer {
public:
  explicit Writer(std::ofstream& f) : f_(f) {}
  void raw(const json& e) {
    f_ << (first_ ? "\n" : ",\n") << dump_output(e, -1);
    first_ = false;
  }
  void meta(int pid, int tid, const char* what, const std::string& name) {
    json e{{"ph", "M"}, {"pid", pid}, {"name", what}, {"args", {{"name", name}}}};
    if (tid >= 0) e["tid"] = tid;
    raw(e);
  }
  void x(int pid, int tid, double ts_us, double dur_us, const std::string& name, const char* cat,
         json args = json::object()) {
    used_.insert({pid, tid});
    raw(json{{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"ts", ts_us}, {"dur", dur_us}, {"name", name}, {"cat", cat},
             {"args", std::move(args)}});
  }
  // A flow arrow: `s` bound to the slice enclosing ts on (pid, tid), `f` to the slice enclosing ts on its track.
  void flow(std::int64_t id, int pid0, int tid0, double ts0, int pid1, int tid1, double ts1, const std::string& name) {
    raw(json{{"ph", "s"}, {"id", id}, {"pid", pid0}, {"tid", tid0}, {"ts", ts0}, {"name", name}, {"cat", "pp"}});
    raw(json{{"ph", "f"}, {"bp", "e"}, {"id", id}, {"pid", pid1}, {"tid", tid1}, {"ts", ts1}, {"name", name},
             {"cat", "pp"}});
  }
  void counter(int pid, double ts_us, double gib) {
    raw(json{{"ph", "C"}, {"pid", pid}, {"ts", ts_us}, {"name", "memory"}, {"args", {{"GiB", gib}}}});
  }
  bool used(int pid, int tid) const { return used_.count({pid, tid}) > 0; }

private:
  std::ofstream& f_;
  bool first_ = true;
  std::set<std::pair<int, int>> used_;
};

}  // namespace

void write_trace(const std::string& path, const Scenario& sc, const Evaluator& ev, const StepReport& r,
                 bool layer_detail) {
  const ExecutedStep& ex = ev.executed();
  const StepCosts& k = ev.costs();
  const Lowered& lw = ex.lowered;
  const auto& tl = ex.timeline;
  const Plan& pl = sc.plan;
  const PipelinePlacement& place = k.placement;

  // The size first, so that a trace too large to open is refused before anything is written: one event per task, a
  // flow pair per pipeline receive, a counter per memory sample and, with layer detail, at most four children per
  // layer (the layer and its exposed TP/CP/EP communication) and two edge slices per pass.
  std::int64_t events = static_cast<std::int64_t>(lw.graph.num_tasks()) +
                        static_cast<std::int64_t>(ev.memory_samples().size());
  for (std::size_t t = 0; t < lw.graph.num_tasks(); ++t) {
    const TaskInfo& ti = lw.info[lw.graph.tag(static_cast<engine::TaskId>(t))];
    if (ti.kind == TaskKind::PipeRecv) events += 2;
    else if (layer_detail && is_pass(ti.kind)) events += 4 * (ti.layer_end - ti.layer_begin) + 2;
  }
  if (events > kMaxTraceEvents)
    throw InputError("--trace '" + path + "' would hold " + std::to_string(events) + " events for " +
                     std::to_string(lw.microbatches) + " micro-batches (at most " + std::to_string(kMaxTraceEvents) +
                     ", about 0.4 GB, which trace viewers still open): trace a smaller --gbs or a larger --mbs" +
                     (layer_detail ? std::string(", or --trace-detail passes") : std::string()));

  std::ofstream f = open_output_file(path, "--trace file");
  json other{{"generator", std::string("parsim ") + PARSIM_VERSION},
             {"plan", pl.to_string()},
             {"schedule", to_string(sc.train.schedule)},
             {"optimizer_sync", to_string(effective_optimizer_sync(sc.train))},
             {"step_time_s", r.step_time_s}};
  f << "{\"displayTimeUnit\":\"ms\",\"otherData\":" << dump_output(other, -1) << ",\"traceEvents\":[";
  Writer w(f);
  auto us = [](std::int64_t ns) { return static_cast<double>(ns) * 1e-3; };
  for (std::size_t t = 0; t < lw.graph.num_tasks(); ++t) {
    const auto id = static_cast<engine::TaskId>(t);
    const TaskInfo& ti = lw.info[lw.graph.tag(id)];
    const double ts = us(tl.start[id]), dur = us(tl.end[id] - tl.start[id]);
    const int s = ti.stage;
    switch (ti.kind) {
      case TaskKind::Forward:
      case TaskKind::Backward:
      case TaskKind::BackwardInput:
      case TaskKind::BackwardWeight: {
        const bool fwd = ti.kind == TaskKind::Forward;
        const PassKind pk = pass_kind(ti.kind);
        const PassCost& tc = lw.cost(ti);
        std::string name = std::string(pass_letter(ti.kind)) + " mb" + std::to_string(ti.microbatch) +
                           (place.chunks > 1 ? " c" + std::to_string(ti.chunk) : "") + " L" +
                           std::to_string(ti.layer_begin) + "-" + std::to_string(ti.layer_end - 1) +
                           (ti.edges & kPaired ? " (F&B)" : "");
        json args{{"microbatch", ti.microbatch},
                  {"chunk", ti.chunk},
                  {"layers", std::to_string(ti.layer_begin) + "-" + std::to_string(ti.layer_end - 1)},
                  {"compute_ms", tc.compute_s * 1e3},
                  {"tp_ms", tc.tp_s * 1e3},
                  {"tp_exposed_ms", tc.tp_exposed_s * 1e3},
                  {"cp_ms", tc.cp_s * 1e3},
                  {"cp_exposed_ms", tc.cp_exposed_s * 1e3}};
        if (tc.ep_s > 0) args["ep_ms"] = tc.ep_s * 1e3, args["ep_exposed_ms"] = tc.ep_exposed_s * 1e3;
        w.x(s, kCompute, ts, dur, name, "pass", std::move(args));
        const int layers = ti.layer_end - ti.layer_begin;
        if (layer_detail && layers > 0 && tc.duration_s() > 0) {
          // Lay the pieces out inside the pass (stretched uniformly if SM contention slowed it): the embedding and
          // the LM head where the lowering put them (forward: embedding, layers, head; backward: head, layers in
          // reverse, embedding), each layer followed by its exposed TP/CP communication, which also appears on the
          // tp/cp tracks. Child slices tile the pass on integer nanoseconds (a boundary is rounded once and shared by
          // the slices on both sides), so that they nest exactly inside the pass: Perfetto rejects overlapping siblings.
          const std::int64_t p0 = tl.start[id], p1 = tl.end[id];
          const double ns_scale = static_cast<double>(p1 - p0) / (tc.duration_s() * 1e9);
          double pos = static_cast<double>(p0);
          auto at = [&](double x) { return std::min(p1, static_cast<std::int64_t>(std::llround(x))); };
          auto child = [&](int tid, double from, double len, const std::string& label, const char* cat,
                           json a = json::object()) {
            const std::int64_t b0 = at(from), b1 = at(from + len);
            if (b1 > b0) w.x(s, tid, us(b0), us(b1 - b0), label, cat, std::move(a));
          };
          auto edge = [&](bool present, const PassCost& c, const std::string& label) {
            if (!present || c.duration_s() <= 1e-12) return;
            const double len = c.duration_s() * 1e9 * ns_scale;
            child(kCompute, pos, len, label, "edge");
            pos += len;
          };
          const bool has_embed = ti.edges & kEdgeEmbedding, has_head = ti.edges & kEdgeHead;
          const std::string suffix = fwd ? "" : pass_suffix(ti.kind);
          if (fwd) edge(has_embed, k.embed[pk], "embedding");
          else edge(has_head, k.head[pk], "lm head + loss" + suffix);
          for (int i = 0; i < layers; ++i) {
            const int layer = fwd ? ti.layer_begin + i : ti.layer_end - 1 - i;
            const PassCost& per = k.kind_of(layer).pass[pk];  // this layer's kind (dense / MoE, attention kind)
            const double d = per.duration_s() * 1e9 * ns_scale;
            child(kCompute, pos, d, "layer " + std::to_string(layer) + pass_suffix(ti.kind), "layer");
            double c = pos + per.compute_s * 1e9 * ns_scale;
            if (per.tp_exposed_s > 0) {
              child(track(Axis::tp), c, per.tp_exposed_s * 1e9 * ns_scale,
                    sc.train.sp ? "TP all-gather/reduce-scatter" : "TP all-reduce", "tp",
                    json{{"total_ms", per.tp_s * 1e3}, {"exposed_ms", per.tp_exposed_s * 1e3}});
              c += per.tp_exposed_s * 1e9 * ns_scale;
            }
            if (per.cp_exposed_s > 0) {
              child(track(Axis::cp), c, per.cp_exposed_s * 1e9 * ns_scale, "CP ring K/V exchange", "cp");
              c += per.cp_exposed_s * 1e9 * ns_scale;
            }
            if (per.ep_exposed_s > 0)
              child(track(Axis::ep), c, per.ep_exposed_s * 1e9 * ns_scale, "EP all-to-all", "ep");
            pos += d;
          }
          if (fwd) edge(has_head, k.head[pk], "lm head + loss");
          else edge(has_embed, k.embed[pk], "embedding" + suffix);
        }
        break;
      }
      case TaskKind::Optimizer:
        w.x(s, kCompute, ts, dur, "optimizer step", "optimizer");
        break;
      case TaskKind::PipeRecv:
        w.x(s, track(ti.comm), ts, dur,
            std::string("recv ") + (ti.microbatch >= 0 ? "mb" + std::to_string(ti.microbatch) : ""),
            axis_name(ti.comm),
            json{{"microbatch", ti.microbatch}, {"chunk", ti.chunk}, {"bytes", static_cast<double>(ti.bytes)}});
        break;
      case TaskKind::GradReduce:
      case TaskKind::ParamGather:
        w.x(s, track(ti.comm), ts, dur,
            std::string(ti.kind == TaskKind::GradReduce ? "grads " : "params ") + to_string(ti.coll),
            axis_name(ti.comm),
            json{{"microbatch", ti.microbatch},
                 {"layers", std::to_string(ti.layer_begin) + "-" + std::to_string(ti.layer_end - 1)},
                 {"bytes", static_cast<double>(ti.bytes)},
                 {"collective", to_string(ti.coll)}});
        break;
      case TaskKind::HostWork:
        w.x(s, kHost, ts, dur, host_part_name(ti.host), "host");
        break;
    }
  }
  // Pipeline sends as flow arrows: the producing pass (another stage's compute track) → the receive that depends on
  // it (the lowering's dependency producer's last segment → receive, pipeline.cpp add_pipe_recvs).
  std::int64_t flow_id = 0;
  for (std::size_t d = 0; d < lw.graph.num_deps(); ++d) {
    const engine::TaskId from = lw.graph.dep_from(d), to = lw.graph.dep_to(d);
    const TaskInfo& a = lw.info[lw.graph.tag(from)];
    const TaskInfo& b = lw.info[lw.graph.tag(to)];
    if (b.kind != TaskKind::PipeRecv || !is_pass(a.kind) || a.stage == b.stage) continue;
    w.flow(++flow_id, a.stage, kCompute, us(tl.start[from]), b.stage, track(b.comm), us(tl.start[to]),
           std::string(a.kind == TaskKind::Forward ? "activations" : "gradients") + " mb" +
               std::to_string(b.microbatch));
  }
  for (const MemorySample& m : ev.memory_samples()) w.counter(m.stage, us(m.time_ns), m.bytes / kGiB);
  // Names of the stages and of the tracks that hold events (no empty tracks).
  for (int s = 0; s < pl.pp; ++s) {
    // "stage s (layers a-b)" for one chunk; with several, each chunk's range ("c1 L16-17") is in its passes' names.
    std::string layers;
    if (place.chunks == 1) {
      int lo = 0;
      for (int i = 0; i < s; ++i) lo += k.layers_per_chunk[i];
      layers = " (layers " + std::to_string(lo) + "-" + std::to_string(lo + k.layers_per_chunk[s] - 1) + ")";
    }
    w.meta(s, -1, "process_name", "stage " + std::to_string(s) + layers);
    if (w.used(s, kCompute)) w.meta(s, kCompute, "thread_name", "compute");
    for (Axis a : kAxes)
      if (w.used(s, track(a))) w.meta(s, track(a), "thread_name", axis_name(a));
    if (w.used(s, kHost)) w.meta(s, kHost, "thread_name", "host");
  }
  f << "\n]}\n";
  f.flush();
  if (!f) throw InputError("cannot write --trace file '" + path + "': the write failed (disk full?)");
}

}  // namespace parsim

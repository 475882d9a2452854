// Chrome-trace / Perfetto JSON of the simulated step (contract: docs/cli.md, Trace). One process per
// pipeline stage, one thread per stream — compute, then one per parallel axis (tp, cp, ep, dp, pp: kAxes order) —,
// X events in µs from the step's start, a memory counter per stage. The trace IS the simulation's timeline: its last
// event ends at step_time_s — under --optimizer-sync post-validation the step time is the longest stage's span instead
// (consecutive steps overlap; otherData says which). Passes are named F (forward), B (backward), "B input" and
// "W weight" (a split backward's input- and weight-gradient halves, zero-bubble B and W), with "(F&B)" on the two
// passes of an overlapped DualPipe pair; the embedding and the LM head are drawn where the lowering placed them
// (TaskInfo::edges).
#include "sim/core/error.hpp"
#include "sim/present/render.hpp"
#include "sim/step/analysis.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

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

class Writer {
public:
  explicit Writer(std::ofstream& f) : f_(f) {}
  void raw(const std::string& s) {
    f_ << (first_ ? "\n" : ",\n") << s;
    first_ = false;
  }
  void meta(int pid, int tid, const char* what, const std::string& name) {
    char b[512];
    if (tid < 0)
      std::snprintf(b, sizeof b, R"({"ph":"M","pid":%d,"name":"%s","args":{"name":"%s"}})", pid, what, name.c_str());
    else
      std::snprintf(b, sizeof b, R"({"ph":"M","pid":%d,"tid":%d,"name":"%s","args":{"name":"%s"}})", pid, tid, what,
                    name.c_str());
    raw(b);
  }
  void x(int pid, int tid, double ts_us, double dur_us, const std::string& name, const std::string& args) {
    char b[1024];
    std::snprintf(b, sizeof b, R"({"ph":"X","pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,"name":"%s","args":{%s}})", pid,
                  tid, ts_us, dur_us, name.c_str(), args.c_str());
    raw(b);
  }
  void counter(int pid, double ts_us, double gib) {
    char b[256];
    std::snprintf(b, sizeof b, R"({"ph":"C","pid":%d,"ts":%.3f,"name":"memory","args":{"GiB":%.4f}})", pid, ts_us, gib);
    raw(b);
  }

private:
  std::ofstream& f_;
  bool first_ = true;
};


}  // namespace

void write_trace(const std::string& path, const Scenario& sc, const Evaluator& ev, const StepReport& r,
                 bool layer_detail) {
  std::ofstream f(path);
  if (!f) throw InputError("--trace '" + path + "' cannot be written");
  const ExecutedStep& ex = ev.executed();
  const StepCosts& k = ev.costs();
  const Lowered& lw = ex.lowered;
  const auto& tl = ex.timeline;
  const Plan& pl = sc.plan;
  f << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"parsim " << PARSIM_VERSION
    << "\",\"plan\":\"" << pl.to_string() << "\",\"schedule\":\"" << to_string(sc.train.schedule)
    << "\",\"optimizer_sync\":\"" << to_string(effective_optimizer_sync(sc.train)) << "\",\"step_time_s\":"
    << r.step_time_s << "},\"traceEvents\":[";
  Writer w(f);
  const PipelinePlacement& place = k.placement;
  for (int s = 0; s < pl.pp; ++s) {
    // "stage s (layers a-b)" for one chunk; with several, each chunk's range ("c1 L16-17") is in its passes' names.
    std::string layers;
    if (place.chunks == 1) {
      int lo = 0;
      for (int i = 0; i < s; ++i) lo += k.layers_per_chunk[i];
      layers = " (layers " + std::to_string(lo) + "-" + std::to_string(lo + k.layers_per_chunk[s] - 1) + ")";
    }
    w.meta(s, -1, "process_name", "stage " + std::to_string(s) + layers);
    w.meta(s, kCompute, "thread_name", "compute");
    for (Axis a : kAxes) w.meta(s, track(a), "thread_name", axis_name(a));
    w.meta(s, kHost, "thread_name", "host");
  }
  auto us = [](std::int64_t ns) { return static_cast<double>(ns) * 1e-3; };
  char args[512];
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
        std::snprintf(args, sizeof args,
                      R"("microbatch":%d,"chunk":%d,"layers":"%d-%d","compute_ms":%.4f,"tp_ms":%.4f,"tp_exposed_ms":%.4f,"cp_ms":%.4f,"cp_exposed_ms":%.4f%s)",
                      ti.microbatch, ti.chunk, ti.layer_begin, ti.layer_end - 1, tc.compute_s * 1e3,
                      tc.tp_s * 1e3, tc.tp_exposed_s * 1e3, tc.cp_s * 1e3, tc.cp_exposed_s * 1e3,
                      tc.ep_s > 0 ? (",\"ep_ms\":" + std::to_string(tc.ep_s * 1e3) + ",\"ep_exposed_ms\":" +
                                     std::to_string(tc.ep_exposed_s * 1e3)).c_str()
                                  : "");
        w.x(s, kCompute, ts, dur, name, args);
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
          auto child = [&](int tid, double from, double len, const std::string& label, const std::string& a) {
            const std::int64_t b0 = at(from), b1 = at(from + len);
            if (b1 > b0) w.x(s, tid, us(b0), us(b1 - b0), label, a);
          };
          auto edge = [&](bool present, const PassCost& c, const std::string& label) {
            if (!present || c.duration_s() <= 1e-12) return;
            const double len = c.duration_s() * 1e9 * ns_scale;
            child(kCompute, pos, len, label, "");
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
            child(kCompute, pos, d, "layer " + std::to_string(layer) + pass_suffix(ti.kind), "");
            double c = pos + per.compute_s * 1e9 * ns_scale;
            if (per.tp_exposed_s > 0) {
              std::snprintf(args, sizeof args, R"("total_ms":%.4f,"exposed_ms":%.4f)", per.tp_s * 1e3,
                            per.tp_exposed_s * 1e3);
              child(track(Axis::tp), c, per.tp_exposed_s * 1e9 * ns_scale,
                    sc.train.sp ? "TP all-gather/reduce-scatter" : "TP all-reduce", args);
              c += per.tp_exposed_s * 1e9 * ns_scale;
            }
            if (per.cp_exposed_s > 0) {
              child(track(Axis::cp), c, per.cp_exposed_s * 1e9 * ns_scale, "CP ring K/V exchange", "");
              c += per.cp_exposed_s * 1e9 * ns_scale;
            }
            if (per.ep_exposed_s > 0)
              child(track(Axis::ep), c, per.ep_exposed_s * 1e9 * ns_scale, "EP all-to-all", "");
            pos += d;
          }
          if (fwd) edge(has_head, k.head[pk], "lm head + loss");
          else edge(has_embed, k.embed[pk], "embedding" + suffix);
        }
        break;
      }
      case TaskKind::Optimizer:
        w.x(s, kCompute, ts, dur, "optimizer step", "");
        break;
      case TaskKind::PipeRecv:
        std::snprintf(args, sizeof args, R"("microbatch":%d,"chunk":%d,"bytes":%.0f)", ti.microbatch, ti.chunk,
                      static_cast<double>(ti.bytes));
        w.x(s, track(ti.comm), ts, dur, std::string("recv ") + (ti.microbatch >= 0 ? "mb" + std::to_string(ti.microbatch) : ""),
            args);
        break;
      case TaskKind::GradReduce:
      case TaskKind::ParamGather:
        std::snprintf(args, sizeof args, R"("microbatch":%d,"layers":"%d-%d","bytes":%.0f,"collective":"%s")",
                      ti.microbatch, ti.layer_begin, ti.layer_end - 1, static_cast<double>(ti.bytes),
                      to_string(ti.coll).c_str());
        w.x(s, track(ti.comm), ts, dur,
            std::string(ti.kind == TaskKind::GradReduce ? "grads " : "params ") + to_string(ti.coll), args);
        break;
      case TaskKind::HostWork:
        w.x(s, kHost, ts, dur, host_part_name(ti.host), "");
        break;
    }
  }
  for (const MemorySample& m : ev.memory_samples()) w.counter(m.stage, us(m.time_ns), m.bytes / kGiB);
  f << "\n]}\n";
  if (!f) throw InputError("--trace '" + path + "': write failed");
}

}  // namespace parsim

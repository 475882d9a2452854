// parsim sim/present — the picture of one simulated step (`parsim predict --svg FILE`), from the same timeline as the
// Chrome trace (trace.cpp). One lane group per pipeline stage (the representative rank of the stage): its compute
// stream, then one lane per parallel axis it communicates on (kAxes order: tp, cp, ep, dp, pp).
//   compute lane   passes coloured by kind (forward, backward — or a split backward's input-gradient B and
//                  weight-gradient W —, the recompute inside a backward, the optimizer step); idle time is the hatched
//                  background (inside the pipeline window that is the bubble of the contract's bubble_fraction).
//   comm lanes     a bar per communication: its height is the share of the interval the link is busy (1 for the
//                  engine's pipeline, gradient and parameter tasks; tp_s / pass for the TP communication inside a pass),
//                  grey where compute hides it, vermillion where it is exposed (the compute stream waits).
// When a lane holds more slices than the picture has pixels (thousands of micro-batches), it is drawn as the share of
// each kind per 2-pixel column, and two detail panels show the start (pipeline warm-up) and the end (cool-down,
// gradient synchronisation, optimizer) of the step slice by slice.
#include "sim/present/svg.hpp"

#include "sim/core/text.hpp"
#include "sim/step/analysis.hpp"
#include "sim/step/costs.hpp"
#include "sim/step/lowered.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace parsim {

namespace {

using svg::Doc;
using svg::num;

// Compute kinds, in stacking order (bottom first) for aggregated columns.
enum CompKind : std::uint8_t { kFwd, kRecompute, kBwd, kBwdInput, kBwdWeight, kOptimizer, kCompKinds };

struct KindStyle {
  const char* fill;
  const char* text;  // label colour on that fill
  const char* legend;
};
const std::array<KindStyle, kCompKinds>& kind_styles() {
  static const std::array<KindStyle, kCompKinds> s = {{
      {svg::kBlue, "#ffffff", "forward"},
      {svg::kSkyBlue, svg::kInk, "recompute (forward re-run in the backward)"},
      {svg::kOrange, svg::kInk, "backward"},
      {svg::kOrange, svg::kInk, "backward, input gradients (B)"},
      {svg::kGreen, "#ffffff", "backward, weight gradients (W)"},
      {svg::kPurple, svg::kInk, "optimizer step"},
  }};
  return s;
}

struct CompSpan {
  double t0, t1;
  CompKind kind;
  int mb, chunk, layers;
  double recompute_s;  // recompute inside this (backward) pass, in its own time scale
};

// A stretch of communication on one lane: `busy` is the share of [t0, t1) the link is busy, `exposed` the share on the
// critical path (exposed ≤ busy).
struct CommSpan {
  double t0, t1;
  double busy, exposed;
};

struct StageLanes {
  std::vector<CompSpan> comp;
  PerAxis<std::vector<CommSpan>> comm;
  std::string layers;  // "layers 0–15", or the chunks' ranges when interleaved
};

using Interval = std::pair<double, double>;

std::vector<Interval> merge(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& x : v) {
    if (x.second <= x.first) continue;
    if (!out.empty() && x.first <= out.back().second) out.back().second = std::max(out.back().second, x.second);
    else out.push_back(x);
  }
  return out;
}

// Pieces of [a, b) split by whether `cover` (merged) covers them: (t0, t1, covered).
void split_by_cover(double a, double b, const std::vector<Interval>& cover, std::vector<std::tuple<double, double, bool>>& out) {
  out.clear();
  auto it = std::lower_bound(cover.begin(), cover.end(), Interval{a, a},
                             [](const Interval& x, const Interval& y) { return x.second < y.first; });
  double cur = a;
  for (; it != cover.end() && it->first < b; ++it) {
    if (it->second <= cur) continue;
    if (it->first > cur) out.emplace_back(cur, it->first, false);
    const double e = std::min(b, it->second);
    if (e > std::max(cur, it->first)) out.emplace_back(std::max(cur, it->first), e, true);
    cur = std::max(cur, e);
  }
  if (cur < b) out.emplace_back(cur, b, false);
}

std::vector<StageLanes> collect(const Scenario& sc, const Evaluator& ev) {
  const ExecutedStep& ex = ev.executed();
  const Lowered& lw = ex.lowered;
  const auto& tl = ex.timeline;
  const StepCosts& k = ev.costs();
  const Plan& pl = sc.plan;
  std::vector<StageLanes> st(static_cast<std::size_t>(pl.pp));
  // Recompute per layer and pass kind: the layer's backward with the scenario's recompute minus without it.
  std::array<double, kPassKinds> rec_per_layer{};
  if (sc.train.recompute != Recompute::None) {
    Scenario plain = sc;
    plain.train.recompute = Recompute::None;
    const StepCosts k0 = compute_step_costs(plain);
    for (PassKind pk : {PassKind::Backward, PassKind::BackwardInput})
      rec_per_layer[static_cast<std::size_t>(pk)] =
          std::max(0.0, k.layer[pk].duration_s() - k0.layer[pk].duration_s());
  }
  for (int s = 0; s < pl.pp; ++s) {
    std::string text;
    for (int c = 0; c < pl.vpp; ++c) {
      const int vs = c * pl.pp + s;
      int lo = 0;
      for (int i = 0; i < vs; ++i) lo += k.layers_per_chunk[static_cast<std::size_t>(i)];
      const int hi = lo + k.layers_per_chunk[static_cast<std::size_t>(vs)] - 1;
      if (c == 2 && pl.vpp > 3) {
        text += ", …";
        break;
      }
      text += (c ? ", " : "") + std::to_string(lo) + "–" + std::to_string(hi);
    }
    st[static_cast<std::size_t>(s)].layers = "layers " + text;
  }
  struct Raw {
    int stage;
    Axis axis;
    double t0, t1;
  };
  std::vector<Raw> tasks;
  for (std::size_t t = 0; t < lw.graph.num_tasks(); ++t) {
    const auto id = static_cast<engine::TaskId>(t);
    const TaskInfo& ti = lw.info[lw.graph.tag(id)];
    const double t0 = static_cast<double>(tl.start[id]) * 1e-9, t1 = static_cast<double>(tl.end[id]) * 1e-9;
    StageLanes& L = st[static_cast<std::size_t>(ti.stage)];
    if (is_pass(ti.kind)) {
      const PassKind pk = pass_kind(ti.kind);
      const PassCost& c = lw.cost(ti);
      const double dur = t1 - t0;
      const double stretch = c.duration_s() > 0 ? dur / c.duration_s() : 1.0;
      CompKind kind = kFwd;
      switch (ti.kind) {
        case TaskKind::Forward: kind = kFwd; break;
        case TaskKind::Backward: kind = kBwd; break;
        case TaskKind::BackwardInput: kind = kBwdInput; break;
        case TaskKind::BackwardWeight: kind = kBwdWeight; break;
        default: break;
      }
      const int layers = ti.layer_end - ti.layer_begin;
      const double rec = std::min(dur, rec_per_layer[static_cast<std::size_t>(pk)] * layers * stretch);
      L.comp.push_back({t0, t1, kind, ti.microbatch, ti.chunk, layers, rec});
      if (dur > 0) {
        auto add = [&](Axis a, double total, double exposed) {
          if (total <= 0) return;
          const double b = std::min(1.0, total * stretch / dur), e = std::min(b, exposed * stretch / dur);
          L.comm[a].push_back({t0, t1, b, e});
        };
        add(Axis::tp, c.tp_s, c.tp_exposed_s);
        add(Axis::cp, c.cp_s, c.cp_exposed_s);
        add(Axis::ep, c.ep_s, c.ep_exposed_s);
      }
    } else if (ti.kind == TaskKind::Optimizer) {
      L.comp.push_back({t0, t1, kOptimizer, -1, 0, 0, 0});
    } else {
      tasks.push_back({ti.stage, ti.comm, t0, t1});
    }
  }
  // Engine communication tasks: exposed where the stage's compute stream is idle.
  std::vector<std::vector<Interval>> busy(static_cast<std::size_t>(pl.pp));
  for (int s = 0; s < pl.pp; ++s) {
    std::vector<Interval> v;
    for (const CompSpan& c : st[static_cast<std::size_t>(s)].comp) v.emplace_back(c.t0, c.t1);
    busy[static_cast<std::size_t>(s)] = merge(std::move(v));
  }
  std::vector<std::tuple<double, double, bool>> pieces;
  for (const Raw& r : tasks) {
    split_by_cover(r.t0, r.t1, busy[static_cast<std::size_t>(r.stage)], pieces);
    for (const auto& [a, b, covered] : pieces)
      st[static_cast<std::size_t>(r.stage)].comm[r.axis].push_back({a, b, 1.0, covered ? 0.0 : 1.0});
  }
  for (auto& L : st) {
    std::sort(L.comp.begin(), L.comp.end(), [](const CompSpan& a, const CompSpan& b) { return a.t0 < b.t0; });
    // A pass lowered as several segments (the last backward, split for overlapped gradient buckets) is one slice.
    std::vector<CompSpan> joined;
    for (const CompSpan& c : L.comp) {
      if (!joined.empty()) {
        CompSpan& b = joined.back();
        if (b.kind == c.kind && b.mb == c.mb && b.chunk == c.chunk && c.kind != kOptimizer && c.t0 - b.t1 < 1e-9) {
          b.t1 = c.t1;
          b.layers += c.layers;
          b.recompute_s += c.recompute_s;
          continue;
        }
      }
      joined.push_back(c);
    }
    L.comp = std::move(joined);
    for (Axis a : kAxes)
      std::sort(L.comm[a].begin(), L.comm[a].end(), [](const CommSpan& x, const CommSpan& y) { return x.t0 < y.t0; });
  }
  return st;
}

// ---- layout ----
constexpr double kWidth = 1280, kLeft = 176, kRight = 28;
constexpr double kPlotW = kWidth - kLeft - kRight;
constexpr double kColPx = 2;  // narrowest aggregation column

struct Geometry {
  double comp_h, comm_h, group_gap;
};

struct Panel {
  double ta, tb;  // time window
  double x0, w;   // pixels
  double col_px = kColPx;  // aggregation column width (dense lanes)
  double px(double t) const { return x0 + (t - ta) / (tb - ta) * w; }
};

// Run-length encoded stacked columns: each column a vector of heights (px) by layer; consecutive equal columns merge.
std::string fill_style(const std::string& fill) { return "fill=\"" + fill + "\""; }

void draw_columns(Doc& d, const Panel& p, double y_bottom, const std::vector<std::vector<double>>& cols,
                  const std::vector<std::string>& fills) {
  svg::RectBatch batch;
  for (const auto& f : fills) batch.add(fill_style(f), 0, 0, 0, 0);  // fixes the painting order (adds nothing)
  const std::size_t n = cols.size();
  std::size_t i = 0;
  while (i < n) {
    std::size_t j = i + 1;
    while (j < n && cols[j] == cols[i]) ++j;
    double y = y_bottom;
    for (std::size_t k = 0; k < fills.size(); ++k) {
      const double h = cols[i][k];
      if (h <= 0) continue;
      const double x = p.x0 + static_cast<double>(i) * p.col_px;
      batch.add(fill_style(fills[k]), x, y - h, std::min(static_cast<double>(j - i) * p.col_px, p.x0 + p.w - x), h);
      y -= h;
    }
    i = j;
  }
  batch.flush(d);
}

std::size_t visible(const std::vector<CompSpan>& v, const Panel& p) {
  std::size_t n = 0;
  for (const auto& c : v) n += (c.t1 > p.ta && c.t0 < p.tb);
  return n;
}

// Whether a window shows `n` slices too densely to draw one by one (below ~6 px per slice on average).
bool too_dense(std::size_t n, const Panel& p) { return static_cast<double>(n) * 6.0 > p.w; }

void draw_compute_lane(Doc& d, const Panel& p, double y, double h, const std::vector<CompSpan>& spans, bool dense) {
  const auto& styles = kind_styles();
  // Idle: the hatched background over the step.
  d.rect(p.x0, y, p.w, h, "url(#idle)");
  if (dense) {
    const std::size_t ncol = static_cast<std::size_t>(std::ceil(p.w / p.col_px));
    const double col_t = (p.tb - p.ta) * p.col_px / p.w;
    std::vector<std::array<double, kCompKinds>> t(ncol, std::array<double, kCompKinds>{});
    for (const CompSpan& c : spans) {
      const double a = std::max(c.t0, p.ta), b = std::min(c.t1, p.tb);
      if (b <= a) continue;
      const double rec_share = c.t1 > c.t0 ? c.recompute_s / (c.t1 - c.t0) : 0.0;
      auto i0 = static_cast<std::size_t>(std::max(0.0, std::floor((a - p.ta) / col_t)));
      for (std::size_t i = i0; i < ncol; ++i) {
        const double ca = p.ta + static_cast<double>(i) * col_t, cb = ca + col_t;
        if (ca >= b) break;
        const double ov = std::min(b, cb) - std::max(a, ca);
        if (ov <= 0) continue;
        t[i][kRecompute] += ov * rec_share;
        t[i][c.kind] += ov * (1 - rec_share);
      }
    }
    // Heights quantised to 1/12 of the lane so that steady-state columns repeat and merge.
    std::vector<std::vector<double>> cols(ncol, std::vector<double>(kCompKinds, 0.0));
    for (std::size_t i = 0; i < ncol; ++i)
      for (int k = 0; k < kCompKinds; ++k)
        cols[i][static_cast<std::size_t>(k)] = std::round(std::min(1.0, t[i][static_cast<std::size_t>(k)] / col_t) * 12) / 12 * h;
    std::vector<std::string> fills;
    for (const auto& s : styles) fills.push_back(s.fill);
    draw_columns(d, p, y + h, cols, fills);
    return;
  }
  svg::RectBatch batch;
  struct Label {
    double x, y;
    std::string text;
    const char* fill;
  };
  std::vector<Label> labels;
  for (const CompSpan& c : spans) {
    const double a = std::max(c.t0, p.ta), b = std::min(c.t1, p.tb);
    if (b <= a) continue;
    const double x0 = p.px(a), x1 = p.px(b), w = x1 - x0;
    const KindStyle& ks = styles[c.kind];
    batch.add(fill_style(ks.fill) + (w >= 6 ? " stroke=\"#ffffff\" stroke-width=\"0.75\"" : ""), x0, y, w, h);
    if (c.recompute_s > 0) {
      // Recompute runs layer by layer inside the backward (each layer re-runs its forward, then its backward): one
      // stripe at the start of each layer's slot where they are wide enough, else one block of the same total.
      const double full_w = p.px(c.t1) - p.px(c.t0);
      const double slot_w = full_w / std::max(1, c.layers);
      const double rec_w = (c.recompute_s / (c.t1 - c.t0)) * full_w / std::max(1, c.layers);
      const std::string rs = fill_style(styles[kRecompute].fill);
      if (slot_w >= 4 && rec_w >= 1.5 && c.layers > 1) {
        for (int l = 0; l < c.layers; ++l) {
          const double sx = p.px(c.t0) + slot_w * l;
          const double ax = std::max(sx, x0), bx = std::min(sx + rec_w, x1);
          if (bx > ax) batch.add(rs, ax, y + 0.75, bx - ax, h - 1.5);
        }
      } else {
        const double bx = std::min(x1, p.px(c.t0) + rec_w * c.layers);
        if (bx > x0) batch.add(rs, x0, y + 0.75, bx - x0, h - 1.5);
      }
    }
    if (c.mb >= 0 && w >= 15 && h >= 12) {
      std::string label = std::to_string(c.mb);
      if (svg::text_width(label, 9) + 3 < w) labels.push_back({(x0 + x1) / 2, y + h / 2 + 3.2, std::move(label), ks.text});
    }
  }
  batch.flush(d);
  for (const Label& l : labels) d.text(l.x, l.y, l.text, 9, l.fill, "middle");
}

void draw_comm_lane(Doc& d, const Panel& p, double y, double h, const std::vector<CommSpan>& spans, bool dense) {
  d.rect(p.x0, y, p.w, h, "#fafafa");
  if (dense) {
    const std::size_t ncol = static_cast<std::size_t>(std::ceil(p.w / p.col_px));
    const double col_t = (p.tb - p.ta) * p.col_px / p.w;
    std::vector<std::array<double, 2>> t(ncol, std::array<double, 2>{});
    for (const CommSpan& c : spans) {
      const double a = std::max(c.t0, p.ta), b = std::min(c.t1, p.tb);
      if (b <= a) continue;
      auto i0 = static_cast<std::size_t>(std::max(0.0, std::floor((a - p.ta) / col_t)));
      for (std::size_t i = i0; i < ncol; ++i) {
        const double ca = p.ta + static_cast<double>(i) * col_t, cb = ca + col_t;
        if (ca >= b) break;
        const double ov = std::min(b, cb) - std::max(a, ca);
        if (ov <= 0) continue;
        t[i][0] += ov * c.exposed;
        t[i][1] += ov * (c.busy - c.exposed);
      }
    }
    std::vector<std::vector<double>> cols(ncol, std::vector<double>(2, 0.0));
    for (std::size_t i = 0; i < ncol; ++i) {
      // At least a sliver for any activity, so that short collectives stay visible.
      for (int k = 0; k < 2; ++k) {
        const double f = std::min(1.0, t[i][static_cast<std::size_t>(k)] / col_t);
        cols[i][static_cast<std::size_t>(k)] = f > 0 ? std::max(1.0, std::round(f * 8) / 8 * h) : 0.0;
      }
    }
    draw_columns(d, p, y + h, cols, {svg::kVermillion, svg::kCommHidden});
    return;
  }
  svg::RectBatch batch;
  for (const CommSpan& c : spans) {
    const double a = std::max(c.t0, p.ta), b = std::min(c.t1, p.tb);
    if (b <= a) continue;
    const double x0 = p.px(a), w = std::max(0.6, p.px(b) - x0);
    const double he = c.exposed * h, hh = (c.busy - c.exposed) * h;
    if (he > 0) batch.add(fill_style(svg::kVermillion), x0, y + h - he, w, he);
    if (hh > 0) batch.add(fill_style(svg::kCommHidden), x0, y + h - he - hh, w, hh);
  }
  batch.flush(d);
}

struct LaneRow {
  int stage;
  bool compute;
  Axis axis;
  double y, h;
};

std::vector<LaneRow> lane_rows(const std::vector<StageLanes>& st, const Geometry& g, double y0, double& y_end) {
  std::vector<LaneRow> rows;
  double y = y0;
  for (std::size_t s = 0; s < st.size(); ++s) {
    rows.push_back({static_cast<int>(s), true, Axis::tp, y, g.comp_h});
    y += g.comp_h + 2;
    for (Axis a : kAxes) {
      if (st[s].comm[a].empty()) continue;
      rows.push_back({static_cast<int>(s), false, a, y, g.comm_h});
      y += g.comm_h + 2;
    }
    y += g.group_gap;
  }
  y_end = y - g.group_gap;
  return rows;
}

std::string axis_lane_label(Axis a, const Scenario& sc) {
  switch (a) {
    case Axis::tp: return sc.train.sp ? "tp  all-gather / reduce-scatter" : "tp  all-reduce";
    case Axis::cp: return "cp  K/V ring";
    case Axis::ep: return "ep  all-to-all";
    case Axis::dp: {
      const ShardingTraits& t = sharding_traits(sc.plan.sharding);
      std::string coll = t.shards_params ? "all-gather / reduce-scatter" : to_string(t.grad_collective);
      std::replace(coll.begin(), coll.end(), '_', '-');
      return "dp  " + coll;
    }
    case Axis::pp: return "pp  send / recv";
  }
  return "";
}

// Draws one panel: lane labels, lanes, time axis with grid; returns the y below it.
double draw_panel(Doc& d, const Scenario& sc, const std::vector<StageLanes>& st, const Geometry& g, const Panel& p,
                  double y0, const std::string& heading, const StepReport& r, bool* any_dense) {
  if (!heading.empty()) {
    d.text(kLeft - 8, y0 + 12, heading, 13, svg::kInk, "start", "bold");
    y0 += 22;
  }
  double y_end = 0;
  const auto rows = lane_rows(st, g, y0, y_end);
  const svg::TimeUnit unit = svg::time_unit(p.tb);
  const double span_u = (p.tb - p.ta) * unit.per_s;
  const auto ticks = svg::nice_ticks(p.ta * unit.per_s, p.tb * unit.per_s, 10);
  // Grid first (under the lanes' content it would hide; lanes are opaque, so draw grid lines over the lane area only
  // between lanes: a light rule through the whole block reads as a time reference).
  for (std::size_t s = 0; s < st.size(); ++s) {
    // Stage group background and labels.
    double gy0 = 1e18, gy1 = 0;
    for (const auto& row : rows)
      if (row.stage == static_cast<int>(s)) gy0 = std::min(gy0, row.y), gy1 = std::max(gy1, row.y + row.h);
    if (s % 2 == 1) d.rect(4, gy0 - 3, kWidth - 8, gy1 - gy0 + 6, "#f3f6fa");
  }
  // A panel is drawn aggregated as a whole when any compute lane is too dense to draw slice by slice.
  bool dense = false;
  for (const auto& L : st) dense = dense || too_dense(visible(L.comp, p), p);
  if (any_dense) *any_dense = dense;
  for (const auto& row : rows) {
    const StageLanes& L = st[static_cast<std::size_t>(row.stage)];
    if (row.compute) {
      draw_compute_lane(d, p, row.y, row.h, L.comp, dense);
      const std::string name = "stage " + std::to_string(row.stage);
      const std::string& layers = L.layers;
      if (row.h >= 20) {
        d.text(kLeft - 10, row.y + row.h / 2 - 1, name, 12, svg::kInk, "end", "bold");
        d.text(kLeft - 10, row.y + row.h / 2 + 10, layers, 9.5, svg::kMuted, "end");
      } else {
        d.text(kLeft - 10, row.y + row.h / 2 + 4, name + "  " + layers, 10, svg::kInk, "end");
      }
    } else {
      draw_comm_lane(d, p, row.y, row.h, L.comm[row.axis], dense);
      d.text(kLeft - 10, row.y + row.h / 2 + 3.5, axis_lane_label(row.axis, sc), 9.5, svg::kMuted, "end");
    }
  }
  // Grid lines and ticks.
  const double axis_y = y_end + 6;
  const double step_u = ticks.size() > 1 ? ticks[1] - ticks[0] : span_u;
  for (double v : ticks) {
    const double x = p.px(v / unit.per_s);
    if (x < p.x0 - 0.5 || x > p.x0 + p.w + 0.5) continue;
    d.line(x, y0 - 4, x, axis_y, "#000000", 0.5, "stroke-opacity=\"0.18\"");
    d.line(x, axis_y, x, axis_y + 5, svg::kInk, 1);
    d.text(x, axis_y + 17, svg::tick_text(v, step_u), 11, svg::kInk, "middle");
  }
  d.line(p.x0, axis_y, p.x0 + p.w, axis_y, svg::kInk, 1);
  // The step's end.
  if (r.step_time_s >= p.ta && r.step_time_s <= p.tb) {
    const double x = p.px(r.step_time_s);
    d.line(x, y0 - 6, x, axis_y, svg::kInk, 1.2, "stroke-dasharray=\"4 3\"");
  }
  d.text(p.x0 + p.w / 2, axis_y + 34, std::string("time since the start of the step (") + unit.name + ")", 12,
         svg::kMuted, "middle");
  return axis_y + 44;
}

std::string pct_text(double f) { return fmt_fixed(100 * f, 1) + " %"; }

std::string seconds_text(double s) {
  if (s >= 1) return fmt_fixed(s, 3) + " s";
  if (s >= 1e-3) return fmt_fixed(s * 1e3, 1) + " ms";
  return fmt_fixed(s * 1e6, 0) + " µs";
}

// The title block: returns the y below it.
double title_block(Doc& d, const Scenario& sc, const StepReport& r) {
  const Plan& pl = sc.plan;
  const TrainingConfig& t = sc.train;
  const std::string head = sc.model.name + "  ·  " + pl.to_string() + "  ·  " + std::to_string(pl.world()) + " × " +
                           sc.hw.gpu.name + " (" + std::to_string(sc.hw.node.gpus_per_node) + " per node)";
  d.text(20, 30, head, 19, svg::kInk, "start", "bold");
  std::string sub = "seq " + std::to_string(t.seq) + "  ·  global batch " + std::to_string(t.gbs) + "  ·  micro-batch " +
                    std::to_string(t.mbs) + " (" + std::to_string(r.microbatches) + " per replica)  ·  " +
                    to_string(t.schedule) + "  ·  " + to_string(t.precision) + "  ·  recompute " +
                    to_string(t.recompute) + (t.sp ? "  ·  sp" : "") + "  ·  " + to_string(t.stack) + " stack";
  d.text(20, 50, sub, 12.5, svg::kMuted);
  // Headline numbers as cards.
  std::string exposed_detail;
  for (Axis a : kAxes)
    if (r.exposed_by_kind_s[a] > 0)
      exposed_detail += (exposed_detail.empty() ? "" : ", ") + std::string(axis_name(a)) + " " +
                          seconds_text(r.exposed_by_kind_s[a]);
  const MemoryReport& m = r.memory;
  struct Card {
    std::string label, value, detail;
    const char* color;
  };
  const std::vector<Card> cards = {
      {"step time", seconds_text(r.step_time_s), fmt_fixed(r.tokens_per_s / pl.world(), 0) + " tokens/s per GPU",
       svg::kInk},
      {"MFU", pct_text(r.mfu), "HFU " + pct_text(r.hfu) + ", " + fmt_fixed(r.tflops_per_gpu, 0) + " TFLOP/s",
       svg::kInk},
      {"pipeline bubble", pct_text(r.bubble_fraction), pl.pp > 1 ? std::to_string(pl.pp) + " stages" : "no pipeline",
       svg::kInk},
      {"exposed communication", seconds_text(r.exposed_comm_s),
       exposed_detail.empty() ? "none" : exposed_detail + " (stage " + std::to_string(r.critical_stage) + ")",
       r.exposed_comm_s > 0.1 * r.step_time_s ? svg::kVermillion : svg::kInk},
      {"peak memory per GPU", fmt_fixed(m.peak_gib, 1) + " / " + fmt_fixed(m.capacity_gib, 1) + " GiB",
       m.fits ? "fits (stage " + std::to_string(m.peak_stage) + ")" : "DOES NOT FIT (stage " +
                                                                          std::to_string(m.peak_stage) + ")",
       m.fits ? svg::kInk : svg::kVermillion},
  };
  const double y = 64, card_w = (kWidth - 40) / static_cast<double>(cards.size()), card_h = 58;
  for (std::size_t i = 0; i < cards.size(); ++i) {
    const double x = 20 + card_w * static_cast<double>(i);
    d.rect(x, y, card_w - 10, card_h, "#f5f5f5", "rx=\"4\"");
    d.text(x + 10, y + 17, cards[i].label, 11, svg::kMuted);
    d.text(x + 10, y + 38, cards[i].value, 18, cards[i].color, "start", "bold");
    std::string detail = cards[i].detail;
    while (detail.size() > 4 && svg::text_width(detail, 10) > card_w - 26) detail = detail.substr(0, detail.size() - 4) + "…";
    d.text(x + 10, y + 52, detail, 10, svg::kMuted);
  }
  return y + card_h + 14;
}

}  // namespace

std::string step_svg(const Scenario& sc, const Evaluator& ev, const StepReport& r) {
  const std::vector<StageLanes> st = collect(sc, ev);
  const double step = std::max(r.step_time_s, 1e-12);
  // Lane heights: shrink with many stages so that one panel stays under ~560 px.
  int comm_lanes = 0;
  for (const auto& L : st)
    for (Axis a : kAxes) comm_lanes += !L.comm[a].empty();
  const double units = static_cast<double>(st.size()) * 1.0 + comm_lanes * 0.55;
  Geometry g;
  g.comp_h = std::clamp(520.0 / std::max(1.0, units), 9.0, 26.0);
  g.comm_h = std::max(5.0, std::round(g.comp_h * 0.55));
  g.group_gap = std::clamp(g.comp_h * 0.45, 4.0, 12.0);

  Doc d(kWidth, 100);
  d.set_title("parsim step: " + sc.model.name + " " + sc.plan.to_string());
  d.raw(svg::idle_pattern_defs());
  double y = title_block(d, sc, r);

  // Legend: the kinds present.
  std::array<bool, kCompKinds> present{};
  for (const auto& L : st)
    for (const auto& c : L.comp) {
      present[c.kind] = true;
      if (c.recompute_s > 0) present[kRecompute] = true;
    }
  std::vector<svg::LegendItem> items;
  for (int k = 0; k < kCompKinds; ++k)
    if (present[static_cast<std::size_t>(k)]) items.push_back({kind_styles()[static_cast<std::size_t>(k)].legend, kind_styles()[static_cast<std::size_t>(k)].fill});
  items.push_back({"idle (inside the pipeline window: the bubble)", "url(#idle)", "#bdbdbd"});
  items.push_back({"communication hidden behind compute", svg::kCommHidden});
  items.push_back({"exposed communication (compute waits)", svg::kVermillion});
  y += svg::legend(d, 20, y, kWidth - 40, items) + 6;

  Panel whole{0, step, kLeft, kPlotW};
  {
    // Aggregation columns several slices wide, so that the share of each kind is steady where the schedule is.
    double sum = 0;
    std::size_t n = 0;
    for (const auto& L : st)
      for (const auto& c : L.comp) sum += c.t1 - c.t0, ++n;
    const double mean_px = n ? sum / static_cast<double>(n) / step * kPlotW : kPlotW;
    whole.col_px = std::clamp(2 * std::ceil(2 * mean_px), kColPx, 16.0);
  }
  bool dense = false;
  y = draw_panel(d, sc, st, g, whole, y + 4, "", r, &dense);
  if (dense) {
    // Detail panels: the start (warm-up: each stage's first passes) and the end (cool-down, gradient synchronisation,
    // optimizer), wide enough to show about three pipeline rounds slice by slice.
    const std::size_t k = static_cast<std::size_t>(3 * sc.plan.pp * sc.plan.vpp + 2);
    const auto& first = st.front().comp;
    const auto& lastc = st.back().comp;
    double d_start = step / 8, d_end = step / 8;
    if (first.size() > k) d_start = first[k].t1;
    std::size_t passes_last = 0;
    for (const auto& c : lastc) passes_last += c.kind != kOptimizer;
    if (passes_last > k) {
      // The start of the k-th pass from the end on the last stage.
      std::size_t seen = 0;
      for (auto it = lastc.rbegin(); it != lastc.rend(); ++it) {
        if (it->kind == kOptimizer) continue;
        if (++seen == k) {
          d_end = step - it->t0;
          break;
        }
      }
    }
    const double dw = std::min(step / 2, std::max(d_start, d_end));
    Panel a{0, dw, kLeft, kPlotW};
    Panel b{step - dw, step, kLeft, kPlotW};
    y = draw_panel(d, sc, st, g, a, y + 8, "Detail: the start of the step (pipeline warm-up)", r, nullptr);
    y = draw_panel(d, sc, st, g, b, y + 8, "Detail: the end of the step (cool-down, gradient sync, optimizer)", r,
                   nullptr);
  }
  d.text(20, y + 8,
         "Simulated by parsim " + std::string(PARSIM_VERSION) +
             " (not measured). One representative rank per pipeline stage; a communication bar's height is the share "
             "of its interval the link is busy." +
             (dense ? " The whole step is drawn as the share of each kind per 2-pixel column." : ""),
         10, svg::kMuted);
  d.set_height(y + 22);
  return d.str();
}

}  // namespace parsim

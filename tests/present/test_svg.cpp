// sim/present/svg: the pictures are well-formed standalone SVG (parsed by a strict XML reader, no scripts, no external
// references) and draw what was simulated — one slice per simulated pass, one lane per stage and communication axis.
#include "sim/present/svg.hpp"

#include "plans/scenario.hpp"
#include "sim/step/evaluate.hpp"
#include "sim/sweep/sweep.hpp"
#include "tests/present/xml.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace parsim;
using parsim::testing::parse_xml;
using parsim::testing::subpaths;
using parsim::testing::XmlNode;

namespace {

struct Drawn {
  Scenario sc;
  StepReport r;
  std::string svg;
};

Drawn draw(const std::string& plan, int gbs, Recompute rc = Recompute::None) {
  ScenarioInput in;
  in.model = "llama7b";
  in.plan = plan;
  in.train.gbs = gbs;
  in.train.recompute = rc;
  in.train.sp = false;  // the numbers below are derived without sequence parallelism (Megatron's default for
  in.train.sp_auto = false;  // tp > 1 is SP since the fidelity work: say --no-sp explicitly)
  Drawn d{resolve_scenario(in), {}, {}};
  Evaluator ev;
  EvalOptions opt;
  opt.keep_timeline = true;
  d.r = ev.run(d.sc, opt);
  d.svg = step_svg(d.sc, ev, d.r);
  return d;
}

// Rectangles drawn (as RectBatch subpaths) with fill `colour` across all <path> elements.
std::size_t slices(const XmlNode& root, const std::string& colour) {
  std::size_t n = 0;
  for (const XmlNode* p : root.all("path"))
    if (p->attr("fill") == colour) n += subpaths(p->attr("d"));
  return n;
}

std::size_t texts_starting(const XmlNode& root, const std::string& prefix) {
  std::size_t n = 0;
  for (const XmlNode* t : root.all("text")) n += t->text.rfind(prefix, 0) == 0;
  return n;
}

// Nothing a standalone picture must not have: scripts, event handlers, external references.
void check_standalone(const XmlNode& root, const std::string& text) {
  CHECK(root.name == "svg");
  CHECK(root.attr("xmlns") == "http://www.w3.org/2000/svg");
  CHECK(root.all("script").empty());
  CHECK(root.all("image").empty());
  CHECK(text.find("onload") == std::string::npos);
  CHECK(text.find("href") == std::string::npos);
}

}  // namespace

TEST_CASE("xml reader rejects what a browser rejects") {
  CHECK_NOTHROW(parse_xml("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/>t &amp; u</a>\n"));
  CHECK_THROWS(parse_xml("<a><b></a></b>"));
  CHECK_THROWS(parse_xml("<a x=1/>"));
  CHECK_THROWS(parse_xml("<a x=\"1\" x=\"2\"/>"));
  CHECK_THROWS(parse_xml("<a>R&D</a>"));
  CHECK_THROWS(parse_xml("<a/><b/>"));
}

TEST_CASE("svg helpers: escaping, numbers, ticks") {
  CHECK(svg::esc("a<b & 'c' \"d\">") == "a&lt;b &amp; &apos;c&apos; &quot;d&quot;&gt;");
  CHECK(svg::num(12.50) == "12.5");
  CHECK(svg::num(3.0) == "3");
  CHECK(svg::num(-0.01) == "0");
  // [0, 9.9] with about 10 ticks: raw step 0.99 → the next nice step is 1 → 0, 1, …, 9 (10 ticks).
  const auto t = svg::nice_ticks(0, 9.9, 10);
  REQUIRE(t.size() == 10);
  CHECK(t.front() == 0);
  CHECK(t.back() == doctest::Approx(9));
  // [0, 220] ms with about 10: raw 22 → nice 25 → 0, 25, …, 200 (9 ticks).
  CHECK(svg::nice_ticks(0, 220, 10).size() == 9);
  // Log ticks over [3, 150]: 5, 10, 20, 50, 100 (1-2-5 × 10^k inside the range).
  const auto l = svg::log_ticks(3, 150);
  REQUIRE(l.size() == 5);
  CHECK(l[0] == doctest::Approx(5));
  CHECK(l[4] == doctest::Approx(100));
  CHECK(std::string(svg::time_unit(9.9).name) == "s");
  CHECK(std::string(svg::time_unit(0.2).name) == "ms");
}

TEST_CASE("step picture: one slice per simulated pass, a lane per stage and per communication axis") {
  // tp8pp2dp4, gbs 16, mbs 1: 16 / dp 4 = 4 micro-batches per replica. 1F1B plays 4 forwards and 4 backwards on each
  // of the 2 stages, then one optimizer step per stage: 8 forward slices, 8 backward slices, 2 optimizer slices. The
  // picture has 8 slices on each of the 2 lanes in 1076 px — sparse, so every pass is one rectangle.
  const Drawn d = draw("tp8pp2dp4", 16);
  REQUIRE(d.r.microbatches == 4);
  REQUIRE(d.r.simulated_microbatches == 4);
  const auto root = parse_xml(d.svg);
  check_standalone(*root, d.svg);
  CHECK(slices(*root, svg::kBlue) == 8);     // forward
  CHECK(slices(*root, svg::kOrange) == 8);   // backward
  CHECK(slices(*root, svg::kPurple) == 2);   // optimizer
  CHECK(slices(*root, svg::kSkyBlue) == 0);  // no recompute
  // Lanes: "stage 0" and "stage 1", each with tp (all-reduce, no sp), dp (all-reduce) and pp (send/recv) lanes.
  CHECK(texts_starting(*root, "stage ") == 2);
  CHECK(texts_starting(*root, "tp  all-reduce") == 2);
  CHECK(texts_starting(*root, "dp  all-reduce") == 2);
  CHECK(texts_starting(*root, "pp  send / recv") == 2);
  CHECK(texts_starting(*root, "cp  ") == 0);
  // The idle (bubble) background: one hatched rectangle behind each compute lane (one panel, 2 stages).
  std::size_t hatched = 0;
  for (const XmlNode* r : root->all("rect")) hatched += r->attr("fill") == "url(#idle)";
  CHECK(hatched == 2 + 1);  // + the legend's swatch
  CHECK(root->all("pattern").size() == 1);
  // One time axis (sparse: no detail panels), ticks in the unit of the step's length.
  CHECK(texts_starting(*root, "time since the start of the step") == 1);
  // The headline numbers: the title block prints the MFU to 0.1 %.
  char mfu[32];
  std::snprintf(mfu, sizeof mfu, "%.1f %%", 100 * d.r.mfu);
  CHECK(texts_starting(*root, mfu) == 1);
  // Each pass is labelled by its micro-batch (0–3) where the slice is wide enough: at 8 passes per 1076 px every one
  // is, so the numbers 0..3 appear 4 times each (2 stages × forward and backward).
  for (int mb = 0; mb < 4; ++mb) {
    std::size_t n = 0;
    for (const XmlNode* t : root->all("text")) n += t->text == std::to_string(mb) && t->attr("text-anchor") == "middle" &&
                                                 t->attr("font-size") == "9";
    CHECK(n == 4);
  }
}

TEST_CASE("step picture: recompute and interleaved chunks are drawn by kind") {
  // Full recompute: every backward re-runs its layers' forward, drawn as stripes inside the backward slice.
  const Drawn rc = draw("tp8pp2dp4", 16, Recompute::Full);
  const auto a = parse_xml(rc.svg);
  CHECK(slices(*a, svg::kOrange) == 8);
  CHECK(slices(*a, svg::kSkyBlue) >= 8);  // at least one stripe (or block) per backward
  CHECK(rc.svg.find("recompute (forward re-run in the backward)") != std::string::npos);
  // Interleaved with 2 chunks per stage: each micro-batch passes each stage twice: 2 stages × 2 chunks × 4 = 16 forward
  // and 16 backward slices. (gbs 16 over dp 4 is 4 micro-batches, a multiple of pp = 2 as Megatron requires.)
  const Drawn il = draw("tp8pp2dp4vpp2", 16);
  const auto b = parse_xml(il.svg);
  CHECK(slices(*b, svg::kBlue) == 16);
  CHECK(slices(*b, svg::kOrange) == 16);
}

TEST_CASE("step picture: a long step is aggregated and detailed at both ends, and stays small") {
  // gbs 1024 / dp 4 = 256 micro-batches: 512 slices per stage lane cannot be drawn in 1076 px (6 px per slice needs
  // 3,072 px), so the whole step is drawn as shares per column and two detail panels follow: three time axes.
  const Drawn d = draw("tp8pp2dp4", 1024);
  const auto root = parse_xml(d.svg);
  check_standalone(*root, d.svg);
  CHECK(texts_starting(*root, "time since the start of the step") == 3);
  CHECK(texts_starting(*root, "Detail: ") == 2);
  CHECK(d.svg.size() < 200 * 1024);
  // The exposed communication colour appears (tp8 all-reduce without overlap is exposed).
  CHECK(slices(*root, svg::kVermillion) > 0);
}

namespace {
const XmlNode* by_id(const XmlNode& root, const std::string& id) {
  for (const XmlNode* g : root.all("g"))
    if (g->attr("id") == id) return g;
  return nullptr;
}
}  // namespace

TEST_CASE("sweep picture: a point per feasible plan, the Pareto front, the capacity and headroom lines") {
  // llama2-7b on 8 H100, gbs 32, mbs 1, no recompute, tp ∈ {1, 2, 4, 8}, pp 1: a small space; each feasible plan is
  // one circle in the "plans" group, each Pareto plan one ring in the "pareto" group.
  SweepSetup setup;
  setup.base.model = "llama2-7b";
  setup.base.train.gbs = 32;
  setup.gpus = 8;
  setup.filter.pp = {1};
  setup.filter.mbs = {1};
  setup.filter.recompute = {Recompute::None};
  SweepOptions opt;
  opt.threads = 1;
  const SweepReport rep = run_sweep(setup, opt);
  REQUIRE(rep.ranked.size() >= 3);
  const std::string text = sweep_svg(rep, 8.0, 3);
  const auto root = parse_xml(text);
  check_standalone(*root, text);
  const XmlNode* plans = by_id(*root, "plans");
  const XmlNode* front = by_id(*root, "pareto");
  REQUIRE(plans);
  REQUIRE(front);
  CHECK(plans->all("circle").size() == rep.ranked.size());
  CHECK(front->all("circle").size() == rep.pareto.size());
  CHECK(texts_starting(*root, "Pareto front") == 1);
  CHECK(texts_starting(*root, "GPU capacity ") == 1);
  CHECK(texts_starting(*root, "headroom 8.0 GiB") == 1);
  // The 3 fastest plans are listed by name, fastest first.
  std::vector<std::string> listed;
  for (const XmlNode* t : root->all("text"))
    if (t->attr("font-weight") == "bold" && t->attr("font-size") == "12" && t->text.find("mbs") != std::string::npos)
      listed.push_back(t->text);
  REQUIRE(listed.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(listed[i].rfind(rep.ranked[i].plan.to_string() + "  mbs 1", 0) == 0);
  // The points' x positions are proportional to peak memory: x = 92 + peak / x_hi · 780 with x_hi = 1.04 × max(
  // capacity, largest peak) — the fastest plan's circle sits there.
  double cap = 0, hi = 0;
  for (const auto& p : rep.ranked) cap = std::max(cap, p.capacity_gib), hi = std::max(hi, p.peak_gib);
  const double x_hi = std::max(cap, hi) * 1.04;
  const XmlNode* fastest = plans->all("circle").back();  // drawn slowest first
  CHECK(std::stod(fastest->attr("cx")) == doctest::Approx(92 + rep.ranked[0].peak_gib / x_hi * 780).epsilon(0.002));
}

TEST_CASE("ranks picture: compute, exposed communication, memcpy and idle add up to each rank's window") {
  // Three ranks of 1.0 s windows; the longest value 1.0 s is drawn in ms (time_unit: < 2 s) on ticks 0, 100, …,
  // 1000 ms, so the axis ends at 1000 ms and 1 ms is 880 / 1000 px (plot width 1280 − 150 − 250 = 880 px).
  RanksPicture p;
  p.title = "parsim profile: 3 ranks";
  p.ranks = {{"rank 0", 1.0, 0.60, 0.30, 0.10, 0.05, 0.25},
             {"rank 1", 1.0, 0.70, 0.20, 0.05, 0.00, 0.25},
             {"rank 2", 1.0, 0.50, 0.40, 0.20, 0.00, 0.30}};
  p.straggler = 1;
  const std::string text = ranks_svg(p);
  const auto root = parse_xml(text);
  check_standalone(*root, text);
  // One compute bar per rank (blue), one exposed-communication bar each, one memcpy bar (only rank 0 has any), and
  // one thin all-communication bar each.
  CHECK(slices(*root, svg::kBlue) == 3);
  CHECK(slices(*root, svg::kVermillion) == 3);
  CHECK(slices(*root, svg::kYellow) == 1);
  CHECK(slices(*root, svg::kCommHidden) == 3);
  // Rank 0's compute bar: 0.60 s = 600 ms → 600 × 0.88 = 528 px wide.
  for (const XmlNode* path : root->all("path"))
    if (path->attr("fill") == svg::kBlue) CHECK(path->attr("d").find("h528v") != std::string::npos);
  CHECK(texts_starting(*root, "◀ slowest") == 1);
  CHECK(texts_starting(*root, "rank ") == 3);
}

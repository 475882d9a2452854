// The collective model: NCCL's choice (nccl_model.cpp), the time of what it chose (collectives.cpp), one contract run
// against every algorithm and collective, hand-derived formulas, and the measured tables of tests/data/nccl, predicted
// from datasheet / vendor-configuration hardware files without any value fitted to them.
#include "hardware/collective_memo.hpp"
#include "hardware/hardware.hpp"
#include "hardware/nccl_model.hpp"
#include "sim/core/error.hpp"
#include "sim/core/text.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace parsim;
namespace fs = std::filesystem;

namespace {

const Collective kCollectives[] = {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                                   Collective::AllToAll,  Collective::SendRecv,  Collective::Broadcast};
const CollAlgo kAlgos[] = {CollAlgo::Auto,   CollAlgo::Ring,     CollAlgo::Tree,    CollAlgo::Hierarchical, CollAlgo::NVLS,
                           CollAlgo::Direct, CollAlgo::NVLSTree, CollAlgo::CollNet, CollAlgo::PAT};

std::string examples(const std::string& f) { return std::string(PARSIM_TEST_DATA) + "/../../examples/hardware/" + f; }

double t_of(const Hardware& hw, Collective c, double S, GroupShape g, CollAlgo a = CollAlgo::Auto) {
  return collective_time(hw, c, S, g, a).time_s;
}
double busbw(const Hardware& hw, Collective c, double S, GroupShape g, CollAlgo a = CollAlgo::Auto) {
  return bus_factor(c, g.size) * S / t_of(hw, c, S, g, a) / 1e9;
}

// ---- the measured tables of tests/data/nccl ----
struct Point {
  double bytes = 0, time_us = 0, in_place_us = 0;  // in_place_us = time_us when the table has one column
};

double size_with_unit(const std::string& s) {
  const double v = std::stod(s);
  if (s.find("GiB") != std::string::npos) return v * 1073741824.0;
  if (s.find("MiB") != std::string::npos) return v * 1048576.0;
  if (s.find("KiB") != std::string::npos) return v * 1024.0;
  return v;
}

// nccl-tests output (rows of 13 columns: size count type redop root time algbw busbw #wrong, then in-place; an srun
// "N: " prefix allowed) or the ml-engineering markdown table (| payload | busbw | algbw |, time = payload / algbw).
std::vector<Point> read_table(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<Point> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) continue;
    if (line.find('|') != std::string::npos) {
      std::vector<std::string> cells;
      std::stringstream ss(line);
      for (std::string c; std::getline(ss, c, '|');) cells.push_back(trim(c));
      if (cells.size() < 4 || cells[1].empty() || !std::isdigit(static_cast<unsigned char>(cells[1][0]))) continue;
      const double bytes = size_with_unit(cells[1]);
      const double algbw = std::stod(cells[3]) * 1e9;  // "0.82GBps"
      const double t = bytes / algbw * 1e6;
      rows.push_back({bytes, t, t});
      continue;
    }
    std::stringstream ss(line);
    std::vector<std::string> tok;
    for (std::string w; ss >> w;) tok.push_back(w);
    if (!tok.empty() && tok[0].back() == ':') tok.erase(tok.begin());
    if (tok.size() < 13 || !std::isdigit(static_cast<unsigned char>(tok[0][0])) ||
        !std::isdigit(static_cast<unsigned char>(tok[1][0])))
      continue;
    rows.push_back({std::stod(tok[0]), std::stod(tok[5]), std::stod(tok[9])});
  }
  return rows;
}

}  // namespace

TEST_CASE("contract: every algorithm and collective — monotone in bytes, group of one free, zero bytes = latency") {
  std::vector<Hardware> hws;
  for (const auto& n : hardware_preset_names()) hws.push_back(resolve_hardware(n));
  for (const char* f : {"aws-p4de.json", "aws-p5.json", "gcp-a3mega.json", "h100-roce-4gpu.json"})
    hws.push_back(resolve_hardware(examples(f)));
  hws.push_back(resolve_hardware("h100", 4));
  const GroupShape shapes[] = {{2, 2, 1, 2},   {3, 3, 1, 3},  {8, 8, 1, 8},   {2, 1, 2, 8},    {16, 8, 2, 8},
                               {24, 8, 3, 8},  {64, 8, 8, 8}, {12, 4, 3, 8},  {32, 2, 16, 4},  {128, 8, 16, 8},
                               {6, 3, 2, 3},   {4, 4, 1, 4},  {8, 4, 2, 4},   {16, 1, 16, 1},  {512, 8, 64, 8},
                               {8, 8, 1, 8, 0.25}, {64, 8, 8, 8, 0.5}};
  std::vector<double> sizes = {0, 1, 3};
  for (int k = 2; k <= 36; ++k) sizes.push_back(std::ldexp(1.0, k));
  for (double v = 1000; v < 1e11; v *= 3) sizes.push_back(v);
  for (int k = 10; k <= 32; ++k)
    for (double f : {1.1, 1.3, 1.5, 1.7, 1.9}) sizes.push_back(std::ldexp(f, k));
  std::sort(sizes.begin(), sizes.end());
  for (const auto& hw : hws) {
    for (Collective c : kCollectives) {
      for (CollAlgo a : kAlgos) {
        CAPTURE(hw.name);
        CAPTURE(to_string(c));
        CAPTURE(to_string(a));
        // A group of one costs nothing, whatever the size.
        CHECK(collective_time(hw, c, 1e9, GroupShape{1, 1, 1, 1}, a).time_s == 0);
        for (const GroupShape& g : shapes) {
          if (g.per_node > hw.node.gpus_per_node || g.concurrent_per_node > hw.node.gpus_per_node) continue;
          CAPTURE(g.size);
          CAPTURE(g.nodes);
          CAPTURE(g.nic_fraction);
          double prev = -1;
          for (double S : sizes) {
            const CollectiveCost cc = collective_time(hw, c, S, g, a);
            REQUIRE(std::isfinite(cc.time_s));
            REQUIRE(cc.algo != CollAlgo::Auto);
            REQUIRE(cc.time_s >= prev);  // never faster for more bytes
            REQUIRE(cc.latency_s > 0);
            REQUIRE(cc.latency_s <= cc.time_s);
            REQUIRE(cc.nic_bytes >= 0);
            REQUIRE(cc.nic_busy_s <= cc.time_s);
            if (g.nodes == 1) REQUIRE(cc.nic_bytes == 0);  // inside a node nothing crosses the NICs
            prev = cc.time_s;
          }
          // Zero bytes cost the latency only: positive, and one more byte adds almost nothing (it still crosses every
          // hop of a store-and-forward pipeline: tens of nanoseconds at a few GB/s per channel).
          const double t0 = t_of(hw, c, 0, g, a);
          CHECK(t0 > 0);
          CHECK(t_of(hw, c, 1, g, a) - t0 < 1e-7);
        }
      }
    }
  }
  // A free network (with_free_network, for analysis and contract tests) costs nothing at any size.
  const Hardware free = with_free_network(resolve_hardware("h100"));
  for (Collective c : kCollectives) CHECK(t_of(free, c, 1e9, GroupShape{16, 8, 2, 8}) < 1e-12);
}

TEST_CASE("calibration: one 8-GPU node, all-reduce bus bandwidth at 16 GiB") {
  const double S = 16.0 * kGiB;
  const GroupShape node8{8, 8, 1, 8};
  // Targets (domain notes §8): A100 ≈ 235; H100/H200 ring 365–370, NVLS 475–482; B200 ring 682, NVLS 838;
  // MI300X 313 (RCCL, all 7 links). Latency and pipeline fill are < 0.1 % of the time at 16 GiB.
  CHECK(busbw(resolve_hardware("a100"), Collective::AllReduce, S, node8) == doctest::Approx(235).epsilon(0.01));
  for (const char* h : {"h100", "h200"}) {
    const Hardware hw = resolve_hardware(h);
    CHECK(busbw(hw, Collective::AllReduce, S, node8, CollAlgo::Ring) == doctest::Approx(368).epsilon(0.01));
    CHECK(busbw(hw, Collective::AllReduce, S, node8) == doctest::Approx(480).epsilon(0.01));
    CHECK(collective_time(hw, Collective::AllReduce, S, node8).algo == CollAlgo::NVLS);
  }
  const Hardware b = resolve_hardware("b200");
  CHECK(busbw(b, Collective::AllReduce, S, node8, CollAlgo::Ring) == doctest::Approx(682).epsilon(0.01));
  CHECK(busbw(b, Collective::AllReduce, S, node8) == doctest::Approx(838).epsilon(0.01));
  const Hardware mi = resolve_hardware("mi300x");
  // RCCL's rings on the xGMI mesh use every link to the group's peers: (p−1) × 64 GB/s × 0.699 = 313 GB/s for 8.
  CHECK(busbw(mi, Collective::AllReduce, S, node8) == doctest::Approx(313).epsilon(0.01));
  // 2 MI300X share ONE link: 64 GB/s × 0.699 = 44.7 GB/s; RCCL measures 48 (domain notes §8): −7%, within 10%.
  CHECK(busbw(mi, Collective::AllReduce, S, GroupShape{2, 2, 1, 2}) == doctest::Approx(48).epsilon(0.10));
}

TEST_CASE("NCCL's choice: the topology search, the tuning table and what it picks") {
  using namespace nccl;
  const Hardware h = resolve_hardware("h100");
  const GroupShape node8{8, 8, 1, 8};
  const Comm c = make_comm(h, node8);
  // search.cc on one DGX H100: 18 NVLinks × 20.6 GB/s (SM90_NVLINK_BW) = 370.8 GB/s; the first sm90 intra speed that
  // fits is 60 → ⌊370.8/60⌋ = 6 channels; ncclTopoDupChannels (speed ≥ 50) doubles them at half speed: 12 × 30;
  // connect.cc doubles the channels again: 24 (NCCL's "24 coll channels" on 8×H100). NVLS: one head per GPU at the
  // largest speed ≤ 370.8/8 = 46.35 → 40 GB/s; 16 NVLS channels (nvls.cc NVLS_NCHANNELS_SM90).
  CHECK(c.graph_channels == 12);
  CHECK(c.ring_bw_intra == 30);
  CHECK(c.channels == 24);
  CHECK(c.nvls_heads == 8);
  CHECK(c.nvls_bw_intra == 40);
  CHECK(c.nvls_channels == 16);
  // tuning.cc, AllReduce Ring/LL on one node: latency 6.6 + 2(8−1) × 0.6 = 15.0 µs; bandwidth min(141, 12 × 30 × 0.5)
  // = 141 GB/s bus → × 8/14 = 80.57 GB/s.
  const Table t = tuning_table(c, kAllReduce);
  CHECK(t.lat[kRing][kLL] == doctest::Approx(15.0));
  CHECK(t.bw[kRing][kLL] == doctest::Approx(141.0 * 8 / 14));
  // NVLS: 25 µs; bandwidth 8 heads × min(40 × 0.85 × 7/8 × 2 = 59.5, bwInter 60) = 476 bus → × 8/14 = 272 GB/s.
  CHECK(t.lat[kNVLS][kSimple] == doctest::Approx(25.0));
  CHECK(t.bw[kNVLS][kSimple] == doctest::Approx(476.0 * 8 / 14));
  // ml-engineering's 8×H200 table (NCCL 2.27.7) says: "NCCL uses Ring with the LL protocol up to a 1MiB payload and
  // NVLS with SIMPLE from 2MiB up" — the emulated tuner agrees.
  const Hardware h200 = resolve_hardware("h200");
  for (double S : {32768.0, 262144.0, 1048576.0}) {
    const CollectiveCost cc = collective_time(h200, Collective::AllReduce, S, node8);
    CHECK(cc.algo == CollAlgo::Ring);
    CHECK(cc.protocol == CollProtocol::LL);
  }
  for (double S : {2097152.0, 67108864.0, 17179869184.0}) {
    const CollectiveCost cc = collective_time(h200, Collective::AllReduce, S, node8);
    CHECK(cc.algo == CollAlgo::NVLS);
    CHECK(cc.protocol == CollProtocol::Simple);
  }
  // Channels grow with the message (enqueue.cc: a channel needs 512 threads × 8 B × 8 ranks = 32 KiB for Ring/LL).
  CHECK(collective_time(h200, Collective::AllReduce, 32768, node8).channels == 1);
  CHECK(collective_time(h200, Collective::AllReduce, 262144, node8).channels == 8);
  CHECK(collective_time(h200, Collective::AllReduce, 1048576, node8).channels == 24);
  // The cluster's library configuration restricts the choice: GCP's A3 Mega environment allows only Simple.
  const Hardware gcp = resolve_hardware(examples("gcp-a3mega.json"));
  for (double S : {8.0, 1e6, 1e9}) CHECK(collective_time(gcp, Collective::AllReduce, S, {16, 8, 2, 8}).protocol == CollProtocol::Simple);
}

TEST_CASE("formulas by hand") {
  const Hardware h = resolve_hardware("h100");
  const GroupShape node8{8, 8, 1, 8};
  SUBCASE("ring Simple inside one node") {
    // Forced ring at 1 GiB runs Simple on all 24 channels. Each gets min(368 GB/s / 24 = 15.33, max(30, 15.33)) =
    // 15.33 GB/s; data 2·7/8 · (S/24) / 15.33e9 = 1.75 · S / 368e9 = 5.10612 ms; latency (tuning.cc) 8.4 + 14 × 3.4
    // = 56.0 µs → 5.16212 ms.
    const CollectiveCost cc = collective_time(h, Collective::AllReduce, kGiB, node8, CollAlgo::Ring);
    CHECK(cc.protocol == CollProtocol::Simple);
    CHECK(cc.channels == 24);
    CHECK(cc.latency_s == doctest::Approx(56.0e-6));
    CHECK(cc.time_s == doctest::Approx(5.16212e-3).epsilon(1e-5));
  }
  SUBCASE("NVLS pipeline inside one node") {
    // 16 GiB: 16 channels × 8 heads = 128 units of the 128 KiB NVLS chunk in flight; B_nvls = 450 · 8/9 · 0.68571 =
    // 274.29 GB/s; two stages: (S + 1 · 131072 · 128) / B = (17179869184 + 16777216) / 274.29e9 = 62.695 ms, + 25 µs.
    const CollectiveCost cc = collective_time(h, Collective::AllReduce, 16 * kGiB, node8);
    CHECK(cc.algo == CollAlgo::NVLS);
    CHECK(cc.time_s == doctest::Approx(25e-6 + (17179869184.0 + 16777216.0) / (450e9 * 8 / 9 * (480.0 * 8 / 14) / 400)).epsilon(1e-4));
  }
  SUBCASE("tree Simple pipeline across two nodes (A3 Mega)") {
    // gcp-a3mega: Simple only, 8 MiB buffers → 1 MiB chunks; 16 channels. At 64 MiB each channel carries 4 MiB:
    // NVLink per channel min(368/16 = 23, max(45, 23)) = 23 GB/s; network per channel 8 × 25 GB/s × 0.94 / 16 =
    // 11.75 GB/s. A chunk crosses 2(8−1) NVLink hops and 2 network hops: 14/23e9 + 2/11.75e9 per byte; the other 3
    // chunks follow at the slowest hop, max(2/23e9 (up and down share the link), 1/11.75e9) per byte:
    // 1 MiB × (14/23e9 + 2/11.75e9) + 3 MiB × 2/23e9 = 816.7 + 273.5 = 1090.2 µs.
    // Latency: 8.4 + 2 × (7 × 4.0 + (14 + 10 + 3 µs × 2 posts × ⌈16/8⌉)) = 8.4 + 2 × 64 = 136.4 µs → 1226.6 µs.
    const Hardware gcp = resolve_hardware(examples("gcp-a3mega.json"));
    const CollectiveCost cc = collective_time(gcp, Collective::AllReduce, 64 * 1048576.0, GroupShape{16, 8, 2, 8});
    CHECK(cc.algo == CollAlgo::Tree);
    CHECK(cc.protocol == CollProtocol::Simple);
    CHECK(cc.latency_s == doctest::Approx(136.4e-6));
    const double MiB = 1048576.0;
    const double expect = 136.4e-6 + MiB * (14 / 23e9 + 2 / 11.75e9) + 3 * MiB * 2 / 23e9;
    CHECK(cc.time_s == doctest::Approx(expect).epsilon(1e-4));
    // Both nodes send S over the network once (each is the other's tree parent on half the channels): S/8 per GPU.
    CHECK(cc.nic_bytes == doctest::Approx(64 * MiB / 8));
  }
  SUBCASE("point to point") {
    // All-to-all in one node: 7/8 of S through each GPU's NVSwitch port at 368 GB/s (Simple, per-peer S/8 = 128 MiB)
    // + base 8.4 + hop 3.4 µs = 2.55413 ms + 11.8 µs.
    CHECK(t_of(h, Collective::AllToAll, kGiB, node8) == doctest::Approx(7.0 / 8 * kGiB / 368e9 + 11.8e-6).epsilon(1e-5));
    // Send/recv across nodes: S over one GPU's NIC share, 50 GB/s × 0.94 = 47 GB/s, + base 8.4 + NET 14 µs + the proxy
    // posting one send and one receive (Intel host, Simple: 3 µs each) = 28.4 µs.
    CHECK(t_of(h, Collective::SendRecv, kGiB, GroupShape{2, 1, 2, 8}) == doctest::Approx(kGiB / 47e9 + 28.4e-6).epsilon(1e-5));
    // Small messages take LL (NCCL_P2P_LL_THRESHOLD 16 KiB): base 6.6 + NVLink LL hop 0.6 µs + 4 KiB at half of 368 GB/s.
    const CollectiveCost small = collective_time(h, Collective::SendRecv, 4096, GroupShape{2, 2, 1, 2});
    CHECK(small.protocol == CollProtocol::LL);
    CHECK(small.time_s == doctest::Approx(7.2e-6 + 4096 / 184e9).epsilon(1e-6));
  }
  // bus factors (nccl-tests doc/PERFORMANCE.md).
  CHECK(bus_factor(Collective::AllReduce, 8) == doctest::Approx(1.75));
  CHECK(bus_factor(Collective::AllGather, 8) == doctest::Approx(0.875));
  CHECK(bus_factor(Collective::AllToAll, 8) == doctest::Approx(0.875));
  CHECK(bus_factor(Collective::SendRecv, 2) == 1);
  CHECK(bus_factor(Collective::Broadcast, 8) == 1);
  CHECK(bus_factor(Collective::AllReduce, 1) == 0);
  CHECK_THROWS_AS((void)bus_factor(Collective::AllReduce, 0), InputError);
}

TEST_CASE("forced algorithms and what they fall back to") {
  const Hardware h = resolve_hardware("h100");
  const GroupShape node8{8, 8, 1, 8};
  // NVLS needs ≥ 5 GPUs (NCCL's rule on H100), an NVSwitch with SHARP, and is an all-reduce (or AG/RS) algorithm.
  CHECK(collective_time(h, Collective::AllReduce, kGiB, GroupShape{4, 4, 1, 4}).algo == CollAlgo::Ring);
  CHECK(collective_time(resolve_hardware("a100"), Collective::AllReduce, kGiB, node8, CollAlgo::NVLS).algo != CollAlgo::NVLS);
  CHECK(collective_time(h, Collective::AllGather, kGiB, node8, CollAlgo::Tree).algo == CollAlgo::Ring);
  CHECK(collective_time(h, Collective::AllReduce, kGiB, GroupShape{16, 8, 2, 8}, CollAlgo::Tree).algo == CollAlgo::Tree);
  CHECK(collective_time(h, Collective::AllToAll, kGiB, node8, CollAlgo::Ring).algo == CollAlgo::Direct);
  CHECK(collective_time(h, Collective::Broadcast, kGiB, node8).algo == CollAlgo::Ring);
  // Hierarchical (not NCCL's; forced only) = intra RS + inter AR of S/8 + intra AG.
  const GroupShape two{16, 8, 2, 8};
  const double hier = t_of(h, Collective::AllReduce, kGiB, two, CollAlgo::Hierarchical);
  const double parts = t_of(h, Collective::ReduceScatter, kGiB, node8) +
                       t_of(h, Collective::AllReduce, kGiB / 8, GroupShape{2, 1, 2, 8}) +
                       t_of(h, Collective::AllGather, kGiB, node8);
  CHECK(hier == doctest::Approx(parts));
  // PAT: all-gather with one GPU per node.
  CHECK(collective_time(h, Collective::AllGather, 1 << 20, GroupShape{16, 1, 16, 1}).algo == CollAlgo::PAT);
}

TEST_CASE("placement and NIC sharing") {
  const Hardware h = resolve_hardware("h100");
  // 8 ranks in one node vs 8 ranks one per node: 368 GB/s NVLink vs 47 GB/s per-GPU NIC.
  CHECK(t_of(h, Collective::AllReduce, kGiB, GroupShape{8, 8, 1, 8}) * 5 <
        t_of(h, Collective::AllReduce, kGiB, GroupShape{8, 1, 8, 8}));
  // p4de: 4 EFA NICs (4 × 12.5 GB/s) for 8 GPUs. A 4-node ring with one rank per node: with all 8 GPUs of a node busy
  // each gets 50/8 = 6.25 GB/s, alone one whole NIC, 12.5 GB/s: the bandwidth-bound time nearly doubles.
  const Hardware p4 = resolve_hardware(examples("aws-p4de.json"));
  const double busy = t_of(p4, Collective::AllReduce, kGiB, GroupShape{4, 1, 4, 8});
  const double alone = t_of(p4, Collective::AllReduce, kGiB, GroupShape{4, 1, 4, 1});
  CHECK(busy / alone == doctest::Approx(2.0).epsilon(0.02));
  // On DGX H100 (8 NICs for 8 GPUs) sharing changes nothing: each GPU has its own NIC.
  CHECK(t_of(h, Collective::AllGather, kGiB, GroupShape{4, 1, 4, 8}) ==
        doctest::Approx(t_of(h, Collective::AllGather, kGiB, GroupShape{4, 1, 4, 1})));
  // Flat ring on 16 DGX A100 nodes: NIC-bound at 8 × 25 GB/s × 0.96 = 192 GB/s (NVIDIA, nccl #812: 192); the ring's
  // 254 steps add 1.4 × (8.4 + 224 × 3.4 + 30 × (14 + 3 × 2 × ⌈24/8⌉)) µs = 2.42 ms of latency to 89.5 ms: 188.0 GB/s.
  CHECK(busbw(resolve_hardware("a100"), Collective::AllReduce, 16 * kGiB, GroupShape{128, 8, 16, 8}, CollAlgo::Ring) ==
        doctest::Approx(192).epsilon(0.03));
  // nic_fraction: a collective that gets half of its GPUs' NIC share (the other half busy with another collective)
  // moves its network bytes at half the rate; what it puts on the NICs is the same. The fraction scales a bandwidth,
  // never a latency.
  const GroupShape full{128, 8, 16, 8}, half{128, 8, 16, 8, 0.5};
  const CollectiveCost cf = collective_time(h, Collective::AllReduce, 16 * kGiB, full, CollAlgo::Ring);
  const CollectiveCost ch = collective_time(h, Collective::AllReduce, 16 * kGiB, half, CollAlgo::Ring);
  CHECK(ch.nic_bytes == cf.nic_bytes);
  CHECK(ch.latency_s == cf.latency_s);
  CHECK((ch.time_s - ch.latency_s) == doctest::Approx(2 * (cf.time_s - cf.latency_s)).epsilon(0.01));
  // Ring all-reduce across nodes puts 2(n−1)/n · S per node on the NICs, S · 2·127/128 / 8 per GPU.
  CHECK(cf.nic_bytes == doctest::Approx(2.0 * 127 / 128 * 16 * kGiB / 8));
  CHECK(collective_nic_bytes(h, Collective::AllReduce, 16 * kGiB, full) > 0);
  CHECK(collective_nic_bytes(h, Collective::AllReduce, 16 * kGiB, GroupShape{8, 8, 1, 8}) == 0);
  // All-to-all across 2 nodes: half of each GPU's buffer goes to the other node: (16−8)/16 · S.
  CHECK(collective_time(h, Collective::AllToAll, kGiB, GroupShape{16, 8, 2, 8}).nic_bytes == doctest::Approx(kGiB / 2));
}

TEST_CASE("TP8 across two 4-GPU/4-NIC nodes costs about twice the TP8 inside one node") {
  // The measured tables give, at TP message sizes (16–128 MiB), 2 nodes × 8 H100 on EFA (p5, 50 GB/s of NIC per GPU)
  // against the kernel time of one 8×H200 node (ml-engineering minus its 25 µs host overhead): 298/108.5 = 2.75,
  // 440/188 = 2.34, 601/314 = 1.91, 870/559 = 1.56 — about 2× (the issue's "2–2.5×"). The same ratio on the
  // h100-roce-4gpu example (4 GPUs per node, one 400 Gb/s NIC each) against the h100 preset:
  const Hardware in = resolve_hardware("h100"), x = resolve_hardware(examples("h100-roce-4gpu.json"));
  double sum = 0;
  int n = 0;
  for (Collective c : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter})
    for (double mib : {16.0, 32.0, 64.0, 128.0}) {
      const double S = mib * 1048576;
      const double r = t_of(x, c, S, GroupShape{8, 4, 2, 4}) / t_of(in, c, S, GroupShape{8, 8, 1, 8});
      CAPTURE(to_string(c));
      CAPTURE(mib);
      CHECK(r >= 1.6);
      CHECK(r <= 2.6);
      sum += r, ++n;
    }
  MESSAGE("mean cross-node / in-node TP8 cost: " << sum / n);
  CHECK(sum / n == doctest::Approx(2.0).epsilon(0.15));
}

TEST_CASE("bad group shapes and sizes are input errors") {
  const Hardware h = resolve_hardware("h100");
  CHECK_THROWS_AS((void)collective_time(h, Collective::AllReduce, 1, GroupShape{8, 4, 1, 4}), InputError);
  CHECK_THROWS_AS((void)collective_time(h, Collective::AllReduce, 1, GroupShape{16, 16, 1, 16}), InputError);
  CHECK_THROWS_AS((void)collective_time(h, Collective::AllReduce, 1, GroupShape{16, 8, 2, 9}), InputError);
  CHECK_THROWS_AS((void)collective_time(h, Collective::AllReduce, -1, GroupShape{8, 8, 1, 8}), InputError);
  CHECK_THROWS_AS((void)collective_time(h, Collective::AllReduce, NAN, GroupShape{8, 8, 1, 8}), InputError);
  CHECK_THROWS_AS((void)collective_time(h, Collective::AllReduce, 1, GroupShape{8, 8, 1, 8, 0}), InputError);
  CHECK_THROWS_AS((void)collective_time(h, Collective::AllReduce, 1, GroupShape{8, 8, 1, 8, 1.5}), InputError);
}

// ---- acceptance: every measured table of tests/data/nccl, predicted uncalibrated ----
// tests/data/nccl/tables.json names each table's hardware file (examples/hardware: datasheet figures, the cloud's
// published NCCL configuration and [U] assumptions, nothing fitted to these tables) and communicator. A torch-level
// table also pays PyTorch's per-call host overhead (gpu.kernels.pytorch.collective_call_overhead_us, 25 µs from the
// benchmark's author). nccl-tests report an out-of-place and an in-place time per size, back to back; they differ by
// up to 30 % on the p5 table (measurement noise), so a size's measurement is their mean. Bound: 25 % at every size.
TEST_CASE("measured: every nccl table within 25% at every size, uncalibrated") {
  const std::string dir = std::string(PARSIM_TEST_DATA) + "/nccl/";
  const auto manifest = nlohmann::json::parse(std::ifstream(dir + "tables.json"));
  std::vector<std::string> listed;
  for (const auto& t : manifest.at("tables")) listed.push_back(t.at("file").get<std::string>());
  // Every table in the directory is covered.
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    CAPTURE(entry.path().filename().string());
    CHECK(std::find(listed.begin(), listed.end(), entry.path().filename().string()) != listed.end());
  }
  for (const auto& t : manifest.at("tables")) {
    const std::string file = t.at("file");
    CAPTURE(file);
    const Hardware hw = resolve_hardware(examples(t.at("hardware")));
    const int ranks = t.at("ranks"), nodes = t.at("nodes");
    const GroupShape g{ranks, ranks / nodes, nodes, ranks / nodes};
    const std::string coll = t.at("collective");
    const Collective c = coll == "all_gather" ? Collective::AllGather
                         : coll == "reduce_scatter" ? Collective::ReduceScatter
                                                    : Collective::AllReduce;
    const double host = t.at("timing") == "torch" ? hw.gpu.kernels.at("pytorch").collective_call_overhead_s : 0;
    const auto rows = read_table(dir + file);
    REQUIRE(rows.size() >= 20);
    double worst = 0, worst_oop = 0;
    for (const Point& p : rows) {
      CAPTURE(p.bytes);
      const CollectiveCost cc = collective_time(hw, c, p.bytes, g);
      const double model_us = (cc.time_s + host) * 1e6;
      const double measured = 0.5 * (p.time_us + p.in_place_us);
      const double err = model_us / measured - 1;
      CAPTURE(p.time_us);
      CAPTURE(model_us);
      CAPTURE(to_string(cc.algo) + "/" + to_string(cc.protocol));
      CHECK(std::fabs(err) <= 0.25);
      worst = std::max(worst, std::fabs(err));
      worst_oop = std::max(worst_oop, std::fabs(model_us / p.time_us - 1));
    }
    char line[200];
    std::snprintf(line, sizeof line, "%-48s max |error| %5.1f%% (out-of-place column alone %5.1f%%)", file.c_str(),
                  100 * worst, 100 * worst_oop);
    MESSAGE(line);
  }
}

// ---- measured: XLA's collective performance table on one 8 × H100 and one 8 × B200 node ----
// tests/data/nccl/xla_perf_table_8gpu_h100_b200.csv (openxla/xla default_collective_perf_table.txtpb, Apache-2.0): the
// all-gathers and all-reduces of F32 buffers from 1 KiB to 2 GiB that XLA's collective_perf_table_gen timed through
// its NCCL runtime, on groups of 8 and of 4 GPUs — the only all-gather size sweep on B200s found (tests/data/nccl/
// README.md). Every XLA call carries a fixed runtime cost the NCCL model does not have: 14–41 µs at ≤ 64 KiB where
// NCCL's own latency is 10–18 µs in the model. It is taken as the smallest time of the table at ≤ 64 KiB (per GPU,
// collective and group) and subtracted; what is left is compared from 64 MiB up, the TP and bucket sizes, where that
// floor is below 13 % of the time. Which algorithm XLA's NCCL ran is not recorded: its 8-GPU all-reduces on H100 sit
// between parsim's ring and NVLS figures (ring 1.08–1.10 ×, NVLS 0.84–0.86 × the measurement), so the all-reduce is
// held to the ring (what NCCL_ALGO=Ring runs, e.g. under Megatron's --deterministic-mode) and the all-gather to NCCL's
// own choice (ring at these sizes). Bound: 25 % (the nccl-tests acceptance above), no value fitted to this table.
// What it shows (MESSAGE lines): on B200 the model is 2–21 % too fast at these sizes, on H100 −20 … +10 %; B200's
// all-reduce ring is ≈ 15 % more optimistic than H100's relative to this harness, its all-gather ≈ 4 %.
TEST_CASE("measured: XLA's 8 × H100 and 8 × B200 collective table from 64 MiB within 25%, uncalibrated") {
  std::ifstream in(std::string(PARSIM_TEST_DATA) + "/nccl/xla_perf_table_8gpu_h100_b200.csv");
  REQUIRE(in.good());
  struct Row {
    std::string gpu, coll;
    int n = 0;
    double bytes = 0, time_s = 0;
  };
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("gpu,", 0) == 0) continue;
    std::stringstream ss(line);
    Row r;
    std::string f;
    std::getline(ss, r.gpu, ',');
    std::getline(ss, r.coll, ',');
    std::getline(ss, f, ',');
    r.n = std::stoi(f);
    std::getline(ss, f, ',');
    r.bytes = std::stod(f);
    std::getline(ss, f, ',');  // throughput
    std::getline(ss, f, ',');
    r.time_s = std::stod(f) * 1e-6;
    rows.push_back(r);
  }
  // 2 GPUs × 2 collectives × 2 group sizes × 22 sizes (1 KiB … 2 GiB).
  REQUIRE(rows.size() == 176);
  auto key = [](const Row& r) { return r.gpu + "/" + r.coll + "/" + std::to_string(r.n); };
  std::vector<std::pair<std::string, double>> floors;
  auto floor_of = [&](const Row& r) {
    for (const auto& f : floors)
      if (f.first == key(r)) return f.second;
    double m = 1e9;
    for (const Row& o : rows)
      if (key(o) == key(r) && o.bytes <= 65536) m = std::min(m, o.time_s);
    floors.emplace_back(key(r), m);
    return m;
  };
  std::vector<std::pair<std::string, double>> worst;
  int checked = 0;
  for (const Row& r : rows) {
    if (r.bytes < 64.0 * 1048576) continue;
    const Hardware hw = resolve_hardware(r.gpu);
    const GroupShape g{r.n, r.n, 1, r.n};
    const bool ar = r.coll == "all-reduce";
    const CollectiveCost cc = collective_time(hw, ar ? Collective::AllReduce : Collective::AllGather, r.bytes, g,
                                              ar ? CollAlgo::Ring : CollAlgo::Auto);
    const double measured = r.time_s - floor_of(r);
    const double err = cc.time_s / measured - 1;
    CAPTURE(key(r));
    CAPTURE(r.bytes);
    CAPTURE(measured);
    CAPTURE(cc.time_s);
    CHECK(std::fabs(err) <= 0.25);
    ++checked;
    bool found = false;
    for (auto& w : worst)
      if (w.first == key(r)) {
        if (std::fabs(err) > std::fabs(w.second)) w.second = err;
        found = true;
      }
    if (!found) worst.emplace_back(key(r), err);
  }
  CHECK(checked == 48);  // 8 series × 6 sizes (64 MiB … 2 GiB)
  for (const auto& w : worst) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "XLA table %-24s worst error from 64 MiB: %+5.1f%%", w.first.c_str(), 100 * w.second);
    MESSAGE(msg);
  }
}

TEST_CASE("collective memo: the costs collective_time gives, bit for bit, computed once per distinct call") {
  // hardware/collective_memo.hpp: a memo serving one hardware, keyed on the collective, the algorithm, the message
  // size and the group shape. Every (collective, algorithm, size, shape) below is asked twice, in two passes: the
  // first pass computes each (a miss), the second is answered from the memo (a hit) — and both answers equal a fresh
  // collective_time field by field (exact: == on doubles).
  const Hardware hw = resolve_hardware("h100", 8);
  const GroupShape shapes[] = {{8, 8, 1, 1, 1.0}, {16, 8, 2, 8, 1.0}, {16, 8, 2, 8, 0.5}, {4, 1, 4, 8, 1.0}};
  const double sizes[] = {0.0, 4096.0, 3e6, 2.5e9};
  CollectiveMemo memo;
  std::uint64_t calls = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (Collective c : kCollectives)
      for (CollAlgo a : {CollAlgo::Auto, CollAlgo::Ring, CollAlgo::Hierarchical})
        for (const GroupShape& g : shapes)
          for (double b : sizes) {
            const CollectiveCost want = collective_time(hw, c, b, g, a), got = memo.get(hw, c, b, g, a);
            ++calls;
            CHECK(got.time_s == want.time_s);
            CHECK(got.latency_s == want.latency_s);
            CHECK(got.nic_bytes == want.nic_bytes);
            CHECK(got.nic_busy_s == want.nic_busy_s);
            CHECK(got.channels == want.channels);
            CHECK(got.algo == want.algo);
            CHECK(got.protocol == want.protocol);
          }
  // 6 collectives × 3 algorithms × 4 shapes × 4 sizes = 288 distinct calls, each asked once per pass.
  CHECK(calls == 576);
  CHECK(memo.size() == 288);
  CHECK(memo.misses() == 288);
  CHECK(memo.hits() == 288);
  // A call collective_time refuses (a shape with size ≠ per_node × nodes) throws through the memo and stores nothing.
  const GroupShape bad{6, 4, 2, 1, 1.0};
  CHECK_THROWS_AS(memo.get(hw, Collective::AllReduce, 1e6, bad), InputError);
  CHECK_THROWS_AS(memo.get(hw, Collective::AllReduce, 1e6, bad), InputError);
  CHECK(memo.size() == 288);
  memo.clear();
  CHECK(memo.size() == 0);
}

// parsim hardware/nccl_model.hpp — how NCCL chooses: an emulation of NCCL's topology search result and tuning model
// for a communicator on parsim's node model. Followed source: NVIDIA/nccl v2.30.7 (makefiles/version.mk), files
//   src/graph/tuning.cc   ncclTopoTuneModel (latency/bandwidth tables per collective, algorithm, protocol),
//                         ncclTopoGetAlgoTime (time = lat + bytes/bw, tree correction, ring plateau)
//   src/enqueue.cc        topoGetAlgoInfo (argmin over the table, channel count by message size), calcCollChunking
//   src/graph/search.cc   speed arrays, ncclTopoCompute (channels × speed fitting the links), ncclTopoDupChannels
//   src/graph/connect.cc  ring/tree channels doubled after the search
//   src/graph/topo.h      per-link NVLink bandwidth (SM80 20, SM90 20.6, SM100 40.1 GB/s)
//   src/transport/nvls.cc NVLS channel counts (16 Hopper, 24/32 Blackwell)
// The constants below are NCCL's (its own measurements of per-hop latency and per-channel bandwidth); parsim writes
// its own code around them. Internal to hardware/ (collectives.cpp uses it; tests/hardware checks it).
#pragma once
#include "hardware/hardware.hpp"

namespace parsim::nccl {

enum Algo { kTree = 0, kRing, kCollNetDirect, kCollNetChain, kNVLS, kNVLSTree, kPAT, kNumAlgos };
enum Proto { kLL = 0, kLL128, kSimple, kNumProtos };
enum Func { kBroadcast = 0, kAllGather, kReduceScatter, kAllReduce };

// NCCL constants (src/graph/tuning.cc ncclTunerConstantsDefaults), microseconds and GB/s.
extern const double kBaseLat[kNumAlgos][kNumProtos];
extern const double kHwLatNvlink[kNumAlgos][kNumProtos];
extern const double kHwLatPci[kNumAlgos][kNumProtos];
extern const double kHwLatNet[kNumAlgos][kNumProtos];

// What NCCL knows about one communicator after its topology search.
struct Comm {
  int nranks = 1, nnodes = 1, ppn = 1;
  int cc = 2;               // tuning-table index: 1 Ampere, 2 Hopper (and CDNA, RCCL's tables differ [U]), 3 Blackwell
  CpuVendor cpu = CpuVendor::Intel;
  bool nvlink = true;       // intra-node links are NVLink-class (NVSwitch or xGMI mesh), not PCIe
  bool nvls = false;        // NVLS usable (NVSwitch with SHARP, enough local ranks, enabled)
  bool collnet = false;     // SHARP in-network reduction on the scale-out tier
  unsigned protocols = kProtoLL | kProtoLL128 | kProtoSimple;
  unsigned algorithms = ~0u;
  // Search results (per channel GB/s): ring and tree graphs share the channel count.
  int graph_channels = 1;
  double ring_bw_intra = 0, ring_bw_inter = 0, tree_bw_intra = 0, tree_bw_inter = 0;
  int nvls_heads = 0;
  double nvls_bw_intra = 0, nvls_bw_inter = 0;
  int channels = 1;         // comm->nChannels: ring/tree channels after connect.cc doubles them
  int nvls_channels = 0;    // comm->nvlsChannels
  double net_latency_us = 0;  // latency the net plugin declares (graphs[a]->latencyInter)
};

Comm make_comm(const Hardware& hw, const GroupShape& g);

// One collective's latency (µs) and bandwidth (GB/s, NCCL's "algorithm bandwidth") per algorithm and protocol, as
// ncclTopoTuneModel fills comm->latencies/bandwidths; bw = 0 where the combination is unavailable.
struct Table {
  double lat[kNumAlgos][kNumProtos] = {};
  double bw[kNumAlgos][kNumProtos] = {};
};
Table tuning_table(const Comm& c, Func f);

// NCCL's estimate for one combination (ncclTopoGetAlgoTime), µs; < 0 when unavailable.
double estimate_us(const Comm& c, const Table& t, Func f, Algo a, Proto p, double bytes);

struct Choice {
  Algo algo = kRing;
  Proto proto = kSimple;
  int channels = 1;   // channels the call runs on (enqueue.cc: fewer for small messages)
  double estimate_us = 0;
};
// What NCCL runs for `bytes` (the buffer size NCCL's tuner sees: AR buffer, AG output, RS input).
Choice choose(const Comm& c, Func f, double bytes);
Choice choose(const Comm& c, const Table& t, Func f, double bytes);  // with the table already built
// NCCL's choice as a function of size, for one communicator and collective: the enabled options as lines of the
// estimate. later_choices marks every option NCCL picks for some size ≥ bytes (exactly: piecewise-linear lower
// envelope between the points where NCCL's corrections change).
class Selector {
public:
  // only_algo ≥ 0: just that algorithm's protocols (a forced algorithm).
  Selector(const Comm& c, const Table& t, Func f, int only_algo = -1);
  int argmin(double bytes) const;  // index of NCCL's choice, -1 when nothing is enabled
  Algo algo(int i) const { return opts_[i].a; }
  Proto proto(int i) const { return opts_[i].p; }
  void later_choices(double bytes, bool out[kNumAlgos][kNumProtos]) const;

private:
  struct Opt {
    Algo a;
    Proto p;
    double lat, bw;
    bool tree_corr, plateau;
  };
  void line(int i, double bytes, double& lat, double& slope) const;
  Opt opts_[static_cast<int>(kNumAlgos) * static_cast<int>(kNumProtos)] = {};
  int n_ = 0;
  double plateau_bytes_ = 0;
};

// The channel count topoGetAlgoInfo gives a chosen algorithm/protocol.
int channels_for(const Comm& c, Algo a, Proto p, double bytes);
// The same without rounding (bytes / per-channel threshold, clamped to [1, channels]): how the data splits on
// average, so that a cost built on it grows smoothly with the message instead of in a sawtooth.
double channels_continuous(const Comm& c, Algo a, Proto p, double bytes);

}  // namespace parsim::nccl

// parsim hardware/collective_memo.hpp — a memo of collective_time() for callers that price the same collectives again
// and again on one hardware (the sweep: every plan of a space asks for its TP all-reduces, CP ring steps, pipeline
// sends and data-parallel collectives, and plans that share tp, cp, mbs, sp or the DP group shape ask for the same
// ones — ≈ 6 calls per candidate of ≈ 2,500 instructions each, answered here by one hash lookup).
//
// What is cached: the CollectiveCost collective_time(hw, c, bytes, g, algo) returned, keyed on every argument except
// the hardware — c, algo, the bit pattern of `bytes`, and the group shape field by field (size, per_node, nodes,
// concurrent_per_node, the bit pattern of nic_fraction). Why it is safe: collective_time is a pure function of its
// arguments (no global or per-call state), so a stored answer is the one a new call would compute, bit for bit. The
// hardware is NOT part of the key: a memo serves ONE hardware (by content), and its owner must clear() it before
// using it for another (sim/step's Evaluator keeps one per hardware it was promised, Evaluator::fix_hardware).
// Keying on a Hardware's address would be wrong (a Scenario holds its Hardware by value: copies move, and a new
// hardware can take an old one's address); hashing its content per call would cost what the memo saves.
// A call that throws (a bad group shape or message size) stores nothing and throws again on the next call.
// Not thread-safe: one memo per thread (the sweep's evaluators are per thread), so no locking and no dependence of any
// result on which thread or in which order plans were evaluated.
#pragma once
#include "hardware/hardware.hpp"

#include <cstdint>
#include <vector>

namespace parsim {

class CollectiveMemo {
public:
  // collective_time(hw, c, bytes, g, algo) — from the memo when these arguments were asked before. `hw` must be the
  // hardware this memo serves (see the header comment).
  CollectiveCost get(const Hardware& hw, Collective c, double bytes, const GroupShape& g,
                     CollAlgo algo = CollAlgo::Auto);
  // Forgets every entry (to serve another hardware).
  void clear();
  std::size_t size() const { return count_; }
  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }

private:
  struct Key {
    std::uint64_t bytes = 0, nic_fraction = 0;  // bit patterns
    std::int32_t size = 0, per_node = 0, nodes = 0, concurrent = 0;
    std::uint8_t coll = 0, algo = 0;
    bool operator==(const Key& o) const {
      return bytes == o.bytes && nic_fraction == o.nic_fraction && size == o.size && per_node == o.per_node &&
             nodes == o.nodes && concurrent == o.concurrent && coll == o.coll && algo == o.algo;
    }
  };
  struct Slot {
    Key key;
    CollectiveCost cost;
    bool used = false;
  };
  static std::uint64_t hash(const Key& k);
  void grow();
  // Open addressing with linear probing, a power-of-two table at most half full.
  std::vector<Slot> slots_;
  std::size_t count_ = 0;
  std::uint64_t hits_ = 0, misses_ = 0;
  // A sweep asks for a few hundred distinct collectives; past this many entries the memo starts over (answers stay
  // exact either way: it only bounds memory for callers that never repeat).
  static constexpr std::size_t kMaxEntries = std::size_t{1} << 16;
};

}  // namespace parsim

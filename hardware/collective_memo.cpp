// parsim hardware/collective_memo.cpp — see collective_memo.hpp for what is cached and why it is exact.
#include "hardware/collective_memo.hpp"

#include <bit>

namespace parsim {

namespace {
// splitmix64's finalizer (Steele, Lea & Flood 2014): spreads the key's bits over the table index.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

std::uint64_t CollectiveMemo::hash(const Key& k) {
  std::uint64_t h = mix(k.bytes);
  h = mix(h ^ k.nic_fraction);
  h = mix(h ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.size)) << 32 |
               static_cast<std::uint32_t>(k.per_node)));
  h = mix(h ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.nodes)) << 32 |
               static_cast<std::uint32_t>(k.concurrent)));
  return mix(h ^ (static_cast<std::uint64_t>(k.coll) << 8 | k.algo));
}

void CollectiveMemo::clear() {
  slots_.clear();
  count_ = 0;
}

void CollectiveMemo::grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (!s.used) continue;
    std::size_t i = hash(s.key) & mask;
    while (slots_[i].used) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

CollectiveCost CollectiveMemo::get(const Hardware& hw, Collective c, double bytes, const GroupShape& g,
                                   CollAlgo algo) {
  Key k;
  k.bytes = std::bit_cast<std::uint64_t>(bytes);
  k.nic_fraction = std::bit_cast<std::uint64_t>(g.nic_fraction);
  k.size = g.size;
  k.per_node = g.per_node;
  k.nodes = g.nodes;
  k.concurrent = g.concurrent_per_node;
  k.coll = static_cast<std::uint8_t>(c);
  k.algo = static_cast<std::uint8_t>(algo);
  if (!slots_.empty()) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(k) & mask; slots_[i].used; i = (i + 1) & mask)
      if (slots_[i].key == k) {
        ++hits_;
        return slots_[i].cost;
      }
  }
  ++misses_;
  const CollectiveCost cost = collective_time(hw, c, bytes, g, algo);  // (throws before anything is stored)
  if (count_ >= kMaxEntries) clear();
  if (2 * (count_ + 1) > slots_.size()) grow();
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash(k) & mask;
  while (slots_[i].used) i = (i + 1) & mask;
  slots_[i] = Slot{k, cost, true};
  ++count_;
  return cost;
}

}  // namespace parsim

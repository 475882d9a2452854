// parsim — the parallel axes, one vocabulary for every layer.
//
// A training plan splits work along five axes (Megatron-Core's order "tp-cp-ep-dp-pp", parallel_state.py):
//   tp  tensor parallel (Shoeybi et al. 2019), cp context parallel, ep expert parallel (MoE layers),
//   dp  data parallel (incl. ZeRO/FSDP sharding), pp pipeline parallel.
// Every per-axis quantity — plan degrees, communication time by kind, JSON keys, CSV columns, table cells, trace
// tracks — is a PerAxis<T> and is written by iterating kAxes, so adding an axis cannot misalign any of them.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace parsim {

enum class Axis : std::uint8_t { tp, cp, ep, dp, pp };
inline constexpr std::size_t kAxisCount = 5;
inline constexpr std::array<Axis, kAxisCount> kAxes{Axis::tp, Axis::cp, Axis::ep, Axis::dp, Axis::pp};

// "tp", "cp", "ep", "dp", "pp": the JSON key, CSV column stem, table label and trace track name of the axis.
constexpr const char* axis_name(Axis a) {
  constexpr const char* names[kAxisCount] = {"tp", "cp", "ep", "dp", "pp"};
  return names[static_cast<std::size_t>(a)];
}
constexpr std::size_t axis_index(Axis a) { return static_cast<std::size_t>(a); }
inline std::string to_string(Axis a) { return axis_name(a); }

// One value per axis, indexed by Axis (never by a literal integer).
template <class T>
struct PerAxis {
  std::array<T, kAxisCount> v{};
  constexpr T& operator[](Axis a) { return v[axis_index(a)]; }
  constexpr const T& operator[](Axis a) const { return v[axis_index(a)]; }
  friend constexpr bool operator==(const PerAxis&, const PerAxis&) = default;
  // Sum over the axes (for totals such as the exposed communication of a stage).
  constexpr T sum() const {
    T s{};
    for (const T& x : v) s += x;
    return s;
  }
};

}  // namespace parsim

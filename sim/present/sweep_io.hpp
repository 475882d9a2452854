// parsim sim/present — a sweep as JSON (docs/cli.md "parsim sweep"), CSV and a table, and read back (for merge).
#pragma once
#include "sim/sweep/sweep.hpp"

#include <string>

namespace parsim {

std::string sweep_to_json(const SweepReport& r, const SweepListing& l);
std::string sweep_to_csv(const SweepReport& r, const SweepListing& l);
std::string sweep_to_table(const SweepReport& r, const SweepListing& l);
// Reads a sweep JSON (sweep_to_json's output) or CSV (sweep_to_csv's) back; throws InputError naming the file.
SweepReport read_sweep_file(const std::string& path);

}  // namespace parsim

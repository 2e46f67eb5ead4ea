// Cost profiles of the NVM device model: the target device's published figures
// (../shared/notes/device-model.md) that the model charges where engines touch NVM.
#pragma once
#include <string>
#include <vector>

namespace nvt::dev {

enum class PersistDomain { ADR, EADR };

struct CostProfile {
  std::string name;
  bool charges = true;          // false for `dram`: the ideal reference, nothing charged
  double read_ns = 0;           // random read latency of one 256 B unit (XPLine)
  double read_seq_gbps = 0;     // per-thread read bandwidth for further units of one access
  double write_gbps_total = 0;  // device write bandwidth shared by all writers at the peak
  double write_gbps_thread = 0; // what one writer can reach alone
  int write_peak_threads = 4;   // writers beyond this lose bandwidth (Optane falls to 60%)
  double write_gbps_floor = 0;  // bandwidth at 24 writers
  double fence_ns = 0;          // persist latency of store+clwb+sfence (drain of the WPQ)
  // Cost multipliers of an access to another NUMA node's memory (numa.h): an NVM read, an NVM
  // write-back, and a DRAM access (charged as (factor - 1) x the host's DRAM latency).
  double remote_read_factor = 1.0;
  double remote_write_factor = 1.0;
  double remote_dram_factor = 1.0;
  PersistDomain domain = PersistDomain::ADR;
  bool emulated = true;

  // Write bandwidth each of `writers` threads gets (GB/s).
  double write_gbps_per_thread(int writers) const;
};

// The named profiles: dram, optane-100, optane-200, cxl.
CostProfile profile_by_name(const std::string& name);  // throws std::invalid_argument
std::vector<std::string> profile_names();

}  // namespace nvt::dev

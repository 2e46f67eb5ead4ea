#include "storage/device/cost_profile.h"

#include <algorithm>
#include <stdexcept>

namespace nvt::dev {

double CostProfile::write_gbps_per_thread(int writers) const {
  if (writers < 1) writers = 1;
  // Total bandwidth is flat up to the peak thread count, then falls linearly to the floor at
  // 24 writers (Yang et al. FAST'20: 12.5 GB/s at 4-5 threads, 7.5 GB/s at 24 on 6 DIMMs).
  double total = write_gbps_total;
  if (writers > write_peak_threads && write_gbps_floor > 0) {
    double f = std::min(1.0, double(writers - write_peak_threads) / double(24 - write_peak_threads));
    total = write_gbps_total + f * (write_gbps_floor - write_gbps_total);
  }
  return std::min(write_gbps_thread, total / writers);
}

CostProfile profile_by_name(const std::string& name) {
  CostProfile p;
  p.name = name;
  if (name == "dram") {
    p.charges = false;
  } else if (name == "optane-100") {
    // Optane DC PMem 100, 6 DIMMs interleaved, App Direct (Yang et al. FAST'20).
    p.read_ns = 305;
    p.read_seq_gbps = 6.5;
    p.write_gbps_total = 12.5;
    p.write_gbps_thread = 2.2;
    p.write_peak_threads = 4;
    p.write_gbps_floor = 7.5;
    p.fence_ns = 62;
    // Remote NUMA (docs/device-model.md): writes 13.5 -> 5.9 GB/s at 4 threads
    // (Yang et al. FAST'20); reads and DRAM pay one interconnect hop, an assumption (no figure
    // in ../shared/notes): remote DRAM ~1.6x local on two-socket Xeons, that hop over 305 ns.
    p.remote_write_factor = 2.3;
    p.remote_read_factor = 1.2;
    p.remote_dram_factor = 1.6;
  } else if (name == "optane-200") {
    // DDR4-3200: about +15% bandwidth; same media latency; eADR capable.
    p = profile_by_name("optane-100");
    p.name = name;
    p.read_seq_gbps *= 1.15;
    p.write_gbps_total *= 1.15;
    p.write_gbps_thread *= 1.15;
    p.write_gbps_floor *= 1.15;
  } else if (name == "cxl") {
    // CXL-attached DRAM expansion: +70-90 ns over local DRAM (Pond), DRAM-like bandwidth.
    p.read_ns = 101 + 80;
    p.read_seq_gbps = 20;
    p.write_gbps_total = 30;
    p.write_gbps_thread = 10;
    p.write_peak_threads = 8;
    p.write_gbps_floor = 30;
    p.fence_ns = 57 + 80;
    p.remote_read_factor = 1.5;  // an expander behind another socket: one more hop on ~180 ns
    p.remote_write_factor = 1.5;
    p.remote_dram_factor = 1.6;
  } else {
    throw std::invalid_argument("unknown device profile '" + name +
                                "' (accepted: dram, optane-100, optane-200, cxl)");
  }
  return p;
}

std::vector<std::string> profile_names() { return {"dram", "optane-100", "optane-200", "cxl"}; }

}  // namespace nvt::dev

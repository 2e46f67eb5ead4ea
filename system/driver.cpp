#include "system/driver.h"

#include <iostream>

namespace nvt {

dev::CostProfile make_profile(const Options& o) {
  dev::CostProfile p = dev::profile_by_name(o.profile);
  bool overridden = o.read_ns || o.write_gbps || o.fence_ns || o.remote_factor;
  if (overridden) p.charges = true;  // explicit numbers are charged even on top of `dram`
  if (o.read_ns) p.read_ns = *o.read_ns;
  if (o.write_gbps) {
    p.write_gbps_total = p.write_gbps_floor = *o.write_gbps;
    p.write_gbps_thread = *o.write_gbps;
  }
  if (o.fence_ns) p.fence_ns = *o.fence_ns;
  if (o.remote_factor) p.remote_factor = *o.remote_factor;
  if (overridden && p.read_seq_gbps == 0) p.read_seq_gbps = 1e6;
  if (overridden && p.write_gbps_thread == 0) p.write_gbps_total = p.write_gbps_thread = p.write_gbps_floor = 1e6;
  p.domain = o.persist_domain == "eadr" ? dev::PersistDomain::EADR : dev::PersistDomain::ADR;
  return p;
}

void print_summary(const nlohmann::json& out) {
  const auto& c = out["config"];
  const auto& h = out["host"];
  bool real = h["nvm"]["real"].get<bool>();
  std::cerr << "rundb " << c["engine"].get<std::string>() << "+" << c["cc"].get<std::string>()
            << " on " << (real ? "REAL persistent memory" : "EMULATED NVM") << " (profile "
            << c["profile"].get<std::string>() << ", " << c["persist_domain"].get<std::string>()
            << ", P=" << c["p_ratio"] << ", " << c["threads"] << " threads)\n";
  if (!h["calibration"]["slower_than_target"].empty())
    std::cerr << "  note: this host is already slower than the target device for "
              << h["calibration"]["slower_than_target"].dump() << "; nothing added there\n";
  if (out.contains("recovery")) {
    const auto& r = out["recovery"];
    std::cerr << "  recovery: " << r["total_s"] << " s, " << r["rows"] << " rows, "
              << r["replayed"] << " log entries replayed\n";
    for (auto& [k, v] : r["steps_s"].items()) std::cerr << "    " << k << ": " << v << " s\n";
    if (out.contains("verification")) {
      const auto& v = out["verification"];
      std::cerr << "  verification: " << v["acked_txns"] << " acknowledged txns, "
                << v["acked_writes_checked"] << " writes checked, " << v["violations"]
                << " violations\n";
      for (auto& e : v["examples"]) std::cerr << "    " << e.get<std::string>() << "\n";
    }
    const auto& inv = out["invariants"];
    std::cerr << "  engine invariants: " << inv["violations"] << " violations\n";
    for (auto& e : inv["examples"]) std::cerr << "    " << e.get<std::string>() << "\n";
    return;
  }
  const auto& r = out["results"];
  char buf[512];
  snprintf(buf, sizeof buf,
           "  %.0f txn/s committed (%lu committed, %lu aborted, abort rate %.3f) over %.2f s\n"
           "  latency us: avg %.1f p50 %.1f p99 %.1f p999 %.1f\n"
           "  per txn: clwb %.2f sfence %.2f NVM read %.0f B NVM write %.0f B; DRAM hit rate %.3f\n",
           r["throughput_tps"].get<double>(), (unsigned long)r["committed"].get<uint64_t>(),
           (unsigned long)r["aborted"].get<uint64_t>(), r["abort_rate"].get<double>(),
           r["measured_s"].get<double>(), r["latency_us"]["avg"].get<double>(),
           r["latency_us"]["p50"].get<double>(), r["latency_us"]["p99"].get<double>(),
           r["latency_us"]["p999"].get<double>(), r["per_txn"]["clwb"].get<double>(),
           r["per_txn"]["sfence"].get<double>(), r["per_txn"]["nvm_read_bytes"].get<double>(),
           r["per_txn"]["nvm_write_bytes"].get<double>(), r["cache_hit_rate"].get<double>());
  std::cerr << buf;
}

}  // namespace nvt

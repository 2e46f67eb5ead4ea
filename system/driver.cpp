#include "system/driver.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iostream>
#include <stdexcept>

namespace nvt {

dev::CostProfile make_profile(const Options& o) {
  dev::CostProfile p = dev::profile_by_name(o.profile);
  bool overridden = o.read_ns || o.write_gbps || o.fence_ns || o.remote_factor || o.remote_read_factor ||
                    o.remote_write_factor || o.remote_dram_factor;
  if (overridden) p.charges = true;  // explicit numbers are charged even on top of `dram`
  if (o.read_ns) p.read_ns = *o.read_ns;
  if (o.write_gbps) {
    p.write_gbps_total = p.write_gbps_floor = *o.write_gbps;
    p.write_gbps_thread = *o.write_gbps;
  }
  if (o.fence_ns) p.fence_ns = *o.fence_ns;
  if (o.remote_factor) p.remote_read_factor = p.remote_write_factor = *o.remote_factor;  // both NVM factors
  if (o.remote_read_factor) p.remote_read_factor = *o.remote_read_factor;
  if (o.remote_write_factor) p.remote_write_factor = *o.remote_write_factor;
  if (o.remote_dram_factor) p.remote_dram_factor = *o.remote_dram_factor;
  if (overridden && p.read_seq_gbps == 0) p.read_seq_gbps = 1e6;
  if (overridden && p.write_gbps_thread == 0) p.write_gbps_total = p.write_gbps_thread = p.write_gbps_floor = 1e6;
  p.domain = o.persist_domain == "eadr" ? dev::PersistDomain::EADR : dev::PersistDomain::ADR;
  return p;
}

dev::DeviceOptions device_options(const Options& o, const std::string& engine, const std::string& layout,
                                  uint64_t engine_bytes, const NumaPlan& numa) {
  const std::vector<std::string> files = node_image_paths(o.nvm_path, numa);
  dev::DeviceOptions d;
  d.path = files[0];
  if (files.size() > 1) d.node_paths = files;
  d.placement = numa.placement;
  d.reopen = o.recover;
  d.layout = layout;
  d.settings = image_settings(o, engine);
  d.profile = make_profile(o);
  d.writer_threads = o.threads;
  d.numa_nodes = numa.nodes;
  d.power_fail = o.power_fail;
  d.crash = dev::parse_crash(o.crash_at);
  d.crash.evict_prob = o.evict_prob;
  d.crash.seed = o.seed;
  dev::g_fault = dev::parse_fault(o.fault);
  d.size = o.nvm_size ? o.nvm_size : engine_bytes + (64ull << 20);
  return d;
}

EngineOptions engine_options(const Options& o, uint64_t db_bytes) {
  EngineOptions eo;
  eo.threads = o.threads;
  eo.checkpoint_after_load = o.checkpoint == "after-load";
  eo.checkpoint_log_fill = o.checkpoint_fill;
  eo.group_commit_us = o.group_commit_us;
  eo.zen_plus = o.zen_plus;
  eo.lrt_alpha = o.lrt_alpha;
  eo.lrt_beta = o.lrt_beta;
  eo.lrt_gamma = o.lrt_gamma;
  eo.page_size = o.page_size;
  eo.epoch_ms = o.epoch_ms;
  eo.gleaner_interval_ms = o.gleaner_interval_ms;
  eo.snapshot_cache = o.snapshot_cache == "on";
  eo.gleaner_mappers = o.gleaner_mappers;
  eo.gleaner_reducers = o.gleaner_reducers;
  eo.log_bytes = o.log_size ? o.log_size
                            : std::min<uint64_t>(4ull << 30, std::max<uint64_t>(64ull << 20, 2 * db_bytes / uint64_t(o.threads)));
  eo.log_bytes = (eo.log_bytes + (2ull << 20) - 1) / (2ull << 20) * (2ull << 20);
  return eo;
}

std::vector<uint32_t> persist_order_ids(const std::string& flag, std::vector<std::string> names,
                                        const std::vector<TableInfo>& tables) {
  if (!flag.empty()) {
    names.clear();
    std::string cur;
    for (char ch : flag + ",")
      if (ch == ',') { if (!cur.empty()) names.push_back(cur); cur.clear(); } else cur += ch;
  }
  std::vector<uint32_t> order;
  if (names.empty()) return order;
  for (auto& n : names) {
    auto it = std::find_if(tables.begin(), tables.end(), [&](const TableInfo& t) { return t.name == n; });
    if (it == tables.end()) throw std::invalid_argument("--persist-order names no table " + n);
    if (std::find(order.begin(), order.end(), it->id) == order.end()) order.push_back(it->id);
  }
  for (auto& t : tables)  // tables not named follow in id order
    if (std::find(order.begin(), order.end(), t.id) == order.end()) order.push_back(t.id);
  return order;
}

namespace {
volatile sig_atomic_t g_signal = 0;
std::atomic<bool> g_interruptible{false};
static_assert(std::atomic<bool>::is_always_lock_free);  // read in a signal handler

void say(const char* s) {  // async-signal-safe
  ssize_t r = write(2, s, strlen(s));
  (void)r;
}

void on_signal(int sig) {
  const char* name = sig == SIGINT ? "SIGINT" : "SIGTERM";
  if (g_signal == 0 && g_interruptible.load(std::memory_order_relaxed)) {
    g_signal = sig;
    say("\nrundb: ");
    say(name);
    say(": ending the run at the next transaction boundary and printing the results so far "
        "(send it again to exit at once)\n");
    return;
  }
  say("\nrundb: ");
  say(name);
  say(g_signal ? " again: exiting at once\n"
               : " during setup, load or recovery: exiting at once (the image is left as after "
                 "a crash: run again, or --recover it)\n");
  _exit(128 + sig);
}
}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int interrupt_signal() { return g_signal; }

void set_interruptible(bool workers_running) {
  g_interruptible.store(workers_running, std::memory_order_relaxed);
}

void print_summary(const nlohmann::json& out) {
  const auto& c = out["config"];
  const auto& h = out["host"];
  bool real = h["nvm"]["real"].get<bool>();
  std::cerr << "rundb " << c["engine"].get<std::string>() << "+" << c["cc"].get<std::string>()
            << " on " << (real ? "REAL persistent memory" : "EMULATED NVM") << " (profile "
            << c["profile"].get<std::string>() << ", " << c["persist_domain"].get<std::string>()
            << ", P=" << c["p_ratio"] << ", " << c["threads"] << " threads)\n";
  if (h.contains("numa") && h["numa"]["nodes"].get<int>() > 1) {
    const auto& n = h["numa"];
    std::cerr << "  NUMA: " << n["nodes"] << " nodes (" << n["real_nodes"] << " real, " << n["virtual_nodes"]
              << (n["virtual_nodes"].get<int>() > 0 ? " VIRTUAL: modelled by the device model only" : " virtual")
              << "), policy " << n["policy"].get<std::string>() << "\n";
  }
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
  if (out.value("interrupted", false))
    std::cerr << "  INTERRUPTED: the results below cover the run until the signal\n";
  char buf[512];
  snprintf(buf, sizeof buf,
           "  %.0f txn/s committed (%lu committed, %lu aborted, abort rate %.3f, retry rate %.3f) over %.2f s\n"
           "  latency us: avg %.1f p50 %.1f p99 %.1f p999 %.1f\n"
           "  per txn: clwb %.2f sfence %.2f NVM read %.0f B NVM write %.0f B; DRAM hit rate %.3f\n",
           r["throughput_tps"].get<double>(), (unsigned long)r["committed"].get<uint64_t>(),
           (unsigned long)r["aborted"].get<uint64_t>(), r["abort_rate"].get<double>(),
           r["retry_rate"].get<double>(), r["measured_s"].get<double>(), r["latency_us"]["avg"].get<double>(),
           r["latency_us"]["p50"].get<double>(), r["latency_us"]["p99"].get<double>(),
           r["latency_us"]["p999"].get<double>(), r["per_txn"]["clwb"].get<double>(),
           r["per_txn"]["sfence"].get<double>(), r["per_txn"]["nvm_read_bytes"].get<double>(),
           r["per_txn"]["nvm_write_bytes"].get<double>(), r["cache_hit_rate"].get<double>());
  std::cerr << buf;
  if (r.contains("numa") && r["numa"]["nodes"].get<int>() > 1) {
    const auto& a = r["numa"]["accesses"];
    snprintf(buf, sizeof buf,
             "  remote per txn: NVM read %.1f write %.1f, DRAM read %.1f write %.1f (shares %.2f %.2f %.2f %.2f)\n",
             a["nvm_read"]["remote_per_txn"].get<double>(), a["nvm_write"]["remote_per_txn"].get<double>(),
             a["dram_read"]["remote_per_txn"].get<double>(), a["dram_write"]["remote_per_txn"].get<double>(),
             a["nvm_read"]["remote_share"].get<double>(), a["nvm_write"]["remote_share"].get<double>(),
             a["dram_read"]["remote_share"].get<double>(), a["dram_write"]["remote_share"].get<double>());
    std::cerr << buf;
    if (r["numa"].contains("affinity_share"))
      std::cerr << "  soft partition: " << r["numa"]["affinity_share"] << " of transactions on their affinity node, "
                << r["numa"]["partitions_remapped"] << " partitions remapped\n";
  }
}

}  // namespace nvt

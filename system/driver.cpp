#include "system/driver.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
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
}

}  // namespace nvt

#include "system/run_report.h"

#include <algorithm>

#include "system/host.h"

namespace nvt {

namespace {

// A latency histogram (ns) as JSON in microseconds.
nlohmann::json latency_json(const LatencyHistogram& h) {
  return {{"avg", h.mean() / 1e3},
          {"p50", h.percentile(0.50) / 1e3},
          {"p99", h.percentile(0.99) / 1e3},
          {"p999", h.percentile(0.999) / 1e3}};
}

// Device traffic per transaction (`per` = 1 / transactions) as results.per_txn reports it.
nlohmann::json per_txn_json(const dev::Counters& dc, double per, double tsc_ghz) {
  return {{"clwb", double(dc.clwb) * per},
          {"sfence", double(dc.sfence) * per},
          {"nvm_read_bytes", double(dc.nvm_read_bytes) * per},
          {"nvm_write_bytes", double(dc.nvm_write_bytes) * per},
          {"dram_bytes", double(dc.dram_bytes) * per},
          {"remote_accesses", double(dc.remote) * per},
          {"charged_ns", double(dc.charged_cycles) / tsc_ghz * per}};
}

// results.memory_bytes. dram_breakdown is the ledger (bytes per entry), dram_kind marks each
// entry data or overhead.
nlohmann::json memory_json(const dev::DramBudget& dram, const dev::NvmImage& nvm) {
  nlohmann::json kind = nlohmann::json::object();
  for (auto& [what, use] : dram.kinds()) kind[what] = dev::dram_use_name(use);
  return {{"dram", dram.used()},
          {"dram_budget", dram.budget()},
          {"dram_data", dram.data_used()},
          {"dram_data_cap", dram.data_cap()},
          {"dram_overhead", dram.used() - dram.data_used()},
          {"dram_breakdown", dram.breakdown()},
          {"dram_kind", kind},
          {"nvm", nvm.used()},
          {"nvm_persistent", nvm.used(dev::RegionKind::Persistent)},
          {"nvm_volatile", nvm.used(dev::RegionKind::Volatile)}};
}

}  // namespace

void put_run_header(nlohmann::json& out, const Options& o, const std::string& engine, const std::string& cc,
                    const dev::NvmImage& nvm, uint64_t dram_budget, uint64_t db_bytes, const NumaPlan& numa) {
  nlohmann::json config = o.to_json();
  config["engine"] = engine;
  // What the figures call the engine: Zen+ is Zen run with --zen-plus on.
  config["engine_variant"] = engine == "zen" && o.zen_plus ? "zen+" : engine;
  config["cc"] = cc;
  config["device_model"] = DEVICE_MODEL;
  config["nvm_size"] = nvm.size();
  config["dram_size"] = dram_budget;
  config["database_bytes"] = db_bytes;
  config["numa_nodes"] = numa.nodes;
  config["numa_policy"] = dev::placement_name(numa.placement);
  out["config"] = config;
  out["host"] = host_json(nvm);
  out["host"]["numa"] = numa.to_json();
}

nlohmann::json recovery_json(const RecoveryReport& rep, const dev::Counters& rc, int threads, double tsc_ghz) {
  nlohmann::json r;
  double total = 0;
  for (auto& [step, s] : rep.steps) { r["steps_s"][step] = s; total += s; }
  for (auto& [step, c] : rep.cpu) r["steps_cpu_s"][step] = c;
  r["total_s"] = total;
  r["rows"] = rep.rows;
  r["replayed"] = rep.replayed;
  for (auto& [name, n] : rep.counts) r["counts"][name] = n;
  r["threads"] = threads;
  r["nvm_read_bytes"] = rc.nvm_read_bytes;
  r["nvm_write_bytes"] = rc.nvm_write_bytes;
  r["clwb"] = rc.clwb;
  r["sfence"] = rc.sfence;
  r["charged_s"] = double(rc.charged_cycles) / (tsc_ghz * 1e9);
  return r;
}

nlohmann::json recovered_results(const dev::DramBudget& dram, const dev::NvmImage& nvm) {
  return {{"memory_bytes", {{"dram", dram.used()}, {"nvm", nvm.used()}}}};
}

MeasuredRun sum_workers(const std::vector<ThreadStats>& stats, double secs, const dev::Counters& background) {
  MeasuredRun m;
  m.secs = secs;
  for (auto& s : stats) {
    m.committed += s.committed.load();
    m.aborted += s.aborted();
    m.retried += s.retried;
    for (size_t i = 0; i < m.causes.size(); i++) m.causes[i] += s.aborts[i];
    m.latency.merge(s.latency);
    m.durable_latency.merge(s.durable_latency);
    m.traffic += s.dev_end - s.dev_start;
    m.hits += s.engine_hits;
    m.accesses += s.engine_accesses;
  }
  m.traffic += background;  // per_txn: all the traffic the workload caused, the background's share shown apart
  m.background = background;
  m.background_measured = true;
  m.per_txn_of = m.committed;
  return m;
}

nlohmann::json measured_results(const MeasuredRun& m, const dev::DramBudget& dram, const dev::NvmImage& nvm,
                                nlohmann::json engine, double tsc_ghz) {
  const double per = m.per_txn_of ? 1.0 / double(m.per_txn_of) : 0.0;
  nlohmann::json by_cause;
  for (size_t i = 0; i < m.causes.size(); i++) by_cause[cause_name(AbortCause(i))] = m.causes[i];
  const uint64_t attempts = m.committed + m.aborted;
  nlohmann::json res = {
      {"measured_s", m.secs},
      {"committed", m.committed},
      {"aborted", m.aborted},
      {"throughput_tps", m.secs > 0 ? double(m.committed) / m.secs : 0.0},
      {"abort_rate", attempts ? double(m.aborted) / double(attempts) : 0.0},
      {"aborts_by_cause", by_cause},
      // Committed transactions that aborted at least once first: an abort retried at once
      // often meets the same holder again, so abort_rate counts one conflict several times.
      {"retried", m.retried},
      {"retry_rate", m.committed ? double(m.retried) / double(m.committed) : 0.0},
      {"latency_us", latency_json(m.latency)},
      // From submission to the commit's durability, for every engine: latency_us stops at
      // commit(), an acknowledgement waits for this. The same as latency_us where commit()
      // returns durable; later where durability lags (WBL's group commit, FOEDUS's epochs,
      // Zen's unfenced LP line), and for a read-only transaction until what it read is durable
      // (docs/output.md).
      {"durable_latency_us", latency_json(m.durable_latency)},
      {"per_txn", per_txn_json(m.traffic, per, tsc_ghz)},
      {"cache_hit_rate", m.accesses ? double(m.hits) / double(m.accesses) : 0.0},
      {"memory_bytes", memory_json(dram, nvm)},
      {"engine", std::move(engine)}};
  if (m.rolled_back) res["rolled_back"] = *m.rolled_back;
  if (m.background_measured)
    res["per_txn"]["background"] = {{"clwb", double(m.background.clwb) * per},
                                    {"sfence", double(m.background.sfence) * per},
                                    {"nvm_read_bytes", double(m.background.nvm_read_bytes) * per},
                                    {"nvm_write_bytes", double(m.background.nvm_write_bytes) * per},
                                    {"charged_ns", double(m.background.charged_cycles) / tsc_ghz * per}};
  return res;
}

void by_type_results(nlohmann::json& res, const std::vector<std::string>& names,
                     const std::vector<std::array<uint64_t, 8>>& per_thread, double secs, uint64_t committed) {
  nlohmann::json by, tps;
  for (size_t k = 0; k < names.size() && k < 8; k++) {
    uint64_t n = 0;
    for (auto& a : per_thread) n += a[k];
    by[names[k]] = n;
    tps[names[k]] = secs > 0 ? double(n) / secs : 0.0;
  }
  res["committed_by_type"] = by;
  res["throughput_by_type_tps"] = tps;
  if (by.contains("neworder")) res["tpmC"] = secs > 0 ? double(by["neworder"].get<uint64_t>()) * 60.0 / secs : 0.0;
  res["throughput_tpm"] = secs > 0 ? double(committed) * 60.0 / secs : 0.0;
}

nlohmann::json numa_results(const NumaPlan& numa, const dev::Counters& c, uint64_t committed) {
  double per = committed ? 1.0 / double(committed) : 0.0;
  auto kind = [&](uint64_t all, uint64_t remote) {
    return nlohmann::json{{"local", all - remote}, {"remote", remote},
                          {"remote_per_txn", double(remote) * per},
                          {"remote_share", all ? double(remote) / double(all) : 0.0}};
  };
  nlohmann::json j = numa.to_json();
  j.erase("node_list");
  j.erase("thread_nodes");
  j["accesses"] = {{"nvm_read", kind(c.nvm_reads, c.remote_nvm_reads)},
                   {"nvm_write", kind(c.nvm_writes, c.remote_nvm_writes)},
                   {"dram_read", kind(c.dram_reads, c.remote_dram_reads)},
                   {"dram_write", kind(c.dram_writes, c.remote_dram_writes)}};
  return j;
}

void affinity_results(nlohmann::json& numa, const std::vector<std::array<uint64_t, 3>>& affine, int partitions,
                      uint64_t remapped, uint64_t overflow) {
  uint64_t ran = 0, on = 0, none = 0;
  for (auto& a : affine) ran += a[0], on += a[1], none += a[2];
  numa["affinity_share"] = ran ? double(on) / double(ran) : 0.0;
  numa["no_affinity"] = none;
  numa["partitions"] = partitions;
  numa["partitions_remapped"] = remapped;
  numa["dispatch_overflow"] = overflow;
}

nlohmann::json time_breakdown_json(const std::vector<std::array<uint64_t, 4>>& cycles, double tsc_ghz) {
  std::array<double, 4> sum{};
  for (auto& c : cycles)
    for (size_t i = 0; i < 4; i++) sum[i] += double(c[i]) / (tsc_ghz * 1e9);
  return {{"snapshot_generation", sum[1]},
          {"status_storage", sum[2]},
          {"record_access", sum[3]},
          {"other", std::max(0.0, sum[0] - sum[1] - sum[2] - sum[3])}};
}

nlohmann::json timeline_json(const std::vector<uint64_t>& committed_at, int interval_ms,
                             const std::vector<std::pair<uint64_t, bool>>& stages) {
  nlohmann::json tl = nlohmann::json::array();
  uint64_t prev = 0;
  for (uint64_t v : committed_at) {
    tl.push_back(double(v - prev) * 1000.0 / interval_ms);
    prev = v;
  }
  nlohmann::json t = {{"interval_ms", interval_ms}, {"throughput_tps", tl}};
  if (!stages.empty()) {
    nlohmann::json ex = nlohmann::json::array();
    for (size_t i = 1; i < stages.size(); i++)
      ex.push_back(int(stages[i].second || stages[i - 1].second || stages[i].first != stages[i - 1].first));
    t["exclusive"] = ex;
  }
  return t;
}

}  // namespace nvt

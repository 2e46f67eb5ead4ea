// What a run reports (docs/output.md): the output's `config` and `host`, the `recovery`
// object, and the measured phase's `results`, built from plain numbers. Both run paths
// (run_pair in system/driver.h, run_deterministic) write these fields through the functions
// here, so they mean the same in both, and the JSON building is compiled once
// (system/run_report.cpp) instead of in every engine-CC-benchmark instantiation.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/access.h"
#include "storage/device/device.h"
#include "storage/device/dram_budget.h"
#include "storage/device/nvm_image.h"
#include "storage/engine.h"
#include "system/numa_host.h"
#include "system/options.h"
#include "system/stats.h"

namespace nvt {

// The output's `config` (the options, the pair and what the run sized) and `host`.
void put_run_header(nlohmann::json& out, const Options& o, const std::string& engine, const std::string& cc,
                    const dev::NvmImage& nvm, uint64_t dram_budget, uint64_t db_bytes, const NumaPlan& numa);

// The `recovery` object: the steps' times, rows, what was replayed, the recovery's own traffic.
nlohmann::json recovery_json(const RecoveryReport& rep, const dev::Counters& rc, int threads, double tsc_ghz);
// `results` of a recovery run: the memory it holds.
nlohmann::json recovered_results(const dev::DramBudget& dram, const dev::NvmImage& nvm);

// The measured phase, summed over the workers.
struct MeasuredRun {
  double secs = 0;
  uint64_t committed = 0, aborted = 0, retried = 0;
  std::optional<uint64_t> rolled_back;  // TPC-C's specified rollbacks (completed, in committed)
  uint64_t per_txn_of = 0;   // the transactions per_txn divides by
  std::array<uint64_t, size_t(AbortCause::kCount)> causes{};
  LatencyHistogram latency, durable_latency;
  dev::Counters traffic;     // all the workload caused, the background's share included
  dev::Counters background;  // the background threads' share (checkpointer, group commit, ...)
  bool background_measured = false;
  uint64_t hits = 0, accesses = 0;  // the engine's DRAM hits of its accesses
};
// The workers' statistics summed; `background` is the background threads' traffic in the
// window. per_txn divides by the committed transactions.
MeasuredRun sum_workers(const std::vector<ThreadStats>& stats, double secs, const dev::Counters& background);

// `results`: throughput, aborts by cause (every cause, so that they sum to `aborted`), retries,
// latency to commit and to durability, device traffic per transaction, DRAM hit rate, memory,
// the engine's own statistics.
nlohmann::json measured_results(const MeasuredRun& m, const dev::DramBudget& dram, const dev::NvmImage& nvm,
                                nlohmann::json engine, double tsc_ghz);

// Commits per transaction type into `res`: committed_by_type, throughput_by_type_tps,
// throughput_tpm, and tpmC (NewOrders completed per minute, rolled-back ones included, as
// clause 5.4 counts) when a type is named neworder. `per_thread[t][k]`: thread t's commits of
// type k (at most 8 types).
void by_type_results(nlohmann::json& res, const std::vector<std::string>& names,
                     const std::vector<std::array<uint64_t, 8>>& per_thread, double secs, uint64_t committed);

// results.numa: the measured phase's accesses by kind (DRAM/NVM x read/write), local and remote,
// totals and per committed transaction, under the run's nodes (real or virtual).
nlohmann::json numa_results(const NumaPlan& numa, const dev::Counters& c, uint64_t committed);
// Soft partition's share of transactions run on their affinity node into results.numa;
// `affine[t]`: thread t's {ran, on its affinity node, without affinity}.
void affinity_results(nlohmann::json& numa, const std::vector<std::array<uint64_t, 3>>& affine, int partitions,
                      uint64_t remapped, uint64_t overflow);

// results.time_breakdown_s (--time-breakdown): worker thread-seconds in the measured phase,
// summed over workers; `cycles[t]`: thread t's TSC cycles {total, snapshot, status, access}.
nlohmann::json time_breakdown_json(const std::vector<std::array<uint64_t, 4>>& cycles, double tsc_ghz);

// `timeline` (--timeline-ms): throughput per interval from the committed counts sampled at
// each interval's end; with Zen+'s exclusive-stage samples {entries so far, on}, an interval is
// marked when the stage was on at either end or was entered within it.
nlohmann::json timeline_json(const std::vector<uint64_t>& committed_at, int interval_ms,
                             const std::vector<std::pair<uint64_t, bool>>& stages);

}  // namespace nvt

// The engine contract. An engine owns where tuples live, what a commit must persist and how a
// restart recovers. It is a class template over the CC method (so the CC's per-tuple Meta is
// placed by the engine) offering:
//   static constexpr const char* name;
//   template <class CC> static constexpr bool supports;   checked at compile time
//   Engine(EngineEnv&, std::vector<TableInfo>)   create tables and indexes in a fresh image
//   struct Thread;                      per-worker state (logs, buffers, counters)
//   Thread& thread(int tid);
//   void load(Thread&, uint32_t table, uint64_t key, const char* image)
//   bool lookup(Thread&, uint32_t table, uint64_t key, RowRef&)
//   uint64_t persist(Thread&, Access*, size_t)   the commit's persistence protocol, after CC
//                                     validation with the writes still exclusive
//   void install(Thread&, Access&)    make a written image the tuple's current one
//   void committed(Thread&)           after the installs, before the CC releases
//   void release(Thread&, Access*, size_t)   after commit or abort: unpin what lookup pinned
//   static uint64_t nvm_bytes(tables, EngineOptions)   image size the engine needs
//   static pair<uint64_t,uint64_t> hit_counts(const Thread&)   (cache hits, tuple accesses)
//   const TableInfo& table_info(uint32_t)
//   void after_load() / start() / stop()   phases (checkpoints, background services)
//   RecoveryReport recover(int threads)    rebuild from the NVM image in a fresh process
//   bool read_current(uint32_t table, uint64_t key, char* out, uint64_t& version)   checkers
//   nlohmann::json check()           invariants after recovery: {violations, examples}
//   nlohmann::json stats()           cache hits, memory by kind, engine-specific numbers
#pragma once
#include <chrono>
#include <concepts>
#include <cstdint>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "storage/access.h"
#include "storage/device/dram_budget.h"
#include "storage/device/nvm_image.h"
#include "storage/schema.h"

namespace nvt {

struct EngineOptions {
  int threads = 1;
  uint64_t log_bytes = 64ull << 20;  // MMDB: redo log per thread
  bool checkpoint_after_load = true; // MMDB: the checkpoint recovery starts from
  double checkpoint_log_fill = 0.5;  // MMDB: fuzzy checkpoint when a log is this full
  int group_commit_us = 100;         // WBL: group-commit interval
  // Zen+: its adaptive execution for long-running transactions (storage/engines/zen/lrt.h), Zen
  // with a multi-version CC method only; off: Zen as zen-vldb21 describes it.
  bool zen_plus = false;
  double lrt_alpha = 0.95;           // share of a Met-Cache region
  double lrt_beta = 0.05;            // share of the NVM page pool
  uint64_t lrt_gamma = 0;            // tuples; 0 = the paper's 16 M scaled by the database
  // FOEDUS (storage/engines/foedus/)
  uint32_t page_size = 4096;         // bytes per page, volatile and snapshot
  int epoch_ms = 20;                 // epoch length (group commit)
  int gleaner_interval_ms = 1000;    // log gleaner period (it also runs under DRAM pressure)
  bool snapshot_cache = true;        // off: every snapshot page read goes to NVM
  int gleaner_mappers = 1;
  int gleaner_reducers = 1;
  // NVCaracal (storage/engines/nvcaracal/): the epoch, the persistent row, the switches, and
  // what the benchmark declares per transaction (the transient pool and input log are sized
  // from them).
  uint64_t nvc_epoch_txns = 100000;
  uint32_t nvc_row_bytes = 256;
  bool nvc_minor_gc = true;
  bool nvc_cached_versions = true;
  bool nvc_input_log = true;
  std::string nvc_design = "nvcaracal";
  uint64_t nvc_cache_epochs = 20;    // K: a cached version unused for K epochs is evicted
  uint64_t nvc_txn_writes = 16;      // most declared writes of one transaction
  uint64_t nvc_write_value_bytes = 1024;  // largest value written
  uint64_t nvc_txn_value_bytes = 0;  // most value bytes one transaction writes (0: writes x largest)
  uint64_t nvc_txn_input_words = 64; // most input words of one transaction
};

struct EngineEnv {
  dev::NvmImage& nvm;
  dev::DramBudget& dram;
  EngineOptions opt;
};

// CC methods written against one engine's own layout (MCSI and PGSI walk nvmvcc's version
// chains) declare `static constexpr bool kNvMvcc = true`; every other engine refuses them.
template <class C>
inline constexpr bool needs_nvmvcc = requires { C::kNvMvcc; };
// Likewise FOEDUS's OCC with its pointer set (`foedus`) works on the FOEDUS engine's dual
// pointers only, and that engine admits no other method.
template <class C>
inline constexpr bool needs_foedus = requires { C::kFoedus; };
// Caracal's deterministic method (`caracal`) is the nvcaracal engine's own epoch protocol: it
// declares `kCaracal`, and every other engine refuses it.
template <class C>
inline constexpr bool needs_caracal = requires { C::kCaracal; };

// An engine that offers inserts, deletes and ordered scans (insert, undo_insert, scan_keys behind
// TxnManager::insert/remove/scan; `visible` is optional: nvmvcc's snapshots decide visibility in
// the CC). The workloads that need them (TPC-C, YCSB D and E) run only on such an engine:
// rundb.cpp refuses them by name on any other (mmdb, zen and nvmvcc all offer them today).
template <class E>
concept offers_inserts = requires(E& e, typename E::Thread& th, RowRef& ref, Access& a, std::vector<uint64_t>& keys) {
  { e.insert(th, uint32_t(0), uint64_t(0), ref) } -> std::same_as<bool>;
  e.undo_insert(th, a);
  e.scan_keys(uint32_t(0), uint64_t(0), uint64_t(0), size_t(0), keys, false);
};

// The CPU time of every thread of the process so far (user and system): a recovery step's CPU
// time against its wall time says whether its threads worked or waited (nothing else runs
// during a recovery).
inline double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Time per recovery step, in order, for the output's `recovery` object.
struct RecoveryReport {
  std::vector<std::pair<std::string, double>> steps;
  std::vector<std::pair<std::string, double>> cpu;  // each step's CPU time, all threads together
  uint64_t rows = 0;
  uint64_t replayed = 0;  // log records (or tuples) applied
  // The engine's own counts of how its recovery went (pieces of a log, pieces parsed again).
  std::vector<std::pair<std::string, uint64_t>> counts;
  std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
  double cpu_since = process_cpu_s();

  // End a step: the time since the previous step ended (or since the report was made).
  void lap(const char* step) {
    auto now = std::chrono::steady_clock::now();
    const double c = process_cpu_s();
    steps.push_back({step, std::chrono::duration<double>(now - since).count()});
    cpu.push_back({step, c - cpu_since});
    since = now;
    cpu_since = c;
  }
  // End a step that the code timed itself, `s` seconds and `cpu_s` of CPU from the previous
  // step's end (a part of one call: the gleaner's stages); the next lap() starts where it ended.
  void part(const char* step, double s, double cpu_s) {
    steps.push_back({step, s});
    cpu.push_back({step, cpu_s});
    since += std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
    cpu_since += cpu_s;
  }
};

// Bytes for per-thread private data (transaction buffers) charged before caches are sized.
constexpr uint64_t kPrivateBytesPerThread = 256ull << 10;

}  // namespace nvt

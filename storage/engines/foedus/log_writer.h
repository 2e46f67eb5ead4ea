// FOEDUS's log writer (foedus-sigmod15 section 6.1): a background thread that advances the
// global epoch every --epoch-ms and, in each pass, copies what every worker's log buffer holds
// into that worker's log file in NVM (a ring addressed by LSN), with one flush pass over the
// batch and one fence, then persists the durable-epoch marker (a second fence). The durable
// epoch is the largest epoch below every running transaction's epoch whose records were all
// copied, so a transaction is acknowledged once its epoch is durable.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "storage/device/nvm_image.h"
#include "storage/engines/foedus/log_buffer.h"
#include "storage/engines/foedus/metadata.h"

namespace nvt::foedus {

// What a worker shares with the log writer: its buffer and the epoch of its running transaction
// (0 while it runs none; it never commits below it).
struct WorkerLog {
  explicit WorkerLog(char* mem, uint64_t cap) : buf(mem, cap) {}
  LogBuffer buf;
  alignas(64) std::atomic<uint64_t> active_epoch{0};
};

class LogWriter {
 public:
  LogWriter(MetaArea* meta, std::vector<dev::Region> files, std::vector<WorkerLog*> workers, int epoch_ms);
  ~LogWriter() { stop(); }

  void start();
  void stop();
  // Tests: the thread dies as with the power, without a last pass.
  void halt();
  // One batch: drain every buffer, fence, persist the marker. Also what sync() runs when the
  // thread is not started (unit tests).
  void pass();

  uint64_t durable_epoch() const { return durable_.load(std::memory_order_acquire); }
  uint64_t durable_tsc() const { return durable_tsc_.load(std::memory_order_relaxed); }
  bool running() const { return running_.load(std::memory_order_acquire); }

  // The gleaner's view of log `i`: its ring, where gleaning stopped, what the marker covers.
  char* file(size_t i) const { return files_[i].base; }
  uint64_t file_bytes(size_t i) const { return files_[i].size; }
  uint64_t marker_lsn(size_t i) const { return marker_lsn_[i].load(std::memory_order_acquire); }
  uint64_t gleaned(size_t i) const { return gleaned_[i].load(std::memory_order_acquire); }
  void set_gleaned(size_t i, uint64_t lsn) { gleaned_[i].store(lsn, std::memory_order_release); }
  size_t logs() const { return files_.size(); }
  // Restart: continue from the recovered state.
  void reset(uint64_t epoch, const std::vector<uint64_t>& lsn);
  // A log whose file is more than half full since the last gleaning asks for the gleaner.
  bool wants_gleaning() const;
  // Advance the global epoch at the next pass instead of at the next --epoch-ms tick (FOEDUS
  // advances it on demand for a waiter, as its wait_for_commit does): the gleaner asks for it
  // under DRAM pressure, where a page written in the running epoch cannot be dropped yet.
  void advance_soon() { advance_asked_.store(true, std::memory_order_release); }

  struct Stats {
    uint64_t passes = 0, batches = 0, bytes = 0, stalls = 0;
    uint64_t records = 0;  // log records written to the files (Table 3's log writer throughput)
    uint64_t advances = 0, asked_advances = 0;  // epoch advances; those advance_soon() asked for
    double busy_s = 0;
  };
  Stats stats() const;

 private:
  void loop();
  void write_marker(uint64_t epoch);

  MetaArea* meta_;
  std::vector<dev::Region> files_;
  std::vector<WorkerLog*> workers_;
  int epoch_ms_;
  std::mutex mu_;  // one pass at a time
  std::vector<uint64_t> tail_;  // per log: LSN written
  std::unique_ptr<std::atomic<uint64_t>[]> marker_lsn_, gleaned_;
  std::atomic<uint64_t> durable_{0}, durable_tsc_{0};
  uint64_t marker_seq_ = 0;
  std::chrono::steady_clock::time_point last_advance_;
  std::atomic<bool> running_{false}, advance_asked_{false};
  std::thread thread_;
  mutable std::mutex stats_mu_;
  Stats stats_;
};

}  // namespace nvt::foedus

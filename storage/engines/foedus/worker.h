// A FOEDUS worker thread's private state: its log buffer (section 6), the read/write sets a
// transaction keeps beyond the CC's (6.1, D.3: the node set and the pointer set of scans and
// absent keys), copies of the snapshot records it read, and its counters.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "storage/access.h"
#include "storage/device/dram_budget.h"
#include "storage/engines/foedus/dual_pointer.h"
#include "storage/engines/foedus/log_writer.h"

namespace nvt::foedus {

struct Worker {
  WorkerLog* log = nullptr;
  uint64_t commit_epoch = 0;
  AbortCause refusal = AbortCause::None;
  uint64_t drop_pass_seen = 0;  // the gleaner's drop passes when a volatile page was refused
  // Counters, monotonic; written by the worker alone, read by begin_measure() while it runs.
  struct Count {
    std::atomic<uint64_t> n{0};
    void operator++(int) { *this += 1; }
    void operator+=(uint64_t k) { n.store(n.load(std::memory_order_relaxed) + k, std::memory_order_relaxed); }
    operator uint64_t() const { return n.load(std::memory_order_relaxed); }
  };
  Count volatile_reads, snapshot_reads, cache_hits, cache_misses, installs;
  Count miss_bytes;  // NVM bytes the cache misses read (as the device model counted them)
  Count dram_waits, dram_wait_ns;  // waits for the gleaner's drop pass after a refused page
  // Ordered trees: the node set (page versions a scan or a lookup that found no key relied
  // on, and the TID words of absent records it passed over) and the dual pointers a scan
  // followed into the snapshot world; validate() checks both. `inserted`: this transaction's
  // own inserts' words (never watched).
  std::vector<std::pair<std::atomic<uint64_t>*, uint64_t>> node_set;
  std::vector<const DualPointer*> scan_ptrs;
  std::vector<const std::atomic<uint64_t>*> inserted;
  // Copies of snapshot records handed to the CC, valid until release(), and a snapshot page
  // read without the cache: charged to the ledger (foedus.thread_copies) as they grow.
  static constexpr size_t kChunk = 64 << 10;
  static constexpr const char* kCopies = "foedus.thread_copies";
  dev::DramBudget* dram = nullptr;
  uint64_t charged = 0;
  std::vector<std::unique_ptr<char[]>> chunks;
  size_t chunk = 0, used = 0;
  std::vector<char> page;
  void grow(size_t bytes, bool charge = true) {
    if (charge) dram->charge(bytes, kCopies), charged += bytes;
    chunks.emplace_back(new char[bytes]);
  }
  char* copy_space(uint32_t len) {
    if (chunks.empty() || used + len > kChunk) {
      if (!chunks.empty()) chunk++, used = 0;
      if (chunk == chunks.size()) grow(std::max<size_t>(kChunk, len));
    }
    char* p = chunks[chunk].get() + used;
    used += (len + 7) / 8 * 8;
    return p;
  }
};

}  // namespace nvt::foedus

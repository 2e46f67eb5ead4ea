// Failure recovery in a fresh process (nvcaracal-eurosys23 sections 4.3 and 4.5): the pools
// back to the last committed epoch, every persistent row scanned (a run of blocks at a time, on
// every thread) to rebuild the index, the crashed epoch's versions reverted. The driver then
// replays the crashed epoch from the input logs (system/deterministic_run.h).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "storage/engines/nvcaracal/nvcaracal.h"

namespace nvt::nvc {

template <class CC>
auto NvCaracal<CC>::recover_state(int threads, RecoveryReport& rep) -> Recovered {
  Recovered out;
  dev::read(control_, sizeof(Control));
  if (control_->committed.magic != Control::kMagic)
    throw std::runtime_error("no complete load in the image: it holds no committed epoch (power failed while loading?)");
  out.committed = control_->committed.value;
  out.logged = control_->logged.magic == Control::kMagic ? control_->logged.value : 0;
  epoch_ = out.committed;
  for (int t = 0; t < threads_; t++) {
    row_pool_[size_t(t)].restore(out.committed);
    if (val_pool_[size_t(t)].capacity()) val_pool_[size_t(t)].restore(out.committed);
  }
  // Blocks already on a free list (a GC of the crashed epoch made durable): not freed twice.
  for (auto& p : val_pool_)
    if (p.capacity())
      for (uint64_t b : p.free_set()) recovered_free_.insert(b);
  rep.lap("restore_pools");
  std::atomic<uint64_t> nrows{0};
  std::atomic<uint32_t> bad_table{0};
  // The blocks on any core's free list (a dropped insert goes to the list of the core that
  // dropped it, which may not own the block).
  std::unordered_set<uint64_t> freed;
  for (auto& p : row_pool_)
    for (uint64_t b : p.free_set()) freed.insert(b);
  // Every core's pool in runs of kRecoveryBlocks blocks, taken in turn by every recovery thread;
  // each run keeps the rows it found, what to revert and what to collect, handed to its core
  // below. Rows then take their slots in run order (each run a range per table from a prefix
  // sum, no shared counter) and enter the index, again a run at a time on every thread.
  struct Found {
    uint32_t table, len;
    uint64_t key;
    char* prow;
    bool gc;
  };
  struct Run {
    int core;
    uint64_t lo, hi;
    std::vector<Found> found;
    std::vector<uint64_t> base;  // per table: the run's first slot
    std::vector<std::pair<char*, RowHeader>> revert;
    std::vector<Row*> gc_now;
  };
  std::vector<Run> runs;
  for (int t = 0; t < threads_; t++)
    for (uint64_t lo = 0; lo < row_pool_[size_t(t)].bump(); lo += kRecoveryBlocks)
      runs.push_back({t, lo, std::min(row_pool_[size_t(t)].bump(), lo + kRecoveryBlocks), {}, {}, {}, {}});
  auto each_run = [&](auto&& f) {
    std::atomic<size_t> next{0};
    parallel(std::max(1, threads), [&](int) {
      for (size_t k; (k = next.fetch_add(1)) < runs.size();) f(runs[k]);
    });
  };
  each_run([&](Run& run) {
    const int t = run.core;
    BlockPool& p = row_pool_[size_t(t)];
    run.base.assign(tables_.size(), 0);
    for (uint64_t i = run.lo; i < run.hi; i++) {
      char* prow = p.block(i);
      if (freed.count((uint64_t(t) << kRefCoreShift) | i)) continue;
      RowHeader hd;
      dev::read(prow, sizeof hd);
      memcpy(&hd, prow, sizeof hd);
      if (hd.live != kLive || (!hd.sid[0] && !hd.sid[1])) continue;
      // A row whose oldest version is the crashed epoch's was inserted by it: not a row.
      if (hd.sid[0] && epoch_of(hd.sid[0]) > out.committed) continue;
      bool fix = repair(hd);  // a crash inside a header change (eADR: store by store)
      if (hd.sid[1] && epoch_of(hd.sid[1]) > out.committed) {  // the crashed epoch's version
        hd.sid[1] = 0;
        hd.ref[1] = 0;
        fix = true;
      }
      if (fix) run.revert.push_back({prow, hd});
      if (hd.table >= tables_.size()) {  // not a row of this layout: reported after the scan
        bad_table = hd.table;
        continue;
      }
      bool two = hd.sid[1] && epoch_of(hd.sid[1]) <= out.committed;
      // A committed tombstone: the row reads as absent until the first major GC frees it.
      bool gc = two && (is_tombstone(hd.ref[1]) || !minor_gc_ || !is_inline(hd.ref[0]));
      run.found.push_back({hd.table, hd.len, hd.key, prow, gc});
      run.base[hd.table]++;
    }
  });
  if (bad_table) throw std::runtime_error("NVCaracal: a row block names table " + std::to_string(bad_table.load()) + " of " + std::to_string(tables_.size()));
  for (uint32_t tb = 0; tb < tables_.size(); tb++) {  // counts -> first slots, in run order
    uint64_t next = slots_[tb]->load();
    for (Run& run : runs) next += std::exchange(run.base[tb], next);
    if (next > tables_[tb].capacity) throw std::runtime_error("table " + tables_[tb].name + " is full (" + std::to_string(tables_[tb].capacity) +
                               " rows; TPC-C: raise --tpcc-new-orders)");
    slots_[tb]->store(next);
  }
  each_run([&](Run& run) {
    for (const Found& f : run.found) {
      Row* r = place_row(f.table, f.key, f.prow, f.len, run.base[f.table]++);
      if (f.gc) run.gc_now.push_back(r);
    }
    nrows += run.found.size();  // once a run: a shared counter bumped per row bounced between the cores
  });
  for (Run& run : runs) {  // in each core's block order, as one thread per core found them
    auto& gc = th_[size_t(run.core)].gc_now;
    gc.insert(gc.end(), run.gc_now.begin(), run.gc_now.end());
  }
  out.rows = nrows.load();
  rep.rows = out.rows;
  rep.lap("scan_rows_rebuild_index");
  for (Run& run : runs)
    for (auto& [prow, hd] : run.revert) {  // the crashed epoch's version goes; the checkpointed one stays
      store_header(reinterpret_cast<RowHeader*>(prow), hd);
      dev::flush(prow, sizeof hd);
      out.reverted++;
    }
  dev::fence();
  rep.lap("revert");
  return out;
}

}  // namespace nvt::nvc

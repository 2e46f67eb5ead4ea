// Dual pages (foedus-sigmod15 section 4): a worker reads a snapshot page through the snapshot
// cache (7.6) or straight from NVM, and installs a volatile page, a copy of the snapshot page,
// where it writes. Taking volatile pages is what fills DRAM: past kPressure, or with none left,
// it wakes the gleaner, whose drop pass (7.5) frees them.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>

#include "storage/device/device.h"
#include "storage/engines/foedus/dual_pointer.h"
#include "storage/engines/foedus/page.h"
#include "storage/engines/foedus/snapshot_area.h"
#include "storage/engines/foedus/snapshot_cache.h"
#include "storage/engines/foedus/volatile_pool.h"
#include "storage/engines/foedus/worker.h"

namespace nvt::foedus {

struct DualPages {
  // The gleaner runs when the volatile pool is this full (DRAM pressure).
  static constexpr double kPressure = 0.5;

  SnapshotArea* area = nullptr;
  VolatilePool* pool = nullptr;
  SnapshotCache* cache = nullptr;  // null: FOEDUS-NoSC
  uint32_t ps = 4096;
  std::function<void()> wake_gleaner;
  const std::atomic<uint64_t>* drop_passes = nullptr;  // the gleaner's drop passes so far

  // A snapshot page for reading: from the cache (pinned until done) or read whole from NVM.
  template <class F>
  void with_snapshot_page(Worker& th, SnapshotPtr sp, F&& f) {
    const Page* nvm = area->page(snapshot_index(sp));
    const uint64_t read0 = dev::my_counters().nvm_read_bytes;
    if (cache) {
      SnapshotCache::Pin pin = cache->get(sp, nvm);
      (pin.hit ? th.cache_hits : th.cache_misses)++;
      if (!pin.hit) th.miss_bytes += dev::my_counters().nvm_read_bytes - read0;
      f(pin.page);
      cache->unpin(pin.frame);
    } else {
      dev::read(nvm, ps);
      memcpy(th.page.data(), nvm, ps);
      th.cache_misses++;
      th.miss_bytes += dev::my_counters().nvm_read_bytes - read0;
      f(reinterpret_cast<const Page*>(th.page.data()));
    }
  }

  // A snapshot page read directly in NVM, with no worker (checkers at quiescence).
  const Page* read_snapshot_page(SnapshotPtr sp) const {
    const Page* p = area->page(snapshot_index(sp));
    dev::read(p, ps);
    return p;
  }

  // A fresh volatile page holding a copy of snapshot page sp (null: the pool is empty).
  Page* copy_page(Worker& th, SnapshotPtr sp) {
    Page* np = pool->take();
    if (!np) {
      wake_gleaner();
      return nullptr;
    }
    with_snapshot_page(th, sp, [&](const Page* p) { memcpy(static_cast<void*>(np), p, ps); });
    th.installs++;
    if (pool->fill() > kPressure) wake_gleaner();
    return np;
  }

  // Install a volatile page at `d`, a copy of its snapshot page; a racing installer may win.
  Page* install(Worker& th, DualPointer& d) {
    Page* np = copy_page(th, d.snapshot_page.load(std::memory_order_acquire));
    if (!np) return nullptr;
    Page* expected = nullptr;
    if (!d.volatile_page.compare_exchange_strong(expected, np, std::memory_order_acq_rel)) {
      pool->give(np);
      return expected;
    }
    return np;
  }

  // No volatile page for this transaction: its retry waits for the gleaner's next drop pass.
  void refuse(Worker& th) {
    th.refusal = AbortCause::DramSpace;
    th.drop_pass_seen = drop_passes->load(std::memory_order_acquire);
    wake_gleaner();
  }
};

}  // namespace nvt::foedus

// Zen (papers/zen-vldb21.txt section 3, papers/zen-plus-journal.txt section 3): a hybrid table
// (HTable) per base table = an NVM-tuple heap in 2 MB NVM pages, a Met-Cache in DRAM and
// per-thread NVM-tuple managers; indexes and transaction-private data in DRAM.
//   Perform:  concurrency control entirely on Met-Cache entries (the CC-Meta lives there).
//   Persist:  Algorithm 1, log-free: every changed tuple to a free slot, all lines but the LP
//             tuple's header line flushed, one sfence, LP set, its line flushed, no fence after.
//   Maintain: the old versions go to a per-thread garbage queue, reclaimed into DRAM free lists
//             once no transaction can reach them; no NVM write for tuple allocation or free.
//   Recover:  Algorithm 2 per heap region, in parallel, in a fresh process.
// Supports every CC method that follows the contract (its Meta must be movable while the
// committing transaction holds it exclusively; see copy_to_own_region()).
//
// Tx-CTS: an engine-owned global counter taken in persist(), while the CC still holds the write
// set exclusively, so the versions of one tuple get increasing Tx-CTS in commit order and one
// thread's Tx-CTS only grow (what Algorithm 2 relies on). Silo's commit TID would do as well but
// is not visible to the engine.
//
// Inserts and deletes: an insert takes a Met-Cache entry marked kNew (lookups treat it as
// absent) and claims the key in the index; its first NVM-tuple is written by persist() like any
// write and has no previous version. A delete writes a tombstone NVM-tuple (deleted bit), drops
// the key from the index and kills the entry (kCopy: pins fail, CLOCK reuses it unlinked). The
// tombstone stays allocated while this process runs: older versions of its key may still sit in
// reclaimed but not yet overwritten slots, and recovery would resurrect them without it.
// Recovery invalidates those older versions, fences, and only then frees the tombstone.
//
// Durability: a commit's LP line is flushed without a fence, so it is durable at this thread's
// next fence (its next read-write commit, or sync()). Until then nothing it superseded is reused.
// A transaction counts as durable once it and every write it read are (docs/output.md): the
// driver's durable point is a watermark, below the Tx-CTS each thread has not fenced yet (one
// per thread at most), and a read-only transaction's token is the newest Tx-CTS handed out when
// it commits (whatever it read is at or below it): conservative, two loads per thread.
#pragma once
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/device/device.h"
#include "storage/device/power_fail.h"
#include "storage/engine.h"
#include "storage/engines/zen/lrt.h"
#include "storage/engines/zen/met_cache.h"
#include "storage/engines/zen/nvm_heap.h"
#include "storage/engines/zen/nvm_tuple.h"
#include "storage/engines/zen/page_manager.h"
#include "storage/engines/zen/recovery.h"
#include "storage/engines/zen/tuple_allocator.h"
#include "storage/hash_index.h"
#include "storage/parallel.h"
#include "storage/prefetch.h"
#include "storage/table_indexes.h"
#include "storage/violations.h"

namespace nvt::zen {

constexpr uint64_t kLoadCts = 1;               // Tx-CTS of loaded tuples (each is its own LP)
constexpr uint64_t kMinEntriesPerRegion = 64;  // C_min per thread: a transaction's working set
constexpr uint64_t kMinEntriesPerScanRegion = 320;  // the same with range scans (see Zen())
constexpr size_t kSharePages = 8;              // recovery: pages of a region one thread scans at a time
constexpr size_t kGcPerTxn = 64;               // garbage entries examined per transaction
constexpr size_t kGarbageThreshold = 1 << 16;  // a longer queue means a long-running transaction
constexpr uint64_t kIdleFenceAfter = 64;       // read-only commits before an unfenced LP is fenced

template <class CC>
class Zen {
 public:
  static constexpr const char* name = "zen";
  template <class C>
  static constexpr bool supports = !needs_nvmvcc<C> && !needs_foedus<C> && !needs_caracal<C>;  // not MCSI/PGSI: they need nvmvcc
  using Meta = typename CC::Meta;
  using Cache = MetCache<Meta>;
  using Entry = typename Cache::Entry;

  // Zen+: a tuple a transaction works on in NVM, past the Met-Cache (a snapshot reader's miss,
  // or the privileged transaction's once its region is used up), with a CC-Meta of its own.
  struct Direct {
    Meta meta;
    char* nvm = nullptr;
    uint64_t key = 0;
    uint32_t table = 0;
  };
  // Threads are made by copying empty ones (vector::resize); a Meta holds atomics.
  struct DirectList : std::deque<Direct> {
    DirectList() = default;
    DirectList(const DirectList&) : std::deque<Direct>() {}
  };

  struct Thread {
    int tid = 0;
    bool active = false, exclusive = false;
    bool refused = false;  // the last lookup failed for exclusive mode, not a missing key
    uint64_t hits = 0, accesses = 0, txn_accesses = 0;
    std::vector<Entry*> pinned;                       // unpinned by release()
    std::vector<std::pair<Access*, char*>> written;   // persist() -> install(): new NVM-tuples
    std::deque<Garbage> garbage;
    std::vector<uint32_t> regions;  // heap regions this thread writes; its own one last
    std::vector<uint64_t> hand;     // CLOCK hand per HTable
    std::vector<uint32_t> need;     // persist(): slots per HTable
    std::vector<Garbage> tombstones;  // held until recovery (see the header comment)
    uint64_t min_cts = 0, ro_since_fence = 0;
    uint64_t durable_token = 0;  // commit_token(): the last commit's Tx-CTS, or a reader's bound
    uint64_t copies = 0, foreign_in_place = 0, reclaimed = 0, idle_fences = 0;
    uint64_t copy_evictions = 0;  // live entries a copy evicted (a Met-Cache smaller than the table)
    // Zen+ (lrt.h): a snapshot reader (its CC reads below every running writer); tuples the
    // aborted attempts of this transaction accessed (condition 3); committed (not wasted); the
    // page count seen last (condition 2 looks when pages were taken); tuples worked on in NVM.
    bool snapshot = false, done = false;
    // G-EX was held when this attempt began; this attempt ends keeping G-EX for its retry.
    bool gex_from_begin = false, gex_restart = false;
    uint64_t wasted = 0, pages_seen = 0;
    DirectList direct;
    std::vector<uint8_t> region_full;  // the privileged transaction used its region up (per table)
    std::chrono::steady_clock::time_point short_since{};  // reserve() first found no room
  };

  // The NVM-tuple heap's pages (nvm_heap.h) and its allocator's DRAM.
  static uint64_t heap_pages(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    return NvmHeap::pages_for(tables, o.threads, slot_bytes);
  }
  static uint64_t metadata_bytes(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    return NvmHeap::allocator_bytes(tables, o.threads, slot_bytes);
  }
  static uint64_t nvm_bytes(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    uint64_t p = heap_pages(tables, o);
    return NvmHeap::nvm_bytes(p) + (ZEN_NAIVE_ALLOC ? p * kPageBytes / 256 : 0) + (8ull << 20);
  }
  static std::pair<uint64_t, uint64_t> hit_counts(const Thread& th) { return {th.hits, th.accesses}; }

  Zen(EngineEnv& env, const std::vector<TableInfo>& tables)
      : env_(env), nthreads_(env.opt.threads), shared_(new Shared[size_t(env.opt.threads)]),
        lrt_(LrtSettings{env.opt.zen_plus && kKeepsHistory, env.opt.lrt_alpha, env.opt.lrt_beta, env.opt.lrt_gamma},
             total_rows(tables)) {
    if (tables.size() > kMaxTables) throw std::invalid_argument("zen: too many tables");
    std::vector<uint32_t> strides;
    for (uint32_t i = 0; i < tables.size(); i++) {
      auto t = std::make_unique<Table>();
      t->len = tables[i].schema.tuple_size();
      t->make_indexes(tables[i], env.dram);
      strides.push_back(slot_bytes(t->len));
      tables_.push_back(std::move(t));
    }
    // Default persist order (journal section 3.3.4): table names, lexicographically.
    std::vector<uint32_t> order(tables.size());
    for (uint32_t i = 0; i < order.size(); i++) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return tables[a].name < tables[b].name; });
    set_persist_order(order);

    env.dram.charge(kPrivateBytesPerThread * uint64_t(nthreads_), "private");
    // Heap regions: one per thread of any run of this image (nvm_heap.h).
    heap_ = std::make_unique<NvmHeap>(env.nvm, heap_pages(tables, env.opt), "zen", strides, nthreads_,
                                      ZEN_NAIVE_ALLOC, "zen: NVM heap full (raise --nvm-size)");
    // NUMA-local write (journal 4.2.2): each region's pages from its writer's node.
    if (dev::per_node_pools(dev::g_model.placement) && dev::g_model.nodes > 1) heap_->pages().place_by_writer(nthreads_);
    // Allocator metadata: at most one free-list pointer per heap slot.
    env.dram.charge(metadata_bytes(tables, env.opt), "zen.allocator");

    // Met-Cache: the DRAM for data (database / P), within what indexes, private data and
    // allocator metadata left of the budget; the allowances never become cache.
    // C_min per region: a transaction's working set. A database with ordered (scanned) tables
    // has transactions that pin a scan's worth of one table (TPC-C's StockLevel: 300 order
    // lines, then up to 300 stock rows; Delivery about 100 order lines).
    uint64_t min_entries = kMinEntriesPerRegion;
    for (auto& t : tables_)
      if (t->info.ordered) min_entries = kMinEntriesPerScanRegion;
    std::vector<CacheDemand> d;
    for (auto& t : tables_) {
      uint64_t min = min_entries * uint64_t(nthreads_);
      // Enough to hold the whole table: plus a quarter with several regions, as each region
      // holds what its own thread brought in and copied, which is never exactly 1/threads.
      uint64_t whole = t->info.capacity + (nthreads_ > 1 ? t->info.capacity / 4 : 0) + min;
      // And, where the budget has room once every table is whole, up to the whole table in
      // each region: a thread fills only its own region, so one that runs while the others
      // stall (descheduled on a busy host) would otherwise thrash half the table in DRAM.
      uint64_t spread = (t->info.capacity + min_entries) * uint64_t(nthreads_);
      d.push_back({1.0, t->info.capacity * t->len, Cache::entry_bytes(t->len), min, whole, spread});
    }
    std::vector<uint64_t> plan = plan_cache(env.dram.data_left(), d, env.dram.left());
    for (size_t i = 0; i < tables_.size(); i++)
      tables_[i]->cache = std::make_unique<Cache>(tables_[i]->len, plan[i] / uint64_t(nthreads_),
                                                  nthreads_, env.dram, "metcache." + tables_[i]->info.name);

    threads_.resize(size_t(nthreads_));
    for (int t = 0; t < nthreads_; t++) {
      Thread& th = threads_[size_t(t)];
      th.tid = t;
      th.regions = heap_->regions_of(t);
      th.hand.assign(tables_.size(), 0);
      th.need.assign(tables_.size(), 0);
      th.region_full.assign(tables_.size(), 0);
    }
  }

  Thread& thread(int tid) { return threads_.at(size_t(tid)); }
  size_t tables() const { return tables_.size(); }
  const TableInfo& table_info(uint32_t t) const { return tables_[t]->info; }

  // Persist order for several tables: LP goes on a tuple of the first table written, recovery
  // scans the tables in this order. `order` lists table ids, first first.
  void set_persist_order(const std::vector<uint32_t>& order) {
    if (order.size() != tables_.size()) throw std::invalid_argument("zen: persist order must name every table");
    for (size_t i = 0; i < order.size(); i++) tables_.at(order[i])->rank = uint32_t(i);
  }

  void load(Thread& th, uint32_t table, uint64_t key, const char* image) {
    Table& t = *tables_[table];
    HeapRegion& r = heap_->region(size_t(th.tid));
    char* slot = take(th, r, table);
    NvmTuple* n = NvmTuple::at(slot);
    n->id_word = NvmTuple::make_id(table, key);
    memcpy(n->data(), image, t.len);
    n->set_cts(kLoadCts, true);  // each loaded tuple is its own committed transaction
    r.set_lp(table, slot);
    t.index_loaded(key, nvm_value(slot));
    t.order_key(key);
  }

  // Claim `key` for an insert (see the header comment). False: the key is present or being
  // inserted, or this transaction must abort (exclusive mode, Met-Cache region exhausted).
  bool insert(Thread& th, uint32_t table, uint64_t key, RowRef& ref) {
    if (!enter(th)) return false;
    Table& t = *tables_[table];
    th.accesses++;
    shared_[th.tid].accessed.store(++th.txn_accesses, std::memory_order_relaxed);
    if (t.index->lookup(key) != HashIndex::kNoValue) return false;
    Entry* e = victim(th, table);
    if (!e) return false;
    Cache::clear_for_insert(e, key, table, t.len);
    new (&e->meta) Meta();
    e->state.store(1 | kClock | kNew, std::memory_order_release);
    if (!t.index->insert(key, reinterpret_cast<uint64_t>(e))) {
      e->state.store(kFree, std::memory_order_release);
      return false;
    }
    return pinned(th, e, ref);
  }
  // The inserting transaction aborted: the key leaves the index, the entry dies.
  void undo_insert(Thread&, Access& a) {
    Entry* e = static_cast<Entry*>(a.row.handle);
    tables_[a.table]->index->remove(a.key);
    e->state.fetch_or(kCopy, std::memory_order_acq_rel);
  }
  // After the CC granted an access: false if the tuple was deleted meanwhile.
  bool visible(const Access& a) const {
    if (as_direct(a.row.handle)) return true;  // read in NVM: the version the CC took
    return Cache::visible(static_cast<Entry*>(a.row.handle), a.type == AccessType::Insert);
  }
  void scan_keys(uint32_t table, uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out,
                 bool reverse) const {
    tables_.at(table)->scan(lo, hi, limit, out, reverse);
  }

  // The Met-Cache entries (or NVM-tuples) `keys` name on their way into the cache
  // (storage/prefetch.h). A cache miss still pays its NVM read when lookup() copies the tuple.
  void prefetch(uint32_t table, const uint64_t* keys, size_t n) const {
    const Table& t = *tables_[table];
    prefetch_batch(*t.index, keys, n, [&](uint64_t v) {
      if (is_nvm_value(v)) return std::pair<const void*, size_t>(nvm_of(v), slot_bytes(t.len));
      return std::pair<const void*, size_t>(reinterpret_cast<const void*>(v), Cache::entry_bytes(t.len));
    });
  }

  // The transaction manager's begin: whether the CC reads this transaction at a snapshot below
  // every running writer (Cicada's read-only transactions). Zen+ serves its misses from NVM.
  void begin(Thread& th, bool snapshot) {
    th.snapshot = snapshot && lrt_.adaptive();
    // Condition 3, as a retry begins: its aborted attempts accessed more than gamma tuples.
    if (lrt_.adaptive() && lrt_.holder() < 0 && lrt_.over_gamma(th.wasted)) lrt_.take(th.tid, LrtCondition::Gamma);
    th.gex_from_begin = lrt_.holder() == th.tid;
  }
  // Zen+ asks MVCC and HEKATON to read read-only transactions at a snapshot (mv::snapshot_read).
  bool snapshot_readers() const { return lrt_.adaptive(); }

  bool lookup(Thread& th, uint32_t table, uint64_t key, RowRef& ref) {
    th.refused = true;
    if (!enter(th)) return false;  // another transaction runs in exclusive mode: abort
    Table& t = *tables_[table];
    th.accesses++;
    shared_[th.tid].accessed.store(++th.txn_accesses, std::memory_order_relaxed);
    if (lrt_.adaptive() && !detect(th, table)) return false;
    th.refused = false;
    // A long snapshot reader's misses read in NVM are bounded by the evicted history (direct()):
    // from now on no entry written after that bound is evicted (keep()), so it stays below the
    // reader's snapshot. (Short readers are left out: they would pin the cache's recent writes.)
    if (th.snapshot && th.txn_accesses == kMinEntriesPerRegion)
      shared_[th.tid].snapshot_bound.store(history_bound().wts + 1, std::memory_order_seq_cst);
    for (;;) {
      uint64_t v;
      if (Entry* e = Cache::pin_indexed(*t.index, key, v)) {  // cached, in any region
        th.hits++;
        return pinned(th, e, ref);
      }
      if (v == HashIndex::kNoValue) return false;
      // Zen+: a snapshot reader's miss is read in NVM, consuming no Met-Cache entry.
      if (th.snapshot) return direct(th, table, key, v, ref);
      // Miss: bring the NVM-tuple into this thread's region, enhanced with a fresh CC-Meta.
      Entry* e = victim(th, table, true);
      if (!e && th.exclusive && lrt_.adaptive()) return direct(th, table, key, v, ref);
      if (!e) return th.refused = true, false;  // region exhausted, another one got G-EX: abort
      fill(e, t, table, key, nvm_of(v));
      if (t.index->update(key, v, reinterpret_cast<uint64_t>(e))) return pinned(th, e, ref);
      e->state.store(kFree, std::memory_order_release);  // another thread cached it first
    }
  }

  // Room in the thread's heap regions for a transaction's writes (NvmHeap::reserve()).
  bool reserve(Thread& th, const Access* acc, size_t n) {
    return heap_->reserve(th.regions, th.need, acc, n, th.short_since, [&] { reclaim(th, ~size_t(0)); }, [&] {
      // Zen+'s condition 2 where the heap has no page left for this commit.
      PageManager& pm = heap_->pages();
      if (lrt_.adaptive() && lrt_.holder() < 0 && lrt_.under_beta(pm.pages() - pm.used(), pm.pages()))
        request_exclusive(LrtCondition::Beta);
    });
  }

  // Algorithm 1 (persist.h). Returns the Tx-CTS (0 for a read-only transaction).
  uint64_t persist(Thread& th, Access* acc, size_t n);

  // Commit-to-durable latency without blocking the worker (system/driver.h): a commit is
  // durable once durable_point() reaches its token; the point is the largest Tx-CTS below every
  // thread's unfenced one (the newest handed out when none waits), seen now.
  uint64_t commit_token(const Thread& th) const { return th.durable_token; }
  std::pair<uint64_t, uint64_t> durable_point() const;  // persist.h

  void sync(Thread& th);  // this thread's last commit durable (persist.h)

  void install(Thread& th, Access& a) {
    char* slot = nullptr;
    for (auto& [acc, s] : th.written)
      if (acc == &a) slot = s;
    if (!slot) throw std::logic_error("zen: install of a write persist() did not see");
    Table& t = *tables_[a.table];
    if (Direct* d = as_direct(a.row.handle)) {
      // The privileged transaction wrote a tuple it holds in NVM: the index goes from the old
      // NVM-tuple to the new one (no Met-Cache entry involved).
      if (a.type == AccessType::Delete) {
        t.drop_key(a.key);
        th.tombstones.push_back({slot, a.table, a.version});
      } else if (!t.index->update(a.key, nvm_value(d->nvm), nvm_value(slot))) {
        throw std::logic_error("zen: NVM-tuple written in the exclusive stage was not indexed");
      }
      th.garbage.push_back({d->nvm, a.table, a.version});
      lrt_.direct_write();
      return;
    }
    Entry* e = static_cast<Entry*>(a.row.handle);
    char* old = e->nvm;
    if (a.type == AccessType::Delete) {
      t.drop_key(a.key);
      Cache::kill(e, slot, a.version);
      th.garbage.push_back({old, a.table, a.version});
      th.tombstones.push_back({slot, a.table, a.version});
      return;
    }
    if (a.type == AccessType::Insert) {
      Cache::install(e, a.local, a.len, slot, a.version, kNew);
      t.order_key(a.key);
      return;  // no previous version
    }
    bool foreign = t.cache->region_of(e) != th.tid;
    if (!(foreign && copy_to_own_region(th, t, a, e, slot))) {
      Cache::install(e, a.local, a.len, slot, a.version);
      th.foreign_in_place += foreign;
    }
    // The previous version is garbage once no running transaction can reach it.
    th.garbage.push_back({old, a.table, a.version});
  }

  void committed(Thread& th) { th.done = true; }

  // For the driver's timeline: Zen+'s exclusive-stage entries so far, and whether it is on.
  std::pair<uint64_t, bool> exclusive_sample() const { return lrt_.sample(); }

  void release(Thread& th, Access*, size_t) {
    // Pins are tracked here rather than through the accesses: the transaction manager drops an
    // access whose CC read failed, after lookup() pinned its entry.
    for (Entry* e : th.pinned) Cache::unpin(e);
    th.pinned.clear();
    th.written.clear();
    // The CC-Metas of tuples worked on in NVM go as an evicted entry's do (see unlink()).
    for (Direct& d : th.direct) publish_history(th, d.meta);
    th.direct.clear();
    if (th.snapshot) shared_[th.tid].snapshot_bound.store(0, std::memory_order_release), th.snapshot = false;
    if (th.active) {
      Shared& sh = shared_[th.tid];
      sh.active_since.store(0, std::memory_order_seq_cst);
      sh.accessed.store(0, std::memory_order_relaxed);
      th.active = false;
      // Condition 3 counts the tuples of every attempt that did not commit.
      if (th.done) th.wasted = 0;
      else th.wasted += th.txn_accesses, lrt_.wasted(th.txn_accesses);
      th.txn_accesses = 0;
    }
    th.done = false;
    if (th.exclusive) {
      end_exclusive(th);  // Zen's exclusive mode as Zen+'s stage: it reclaims what it held back
      th.exclusive = false;
      std::fill(th.region_full.begin(), th.region_full.end(), 0);
    }
    if (th.gex_restart) th.gex_restart = false;  // G-EX stays ours for the retry
    else lrt_.release(th.tid);  // the long-running transaction ended: G-EX unlocked
    maintain(th);
  }

  // Loader threads end without a last fence, so the loaded pages are written back from here,
  // then the database is marked complete.
  void after_load() {
    heap_->flush_used_pages();
    dev::fence();
    heap_->pages().set_loaded();
  }
  void start() {}
  void stop() {}
  // The driver's measured phase begins: Zen+'s counters (results.engine.lrt) count from here.
  void begin_measure() { lrt_.begin_measure(); }
  // ... and stop counting here (the driver's phase is kDone; workers finish their transaction).
  void end_measure() { lrt_.end_measure(); }

  // Algorithm 2 on every recovery thread (log_free_recovery.h).
  RecoveryReport recover(int nthreads);

  bool read_current(uint32_t table, uint64_t key, char* out, uint64_t& version) {
    Table& t = *tables_.at(table);
    uint64_t v = t.index->lookup(key);
    if (v == HashIndex::kNoValue) return false;
    if (is_nvm_value(v)) {
      NvmTuple* n = NvmTuple::at(nvm_of(v));
      memcpy(out, n->data(), t.len);
      version = n->cts();
    } else {
      Entry* e = reinterpret_cast<Entry*>(v);
      memcpy(out, e->data(), t.len);
      version = e->cts;
    }
    return true;
  }

  nlohmann::json check() const;  // invariants at quiescence (check.h)

  nlohmann::json stats() const {
    nlohmann::json cache = nlohmann::json::object();
    for (auto& t : tables_)
      cache[t->info.name] = {{"entries", t->cache->per_region() * uint64_t(nthreads_)},
                             {"entries_per_region", t->cache->per_region()},
                             {"bytes", t->cache->bytes()},
                             {"table_rows", t->info.capacity},
                             {"evictions", t->cache->evictions.load()}};
    uint64_t hits = 0, acc = 0, copies = 0, inplace = 0, reclaimed = 0, pending = 0, idle = 0;
    uint64_t copy_evictions = 0, dead = 0, reused = 0;
    for (auto& t : tables_) {
      dead += t->cache->dead_entries();
      reused += t->cache->reclaimed_dead.load();
    }
    for (auto& th : threads_) {
      copy_evictions += th.copy_evictions;
      hits += th.hits;
      acc += th.accesses;
      copies += th.copies;
      inplace += th.foreign_in_place;
      reclaimed += th.reclaimed;
      pending += th.garbage.size();
      idle += th.idle_fences;
    }
    std::vector<std::string> order(tables_.size());
    for (auto& t : tables_) order[t->rank] = t->info.name;
    nlohmann::json regions = nlohmann::json::array();
    for (auto& r : heap_->all_regions()) regions.push_back(r->pages());
    return {{"met_cache", cache},
            {"cache_hits", hits},
            {"tuple_accesses", acc},
            {"cross_region_copies", copies},
            {"cross_region_in_place", inplace},
            // Entries lost to copies: dead ones not yet reused (deletes' included), dead ones
            // reused, and live entries a copy evicted.
            {"met_cache_dead_entries", dead},
            {"met_cache_dead_reused", reused},
            {"copy_evictions", copy_evictions},
            {"nvm_tuples_reclaimed", reclaimed},
            {"garbage_pending", pending},
            {"idle_fences", idle},
            {"nvm_pages", {{"used", heap_->pages().used()}, {"total", heap_->pages().pages()}, {"freed", heap_->pages().freed()}, {"per_region", regions},
                           {"from_other_node", heap_->pages().foreign_pages()}}},
            {"exclusive_mode_entries", lrt_.entries()},
            {"lrt", lrt_.stats()},
            {"persist_order", order},
            {"naive_alloc", ZEN_NAIVE_ALLOC},
            {"next_tx_cts", counter_.load()}};
  }

 private:
  struct Table : TableIndexes {
    uint32_t len = 0;
    uint32_t rank = 0;  // position in the persist order
    std::unique_ptr<Cache> cache;
  };

  // What other threads read of a thread: for the reclamation minimum, exclusive mode, frees.
  struct alignas(64) Shared {
    std::atomic<uint64_t> active_since{0};  // clock when the running transaction began; 0: none
    std::atomic<uint64_t> unfenced{0};      // Tx-CTS whose LP line awaits this thread's fence
    std::atomic<uint64_t> accessed{0};      // tuples the running transaction touched
    std::mutex gc_mu;  // its garbage queue: the privileged transaction drains it too (end_exclusive)
    // A multi-version CC's history of the entries this thread evicted (largest wts, rts):
    // what a refill of any of them may have lost (see fill()).
    std::atomic<uint64_t> evicted_wts{0}, evicted_rts{0};
    // Zen+: 1 + the evicted-history bound when this thread's snapshot reader began (0: none).
    std::atomic<uint64_t> snapshot_bound{0};
    std::atomic<bool> free_pages{false};  // an exclusive stage ended: free this thread's empty pages
  };

  static constexpr bool kKeepsHistory = requires(const Meta& m) { m.history(); };

  // An entry leaves the Met-Cache: the index points at its NVM-tuple again. A multi-version
  // CC's history bound is published first (release), so a refill that finds the NVM-tuple in
  // the index (acquire) sees it.
  void unlink(Thread& th, Table& t, Entry* e) {
    publish_history(th, e->meta);
    if (!t.index->update(e->key, reinterpret_cast<uint64_t>(e), nvm_value(e->nvm)))
      throw std::logic_error("zen: evicted Met-Cache entry was not indexed");
  }

  void publish_history(Thread& th, const Meta& m) {
    if constexpr (kKeepsHistory) {
      auto h = m.history();
      Shared& sh = shared_[th.tid];
      if (h.wts > sh.evicted_wts.load(std::memory_order_relaxed)) sh.evicted_wts.store(h.wts, std::memory_order_release);
      if (h.rts > sh.evicted_rts.load(std::memory_order_relaxed)) sh.evicted_rts.store(h.rts, std::memory_order_release);
    }
  }

  static uint64_t total_rows(const std::vector<TableInfo>& tables) {
    uint64_t n = 0;
    for (auto& t : tables) n += t.capacity;
    return n;
  }

  // Handles of Direct accesses carry a tag bit (Met-Cache entries are 64 B aligned).
  static void* tag(Direct* d) { return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(d) | 1); }
  static Direct* as_direct(void* h) {
    auto u = reinterpret_cast<uintptr_t>(h);
    return (u & 1) ? reinterpret_cast<Direct*>(u & ~uintptr_t(1)) : nullptr;
  }

  // Zen+ (section 4.1.2): a Met-Cache miss served from the NVM-tuple itself, with a CC-Meta of
  // this transaction's own, refilled as fill() would, so the CC decides as on a refilled entry (a
  // snapshot reader below the evicted history's bound reads it; else it aborts as after a refill).
  // The slot stays intact while the transaction runs: whatever supersedes it gets a Tx-CTS above
  // this thread's active_since, which holds reclamation back. (A writer moves the index from the
  // NVM-tuple to its Met-Cache entry when it reads the tuple, before it takes its Tx-CTS, so a
  // lookup that still found the NVM-tuple came after this transaction's active_since and before
  // that Tx-CTS; only the privileged transaction moves the index from one NVM-tuple to another,
  // and it runs alone.) Its bytes are charged by the CC's copy (the header word shares their
  // first 256 B unit).
  bool direct(Thread& th, uint32_t table, uint64_t key, uint64_t v, RowRef& ref) {
    char* nvm = nvm_of(v);
    NvmTuple* n = NvmTuple::at(nvm);
    Direct& d = th.direct.emplace_back();
    d.nvm = nvm;
    d.key = key;
    d.table = table;
    refill_meta(d.meta, n->cts() != kLoadCts);
    if (th.snapshot) lrt_.direct_read();
    th.refused = false;
    ref = RowRef{n->data(), &d.meta, tag(&d)};
    return true;
  }

  // A fresh CC-Meta for a tuple coming from NVM. A multi-version CC keeps history in its Meta,
  // lost with the evicted entry: it gets the largest timestamps any evicted entry held, a bound of
  // this tuple's own (the CC's timestamps are not the Tx-CTS, so the NVM-tuple cannot tell them).
  void refill_meta(Meta& m, bool written) {
    new (&m) Meta();
    if constexpr (kKeepsHistory) m.refilled(history_bound(), written);
  }
  auto history_bound() const {
    if constexpr (kKeepsHistory) {
      decltype(std::declval<Meta&>().history()) bound{};
      for (int i = 0; i < nthreads_; i++) {
        bound.wts = std::max(bound.wts, shared_[i].evicted_wts.load(std::memory_order_acquire));
        bound.rts = std::max(bound.rts, shared_[i].evicted_rts.load(std::memory_order_acquire));
      }
      return bound;
    } else {
      return mvh{};
    }
  }
  struct mvh { uint64_t wts = 0, rts = 0; };

  // Zen+: an entry written after the oldest running snapshot reader's bound stays cached (its
  // eviction would raise the bound past that reader's snapshot). No reader: none is kept.
  bool keep(const Entry* e) const {
    if constexpr (kKeepsHistory) {
      uint64_t floor = 0;
      for (int i = 0; i < nthreads_; i++) {
        uint64_t b = shared_[i].snapshot_bound.load(std::memory_order_acquire);
        if (b && (!floor || b < floor)) floor = b;
      }
      return floor && e->meta.history().wts + 1 > floor;
    } else {
      (void)e;
      return false;
    }
  }

  bool pinned(Thread& th, Entry* e, RowRef& ref) {
    th.pinned.push_back(e);
    ref = RowRef{e->data(), &e->meta, e};
    return true;
  }

  void fill(Entry* e, Table& t, uint32_t table, uint64_t key, char* nvm) {
    NvmTuple* n = NvmTuple::at(nvm);
    dev::read(nvm, kHeaderBytes + t.len);
    memcpy(e->data(), n->data(), t.len);
    dev::write(e->data(), t.len);
    e->nvm = nvm;
    e->key = key;
    e->table = table;
    e->cts = n->cts();
    refill_meta(e->meta, n->cts() != kLoadCts);
    e->state.store(1 | kClock, std::memory_order_release);  // pinned by us, not yet indexed
  }

  // A reused slot still holds a superseded but committed version of some tuple. Its Tx-CTS is
  // replaced first, by this transaction's (uncommitted until its LP is durable), and only then
  // its tuple ID: a crash between the two stores (kill -9, or the header line written back
  // early) then leaves an uncommitted tuple that recovery discards, never the old Tx-CTS under
  // the new tuple ID, which recovery would take for a committed version of the new key.
  static void write_header(char* slot, uint64_t cts, bool lp, uint32_t table, uint64_t key,
                           bool deleted = false) {
    NvmTuple* t = NvmTuple::at(slot);
    uint64_t id = NvmTuple::make_id(table, key, deleted);
    t->set_cts(cts, lp);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the compiler keeps the order; x86 too
    dev::crash_point("zen.slot_header");
    std::atomic_ref<uint64_t>(t->id_word).store(id, std::memory_order_relaxed);
  }

  // A free entry of this thread's region for `table` (an exclusive transaction may take from
  // any region: the others are idle). nullptr: the region is exhausted; with Zen+ and `to_nvm`,
  // the privileged transaction then works on NVM-tuples directly (direct()).
  Entry* victim(Thread& th, uint32_t table, bool to_nvm = false) {
    Table& t = *tables_[table];
    auto unlink = [&](Entry* e) { this->unlink(th, t, e); };
    // Its pins stay until it ends: the privileged transaction looks at a used-up region once.
    if (to_nvm && th.exclusive && lrt_.adaptive() && th.region_full[table]) return nullptr;
    auto kept = [this](const Entry* e) { return keep(e); };
    if (Entry* e = t.cache->victim(th.tid, th.hand[table], unlink, holds_table(t), kept)) return e;
    if (!th.exclusive) {
      request_exclusive(LrtCondition::MetCache);
      if (lrt_.holder() != th.tid) return nullptr;  // another transaction is the long one
      if (lrt_.adaptive() && !th.gex_from_begin) return restart_privileged(th), nullptr;
      wait_exclusive(th);
    }
    if (to_nvm && lrt_.adaptive()) return th.region_full[table] = 1, nullptr;
    for (int r = 0; r < nthreads_; r++)
      if (r != th.tid)
        if (Entry* e = t.cache->victim(r, threads_[size_t(r)].hand[table], unlink)) return e;
    throw std::runtime_error("zen: Met-Cache of " + t.info.name + " is too small for one transaction");
  }

  // Copy-on-write across regions (section 3.2), at install time. The CC-Meta is what the CC
  // locks, so two entries of one tuple must never both be lockable. The copy therefore happens
  // only while this transaction (a) holds the tuple exclusively through the CC, since validation
  // passed, and (b) is the entry's only pinner, made permanent by setting the copy bit in the
  // same CAS: no other transaction holds a reference to the old entry or can pin it again (pin
  // fails on a copied entry and re-reads the index). The CC-Meta moves with its lock still held,
  // the access is repointed so the CC releases the new entry, and the index switches to it. When
  // another transaction has the entry pinned, the image is installed in place instead.
  bool copy_to_own_region(Thread& th, Table& t, Access& a, Entry* e, char* slot) {
    Entry* c = victim_for_copy(th, t, a.table);
    if (!c) return false;
    uint64_t s = e->state.load(std::memory_order_acquire);
    if ((s & kPinMask) != 1 || (s & (kCopy | kFree)) ||
        !e->state.compare_exchange_strong(s, s | kCopy, std::memory_order_acq_rel)) {
      c->state.store(kFree, std::memory_order_release);
      return false;
    }
    memcpy(static_cast<void*>(&c->meta), static_cast<const void*>(&e->meta), sizeof(Meta));
    memcpy(c->data(), a.local, a.len);
    dev::write(c->data(), a.len);
    c->nvm = slot;
    c->key = e->key;
    c->table = e->table;
    c->cts = a.version;
    c->state.store(1 | kClock, std::memory_order_release);  // our pin moves with the access
    if (!t.index->update(a.key, reinterpret_cast<uint64_t>(e), reinterpret_cast<uint64_t>(c)))
      throw std::logic_error("zen: copied Met-Cache entry was not indexed");
    Cache::unpin(e);  // dead now: its owner reuses it before evicting anything
    t.cache->bury(e);
    std::replace(th.pinned.begin(), th.pinned.end(), e, c);
    a.row = RowRef{c->data(), &c->meta, c};
    th.copies++;
    return true;
  }
  // A Met-Cache that holds the whole table never evicts a live entry for a copy (the tuple
  // stays cached, installed in place, when the region has no spare entry); a smaller one
  // evicts by CLOCK, as for a miss: the written tuple is the more recently used one.
  bool holds_table(const Table& t) const { return t.cache->per_region() * uint64_t(nthreads_) >= t.info.capacity; }
  Entry* victim_for_copy(Thread& th, Table& t, uint32_t table) {
    if (holds_table(t))
      return t.cache->spare(th.tid, th.hand[table]);
    auto unlink = [&](Entry* v) {
      th.copy_evictions++;
      this->unlink(th, t, v);
    };
    return t.cache->victim(th.tid, th.hand[table], unlink, false, [this](const Entry* e) { return keep(e); });
  }

  // The exclusive stage (exclusive_stage.h).
  bool enter(Thread& th);

  bool restart_privileged(Thread& th);

  void wait_exclusive(Thread& th);

  void request_exclusive(LrtCondition why);

  bool detect(Thread& th, uint32_t table);

  void end_exclusive(Thread& th);

  void free_empty_pages(Thread& th);

  // NVM space management: slots taken, garbage reclaimed (space_management.h).
  char* take(Thread& th, HeapRegion& r, uint32_t table);

  uint64_t global_min() const;

  void maintain(Thread& th);

  void reclaim(Thread& th, size_t budget);

  size_t drain(Thread& th, std::deque<Garbage>& q, uint64_t min, size_t budget);

  EngineEnv& env_;
  int nthreads_;
  std::vector<std::unique_ptr<Table>> tables_;
  std::unique_ptr<NvmHeap> heap_;
  std::vector<Thread> threads_;
  std::unique_ptr<Shared[]> shared_;
  Lrt lrt_;  // Zen+'s detecting stage and G-EX (the thread in the exclusive stage, or -1)
  std::atomic<uint64_t> counter_{kLoadCts + 1};  // the Tx-CTS clock
};

}  // namespace nvt::zen

// The member functions of Zen's concepts, one file each (defined inline, as they were in the
// class, so that the hot path compiles as before).
#include "storage/engines/zen/persist.h"
#include "storage/engines/zen/log_free_recovery.h"
#include "storage/engines/zen/exclusive_stage.h"
#include "storage/engines/zen/space_management.h"
#include "storage/engines/zen/check.h"

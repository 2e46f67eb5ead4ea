// The FOEDUS-style engine (papers/foedus-sigmod15.txt sections 4-7 and Appendix D; what differs
// from the paper is in docs/engines/foedus.md). All data live in fixed-size pages (page.h) reached through
// dual pointers (dual_pointer.h): a volatile page in DRAM where one was installed, else the
// immutable snapshot page in NVM, read through the snapshot cache (snapshot_cache.h). Storages
// are array storages (array_storage.h) for tables of dense keys (TableInfo::dense) and ordered
// trees (tree_storage.h, tree_snapshot.h) for every other table: inserts, deletes, scans. A commit (CC `foedus`: Silo's OCC with
// a pointer set) appends redo records to its worker's log buffer; the log writer (log_writer.h)
// makes epochs durable; a transaction is acknowledged once its epoch is. The log gleaner
// (gleaner.h) turns durable logs into a new snapshot, by interval and under DRAM pressure, and
// then installs snapshot pointers and drops the volatile pages nobody modified meanwhile, with
// transactions paused (7.5). A restart (--recover) runs the gleaner over the logs since the
// last snapshot and starts with no volatile pages but the roots (7.7).
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <unordered_map>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/device/power_fail.h"
#include "storage/engine.h"
#include "storage/parallel.h"
#include "storage/engines/foedus/array_storage.h"
#include "storage/engines/foedus/epoch.h"
#include "storage/engines/foedus/gleaner.h"
#include "storage/engines/foedus/log_writer.h"
#include "storage/engines/foedus/metadata.h"
#include "storage/engines/foedus/snapshot_area.h"
#include "storage/engines/foedus/snapshot_cache.h"
#include "storage/engines/foedus/tree_snapshot.h"
#include "storage/engines/foedus/tree_storage.h"
#include "storage/engines/foedus/volatile_pool.h"

namespace nvt::foedus {

template <class CC>
class Foedus {
 public:
  static constexpr const char* name = "foedus";
  template <class C>
  static constexpr bool supports = needs_foedus<C>;
  // An aborting transaction releases its locks before it undoes its inserts (TxnManager::abort):
  // a split holding a leaf's lock may be waiting for one of them.
  static constexpr bool kReleaseBeforeUndoInsert = true;
  static constexpr uint64_t kLogBufferBytes = 256ull << 10;  // per worker, DRAM
  // The gleaner runs when the volatile pool is this full (DRAM pressure).
  static constexpr double kPressure = 0.5;

  struct Thread {
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

  // NVM the image needs: metadata, snapshot pages for three full trees (the current snapshot,
  // the one being written, pages retired but not yet free), one log file per thread.
  // An ordered tree's: leaves half full at worst, the interior above them.
  static uint64_t snapshot_pages(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    uint64_t pages = 64;
    for (auto& t : tables)
      pages += 3 * (t.dense ? ArrayShape(Geometry(o.page_size, t.schema.tuple_size(), t.name), t.capacity).total_pages()
                            : tree_pages(TreeGeometry(o.page_size, t.schema.tuple_size(), t.name), t.capacity));
    return pages;
  }
  static uint64_t tree_pages(const TreeGeometry& g, uint64_t capacity) {
    uint64_t leaves = capacity / std::max<uint64_t>(1, g.per_leaf / 2) + 2;
    return leaves + leaves / std::max<uint64_t>(1, g.fanout / 2) + 8;
  }
  static uint64_t nvm_bytes(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    return (4ull << 20) + snapshot_pages(tables, o) * o.page_size + uint64_t(o.threads) * (o.log_bytes + (2ull << 20)) +
           (8ull << 20);
  }
  // (snapshot cache hits, snapshot page reads) of one thread: the cache hit rate.
  static std::pair<uint64_t, uint64_t> hit_counts(const Thread& th) {
    return {th.cache_hits, th.cache_hits + th.cache_misses};
  }

  Foedus(EngineEnv& env, const std::vector<TableInfo>& tables) : env_(env), nthreads_(env.opt.threads) {
    const EngineOptions& o = env.opt;
    if (tables.size() > kMaxStorages) throw std::invalid_argument("FOEDUS: too many tables");
    for (auto& ti : tables) {
      if (ti.id >= kMaxStorages) throw std::invalid_argument("FOEDUS: table id " + std::to_string(ti.id) + " too large");
      if (where_.size() <= ti.id) where_.resize(ti.id + 1, {false, ~0u}), infos_.resize(ti.id + 1);
      infos_[ti.id] = ti;
      if (!ti.dense) {
        where_[ti.id] = {true, uint32_t(ordered_.size())};
        ordered_.push_back(std::make_unique<TreeStorage>(ti, o.page_size));
        tsnap_.push_back(TreeSnapshot{ti.id, ordered_.back()->g, {}, {}, 0, {}});
        loads_.push_back(std::make_unique<LoadBuffer>());
        continue;
      }
      where_[ti.id] = {false, uint32_t(storages_.size())};
      auto s = std::make_unique<Storage>(ti, ArrayShape(Geometry(o.page_size, ti.schema.tuple_size(), ti.name), ti.capacity));
      trees_.push_back({ti.id, s->shape, {}});
      for (uint64_t n : s->shape.pages) trees_.back().ptrs.emplace_back(n, 0);
      storages_.push_back(std::move(s));
    }
    ps_ = o.page_size;
    // NVM: metadata, snapshot area, logs (as many as the image was made with).
    dev::Region meta = env.nvm.region("foedus.meta", (sizeof(MetaArea) + 4095) / 4096 * 4096, dev::RegionKind::Persistent);
    meta_ = reinterpret_cast<MetaArea*>(meta.base);
    if (!meta.existed) {
      memset(static_cast<void*>(meta_), 0, sizeof *meta_);
      meta_->magic = MetaArea::kMagic;
      meta_->nlogs = uint64_t(nthreads_);
      meta_->page_size = o.page_size;
      dev::persist(meta_, sizeof *meta_);
    } else if (meta_->magic != MetaArea::kMagic) {
      throw std::runtime_error("FOEDUS: the image's metadata is not FOEDUS's");
    } else if (meta_->page_size != o.page_size) {
      throw std::invalid_argument("FOEDUS: the image was made with --page-size " + std::to_string(meta_->page_size) +
                                  ", not " + std::to_string(o.page_size));
    }
    nlogs_ = uint32_t(meta_->nlogs);
    if (nlogs_ > kMaxLogs || nlogs_ == 0) throw std::runtime_error("FOEDUS: bad log count in the image");
    if (uint32_t(nthreads_) > nlogs_ && meta.existed)
      throw std::invalid_argument("FOEDUS: the image has logs for " + std::to_string(nlogs_) + " threads");
    area_ = std::make_unique<SnapshotArea>(
        env.nvm.region("foedus.snapshot", snapshot_pages(tables, o) * ps_, dev::RegionKind::Persistent), ps_);
    std::vector<dev::Region> files;
    for (uint32_t i = 0; i < nlogs_; i++)
      files.push_back(env.nvm.region("foedus.log." + std::to_string(i), o.log_bytes, dev::RegionKind::Persistent));
    // DRAM (the one DRAM rule, storage/device/dram_budget.h): log buffers, private data and the
    // gleaner's page tables are overhead; volatile pages and the snapshot cache's frames are
    // the data, together at most database / P (data_left()), 3/4 volatile pages (hot, written
    // data, dropped by the gleaner at kPressure fill) and 1/4 snapshot cache (read snapshot
    // pages); FOEDUS-NoSC keeps the same volatile pool, with no cache. An eighth of what the
    // whole budget has left after that stays free for the gleaner's working memory (charged
    // while it lives, foedus.gleaner_work). The pool also holds the index pages below.
    log_mem_ = static_cast<char*>(env.dram.alloc(kLogBufferBytes * nlogs_, "foedus.log_buffers"));
    env.dram.charge(kPrivateBytesPerThread * uint64_t(nthreads_), "private");
    env.dram.charge(uint64_t(nthreads_) * (Thread::kChunk + ps_), Thread::kCopies);  // allocated below
    uint64_t table_bytes = 0, min_pages = 0;
    for (auto& t : trees_) {
      table_bytes += t.shape.total_pages() * sizeof(SnapshotPtr);
      min_pages += 1 + uint64_t(t.shape.root_level()) * uint64_t(nthreads_) * 4;  // a root, paths
    }
    for (auto& t : ordered_) {  // the leaf list; the interior pages (always volatile) and paths
      uint64_t leaves = t->info.capacity / t->g.fill() + 1;
      table_bytes += leaves * sizeof(TreeLeaf);
      min_pages += leaves / std::max<uint64_t>(2, t->g.fanout * 3 / 4) + 4 + uint64_t(nthreads_) * 4;
    }
    env.dram.charge(table_bytes, "foedus.gleaner_page_tables");
    // What must stay volatile whatever the data (roots, the ordered trees' interior pages at
    // their capacity, a path per thread) is FOEDUS's index: overhead, as other engines' indexes.
    const uint64_t index_pages = min_pages + 16;
    const uint64_t rest = env.dram.left() - std::min(env.dram.left(), index_pages * ps_);
    const uint64_t data = std::min(env.dram.data_left(), rest - rest / 8);
    const uint64_t pool_pages = data / 4 * 3 / ps_;
    const uint64_t frames = o.snapshot_cache ? (data - pool_pages * ps_) / ps_ : 0;
    if (o.snapshot_cache && (frames < SnapshotCache::kMinFrames || frames * SnapshotCache::kOverhead > rest - data))
      throw dev::BudgetError("FOEDUS: its DRAM for data (" + std::to_string(data) + " B of the data cap " +
                             std::to_string(env.dram.data_cap()) + " B, database / P) holds fewer than " +
                             std::to_string(SnapshotCache::kMinFrames) + " snapshot cache frames of " +
                             std::to_string(ps_) + " B beside its volatile pages: lower --p-ratio or --page-size");
    pool_ = std::make_unique<VolatilePool>(env.dram, index_pages, pool_pages, ps_);
    if (o.snapshot_cache) cache_ = std::make_unique<SnapshotCache>(env.dram, frames, ps_);
    for (uint32_t i = 0; i < nlogs_; i++)
      logs_.push_back(std::make_unique<WorkerLog>(log_mem_ + i * kLogBufferBytes, kLogBufferBytes));
    std::vector<WorkerLog*> wl;
    for (auto& l : logs_) wl.push_back(l.get());
    writer_ = std::make_unique<LogWriter>(meta_, std::move(files), wl, o.epoch_ms);
    threads_.resize(size_t(nthreads_));
    for (int i = 0; i < nthreads_; i++) {
      Thread& th = threads_[size_t(i)];
      th.log = logs_[size_t(i)].get();
      th.dram = &env.dram;
      th.charged = Thread::kChunk + ps_;  // charged above
      th.page.resize(ps_);
      th.grow(Thread::kChunk, false);
    }
    if (!meta.existed) {
      // A fresh image: the initial snapshot's leaves are laid out now, in order, and load()
      // writes records straight into them (the paper loads, then snapshots; at load no
      // transaction runs, so the result is the same, without the DRAM to hold it all).
      for (auto& t : trees_)
        for (auto& p : t.ptrs[0]) p = make_snapshot_ptr(1, area_->take());
      g_epoch.store(1);
    }
  }

  ~Foedus() {
    stop();
    for (auto& s : storages_)
      if (s->root) pool_->give(s->root);
    for (auto& t : ordered_) t->free_all(*pool_);
    env_.dram.free(log_mem_, kLogBufferBytes * nlogs_, "foedus.log_buffers");
    for (Thread& th : threads_) env_.dram.uncharge(th.charged, Thread::kCopies);
  }

  Thread& thread(int tid) { return threads_.at(size_t(tid)); }
  const TableInfo& table_info(uint32_t t) const { return infos_.at(t); }

  void load(Thread&, uint32_t table, uint64_t key, const char* image) {
    if (where_.at(table).tree) {  // gathered, written sorted by after_load()
      LoadBuffer& b = *loads_[where_[table].index];
      uint32_t len = infos_[table].schema.tuple_size();
      std::lock_guard g(b.mu);
      b.keys.push_back(key);
      b.images.insert(b.images.end(), image, image + len);
      return;
    }
    SnapshotTree& t = trees_[where_[table].index];
    if (key >= t.shape.capacity) throw std::runtime_error("FOEDUS array storage " + infos_[table].name +
                                                          ": key " + std::to_string(key) + " beyond its capacity");
    Page* p = area_->page(snapshot_index(t.ptrs[0][t.shape.leaf_of(key)]));
    uint64_t s = t.shape.slot_in_leaf(key);
    p->tid(s, t.shape.g.slot)->store(0, std::memory_order_relaxed);  // loaded: TID 0
    memcpy(p->payload(s, t.shape.g.slot), image, t.shape.g.len);
  }

  // The initial snapshot: leaf headers, interior pages, metadata; then the volatile roots.
  void after_load() {
    for (auto& t : trees_)
      for (uint64_t leaf = 0; leaf < t.ptrs[0].size(); leaf++) {
        Page* p = area_->page(snapshot_index(t.ptrs[0][leaf]));
        p->hdr = PageHeader{t.id, 0, 0, leaf, 0, {}};
        dev::flush(p, ps_);
      }
    // The ordered trees: the loaded records sorted, leaves filled to 3/4 (room for inserts).
    for (size_t i = 0; i < ordered_.size(); i++) {
      LoadBuffer& b = *loads_[i];
      TreeSnapshot& t = tsnap_[i];
      std::vector<uint32_t> order(b.keys.size());
      for (uint32_t j = 0; j < order.size(); j++) order[j] = j;
      std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return b.keys[x] < b.keys[y]; });
      std::vector<TreeRecord> recs;
      recs.reserve(order.size());
      for (uint32_t j : order) {
        if (!recs.empty() && recs.back().key == b.keys[j])
          throw std::runtime_error("FOEDUS ordered tree " + ordered_[i]->info.name + ": key " + std::to_string(b.keys[j]) +
                                   " loaded twice");
        if (b.keys[j] == kInfKey) throw std::runtime_error("FOEDUS ordered tree " + ordered_[i]->info.name + ": key 2^64-1 is reserved");
        recs.push_back({b.keys[j], 0, b.images.data() + size_t(j) * t.g.len});
      }
      t.leaves.clear();
      std::vector<uint64_t> cuts;  // every g.fill() records
      for (size_t j = t.g.fill(); j < recs.size(); j += t.g.fill()) cuts.push_back(recs[j].key);
      write_tree_leaves(t, *area_, 0, kInfKey, recs, cuts, 0, 1, t.leaves);
      write_tree_interiors(t, *area_, 0, 1);
      b.keys = {};
      b.images = {};
    }
    std::vector<std::vector<uint64_t>> all(trees_.size());
    for (size_t i = 0; i < trees_.size(); i++)
      for (uint64_t l = 0; l < trees_[i].ptrs[0].size(); l++) all[i].push_back(l);
    write_interiors(trees_, *area_, all, 0, 1);  // fences (the trees' pages too)
    write_snapshot_meta(1, 0, std::vector<uint64_t>(nlogs_, 0));
    make_roots();
  }

  void start() {
    writer_->start();
    if (running_.exchange(true)) return;
    gleaner_ = std::thread([this] { gleaner_loop(); });
  }
  void stop() {
    stop_gleaner();
    writer_->stop();
  }
  // Tests: the background threads die as with the power (no last log pass).
  void halt() {
    stop_gleaner();
    writer_->halt();
  }
  void stop_gleaner() {
    if (running_.exchange(false)) {
      {
        std::lock_guard g(wake_mu_);
        wake_ = true;
      }
      wake_cv_.notify_all();
      gleaner_.join();
    }
  }

  // A transaction starts (or retries): wait while the gleaner installs pointers, then publish
  // the epoch it runs in (the log writer never declares it durable while it runs).
  void begin(Thread& th, bool) {
    // Refused a volatile page last time: wait (outside any transaction) for the gleaner's next
    // drop pass rather than abort again and again (bounded: the gleaner may have nothing to drop).
    if (th.refusal == AbortCause::DramSpace && running_.load()) {
      auto t0 = std::chrono::steady_clock::now();
      auto until = t0 + std::chrono::milliseconds(2 * env_.opt.epoch_ms + 10);
      while (drop_passes_.load(std::memory_order_acquire) == th.drop_pass_seen && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      th.dram_waits++;
      th.dram_wait_ns += uint64_t(std::chrono::nanoseconds(std::chrono::steady_clock::now() - t0).count());
    }
    for (;;) {
      th.log->active_epoch.store(g_epoch.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
      if (!paused_.load(std::memory_order_seq_cst)) break;
      th.log->active_epoch.store(0, std::memory_order_seq_cst);
      while (paused_.load(std::memory_order_acquire)) std::this_thread::yield();
    }
    th.refusal = AbortCause::None;
    th.node_set.clear();
    th.scan_ptrs.clear();
    th.inserted.clear();
  }

  bool lookup(Thread& th, uint32_t table, uint64_t key, RowRef& ref) { return lookup(th, table, key, ref, false); }
  // Follow the dual pointers from the root: volatile pages while there are; a read that meets
  // a pointer with no volatile page continues in the snapshot world (and the CC watches that
  // pointer); a write installs volatile pages down to the leaf instead.
  bool lookup(Thread& th, uint32_t table, uint64_t key, RowRef& ref, bool for_write) {
    if (where_.at(table).tree) return tree_lookup(th, *ordered_[where_[table].index], key, ref, for_write);
    Storage& s = *storages_[where_[table].index];
    const ArrayShape& sh = s.shape;
    if (key >= sh.capacity) return false;
    uint64_t leaf = sh.leaf_of(key);
    Page* p = s.root;
    for (int level = sh.root_level(); level > 0; level--) {
      DualPointer& d = *p->child(sh.child_slot(level, leaf));
      dev::read(&d, sizeof d);
      Page* v = d.volatile_page.load(std::memory_order_acquire);
      if (!v) {
        if (!for_write) return snapshot_read(th, s, d, level - 1, leaf, key, ref);
        if (!(v = install(th, d))) {
          refuse(th);
          return false;
        }
      }
      p = v;
    }
    uint64_t slot = sh.slot_in_leaf(key);
    ref = RowRef{p->payload(slot, sh.g.slot), p->tid(slot, sh.g.slot), nullptr};
    th.volatile_reads++;
    return true;
  }

  // A read of a snapshot record becomes a write: install the volatile pages it needs and abort
  // this attempt (it installed under its own pointer set; the retry reads the volatile page).
  AbortCause upgrade(Thread& th, Access& a) {
    if (a.row.meta) return AbortCause::None;
    RowRef ref;
    return lookup(th, a.table, a.key, ref, true) ? AbortCause::Validation : th.refusal;
  }

  // The commit's persistence: its redo records go to the worker's log buffer, with the commit
  // TID, while the write set is still locked. Durability comes with the epoch.
  // An insert into an ordered tree (TxnManager::insert): the key's record, being inserted
  // (invisible: kTidAbsent | kTidInserting) until the commit. False: the key is present or being
  // inserted (or no DRAM page: th.refusal says so).
  bool insert(Thread& th, uint32_t table, uint64_t key, RowRef& ref) {
    TreeStorage& t = tree(table, "inserts");
    Page* leaf = nullptr;
    uint64_t before = 0;
    TreeStorage::Insert r = t.insert(key, *pool_, [&](SnapshotPtr sp) { return copy_page(th, sp); }, ref, leaf, before,
                                     snapshot_epoch_.load(std::memory_order_acquire));
    if (r == TreeStorage::Insert::NoPage) {
      refuse(th);
      return false;
    }
    if (r == TreeStorage::Insert::Duplicate) return false;
    // This transaction's own insert does not invalidate its own scan of the leaf, nor its own
    // lookup that found the key absent.
    auto* word = static_cast<std::atomic<uint64_t>*>(ref.meta);
    for (auto& [v, seen] : th.node_set)
      if (v == tp::version(leaf) && seen == before) seen = before + 1;
    std::erase_if(th.node_set, [&](const auto& e) { return e.first == word; });
    th.inserted.push_back(word);
    return true;
  }
  // The insert's transaction aborted: its record becomes a tombstone (wherever splits moved it).
  void undo_insert(Thread&, Access& a) {
    for (;;) {
      auto* w = static_cast<std::atomic<uint64_t>*>(a.row.meta);
      uint64_t cur = w->load(std::memory_order_acquire);
      if (cur & kTidMoved) {
        if (!relocate(a)) return;
        continue;
      }
      if (w->compare_exchange_weak(cur, cur & ~kTidInserting, std::memory_order_acq_rel)) return;
    }
  }
  // Before validation: an access to an ordered tree's record that a split moved follows it to
  // its new copy (same TID and image, so validation there is as good: an insert keeps its
  // record, a read still fails if the record changed since).
  void relocate(Thread&, Access* acc, size_t n) {
    for (size_t i = 0; i < n; i++)
      if (acc[i].row.meta && (static_cast<std::atomic<uint64_t>*>(acc[i].row.meta)->load(std::memory_order_acquire) & kTidMoved))
        relocate(acc[i]);
  }
  // A record the CC observed absent (deleted, or being inserted by another transaction) since
  // the lookup found it: the access aborts.
  bool visible(const Access& a) const { return !(a.row.meta && (a.tid & kTidAbsent)); }

  // Keys of committed records of an ordered tree in [lo, hi], ascending (or descending), at
  // most `limit`; the leaves it covered go into the node set (a volatile leaf's version, which
  // an insert bumps; a snapshot leaf's parent version and dual pointer), and so do the words of
  // the absent records it passed over (an insert not yet committed, a tombstone), so an insert
  // committed in the range before the scan's commit aborts the scan's transaction.
  void scan_keys(Thread& th, uint32_t table, uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out,
                 bool reverse) {
    scan(&th, table, lo, hi, limit, out, reverse);
  }
  // The same without a transaction (checkers at quiescence).
  void scan_keys(uint32_t table, uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out, bool reverse) {
    scan(nullptr, table, lo, hi, limit, out, reverse);
  }

  // Pre-commit, after the CC's validation with the write set locked: the node set and the
  // scans' pointer set still hold (else a phantom may have appeared).
  bool validate(Thread& th) const {
    // A watched word locked by another transaction is changing (its commit may be between its
    // records' publications), as in Silo's read validation.
    for (auto& [v, seen] : th.node_set)
      if (uint64_t now = v->load(std::memory_order_acquire); now != seen || (now & kTidLock)) return false;
    for (const DualPointer* d : th.scan_ptrs)
      if (d->volatile_page.load(std::memory_order_acquire)) return false;
    return true;
  }

  // Before the CC validates, holding no lock: room in the worker's log buffer for the commit's
  // redo records, waited for here (persist() then finds it). A worker that waited in persist()
  // would hold its write set's locks while the log writer waits for the gleaner to free its log
  // file, the gleaner for the durable epoch, and the durable epoch for the transactions spinning
  // on those locks. False (cause nvm_space; the retry waits again) after two epochs.
  bool reserve(Thread& th, Access* acc, size_t n) {
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++)
      if (acc[i].type != AccessType::Read) bytes += LogRecord::size_for(acc[i].len);
    if (bytes > th.log->buf.capacity()) throw std::runtime_error("FOEDUS: a transaction's log records exceed its log buffer");
    if (th.log->buf.room(bytes)) return true;
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * env_.opt.epoch_ms + 10);
    while (!th.log->buf.room(bytes)) {
      if (!writer_->running()) {  // no log writer thread (unit tests): drain the buffers here
        writer_->pass();
        continue;
      }
      if (std::chrono::steady_clock::now() > until) return false;
      dev::pay_debt();
      std::this_thread::yield();
    }
    return true;
  }

  uint64_t persist(Thread& th, Access* acc, size_t n) {
    if (!n) return 0;
    uint64_t tid = acc[0].version;
    th.commit_epoch = epoch_of(tid);
    uint64_t bytes = 0, recs = 0;
    for (size_t i = 0; i < n; i++)
      if (acc[i].type != AccessType::Read) bytes += LogRecord::size_for(acc[i].len), recs++;
    if (!recs) return tid;
    if (!th.log->buf.reserve(bytes)) throw std::runtime_error("FOEDUS: a transaction's log records exceed its log buffer");
    for (size_t i = 0; i < n; i++) {
      Access& a = acc[i];
      if (a.type == AccessType::Read) continue;
      uint32_t storage = a.table | (a.type == AccessType::Delete ? LogRecord::kDelete : 0);
      LogRecord rec{LogRecord::size_for(a.len), storage, a.key, tid};
      rec.seal(a.local, a.len);
      th.log->buf.put(rec, a.local, a.len);
    }
    th.log->buf.publish();
    return tid;
  }
  void install(Thread&, Access& a) {
    if (a.type == AccessType::Delete) return;  // the CC's finish() marks the record absent
    dev::write(a.row.data, a.len);
    memcpy(a.row.data, a.local, a.len);
  }
  void committed(Thread&) {}
  void release(Thread& th, Access*, size_t) {
    th.log->active_epoch.store(0, std::memory_order_seq_cst);
    th.chunk = 0;
    th.used = 0;
  }

  // Acknowledgement: a commit is durable once its epoch is.
  uint64_t commit_token(const Thread& th) const { return th.commit_epoch; }
  std::pair<uint64_t, uint64_t> durable_point() const { return {writer_->durable_epoch(), writer_->durable_tsc()}; }
  void sync(Thread& th) {
    while (writer_->durable_epoch() < th.commit_epoch) {
      if (!writer_->running()) {  // no log writer thread (unit tests): do its work here
        g_epoch.fetch_add(1);
        writer_->pass();
        continue;
      }
      dev::pay_debt();
      std::this_thread::yield();
    }
  }

  // One gleaning (7.1-7.5), also for tests. False when no new epoch was durable.
  bool glean_now() { return run_gleaner(false); }

  RecoveryReport recover(int nthreads) {
    RecoveryReport rep;
    dev::read(meta_, sizeof *meta_);
    const SnapshotMeta* snap = MetaArea::newest(meta_->snapshot);
    const EpochMarker* mark = MetaArea::newest(meta_->marker, uint64_t(nlogs_));
    if (!snap) throw std::runtime_error("FOEDUS: the image holds no complete snapshot (power failed during the load?)");
    SnapshotMeta sm = *snap;
    uint64_t durable = mark ? mark->epoch : 0;
    std::vector<uint64_t> lsn(nlogs_);
    for (uint32_t i = 0; i < nlogs_; i++) lsn[i] = mark ? mark->lsn[i] : sm.gleaned[i];
    rep.lap("read_metadata");
    // The snapshot's page tables and the ordered trees' interiors, from their interior pages, a
    // level at a time, each level's pages on every thread; every other page is free.
    const size_t nw = size_t(std::max(1, nthreads));
    for (auto& t : trees_) {
      t.ptrs.back()[0] = sm.root[t.id];
      for (int level = t.shape.root_level(); level > 0; level--) {
        const uint64_t count = t.shape.pages[size_t(level)];
        parallel(int(nw), [&](int w) {
          for (uint64_t idx = count * uint64_t(w) / nw; idx < count * uint64_t(w + 1) / nw; idx++) {
            const Page* p = area_->page(snapshot_index(t.ptrs[size_t(level)][idx]));
            dev::read(p, ps_);
            for (uint64_t c = 0; c < t.shape.children(level, idx); c++)
              t.ptrs[size_t(level) - 1][idx * t.shape.g.fanout + c] = const_cast<Page*>(p)->child(c)->snapshot_page.load();
          }
        });
      }
    }
    for (auto& t : tsnap_) {
      read_tree_snapshot(t, *area_, sm.root[t.id], int(nw));
      t.bounds.clear();  // no volatile tree yet: leaves are cut by size only
    }
    area_->reset(sm.high_water, nthreads, [&](int w, int n, auto&& mark) {
      auto share = [&](size_t size, auto&& at) {  // the w-th of n runs of a list of snapshot pointers
        for (size_t i = size * size_t(w) / size_t(n); i < size * size_t(w + 1) / size_t(n); i++) mark(snapshot_index(at(i)));
      };
      for (auto& t : trees_)
        for (auto& lv : t.ptrs) share(lv.size(), [&](size_t i) { return lv[i]; });
      for (auto& t : tsnap_) {
        share(t.interior.size(), [&](size_t i) { return t.interior[i]; });
        share(t.leaves.size(), [&](size_t i) { return t.leaves[i].ptr; });
      }
    });
    snapshot_id_ = sm.id;
    snapshot_epoch_ = sm.epoch;
    rep.lap("read_snapshot_tree");
    // Truncate each log at the durable epoch: records past the marker's LSN, or of a later
    // epoch, never committed; the gleaner stops at them and the next snapshot skips them.
    std::vector<LogRange> ranges;
    for (uint32_t i = 0; i < nlogs_; i++)
      ranges.push_back({writer_->file(i), writer_->file_bytes(i), sm.gleaned[i], std::max(sm.gleaned[i], lsn[i]), true});
    rep.lap("truncate_logs");
    GleanResult r = glean(trees_, tsnap_, *area_, ranges, durable, snapshot_id_ + 1,
                          std::min(nthreads, env_.opt.gleaner_mappers > 1 ? env_.opt.gleaner_mappers : nthreads),
                          std::max(1, env_.opt.gleaner_reducers > 1 ? env_.opt.gleaner_reducers : nthreads), &env_.dram);
    rep.replayed = r.records;
    note_torn(r, ranges);
    dev::crash_point("foedus.restart");
    std::vector<uint64_t> upto(nlogs_);
    for (uint32_t i = 0; i < nlogs_; i++) upto[i] = ranges[i].to;
    uint64_t epoch = std::max(durable, sm.epoch);
    write_snapshot_meta(snapshot_id_ + 1, epoch, upto);
    area_->release_retired();
    writer_->reset(epoch, upto);
    g_epoch.store(epoch + 2);
    record(r, 0);
    rep.lap("glean_logs");
    make_roots(int(nw));  // no volatile pages but the roots
    for (auto& s : storages_) rep.rows += s->shape.capacity;
    std::vector<uint64_t> rows(nw, 0);
    for (auto& t : tsnap_)  // the trees' rows: each snapshot leaf's count, from its header
      parallel(int(nw), [&](int w) {
        for (size_t i = t.leaves.size() * size_t(w) / nw; i < t.leaves.size() * size_t(w + 1) / nw; i++) {
          const Page* p = area_->page(snapshot_index(t.leaves[i].ptr));
          dev::read(p, sizeof(PageHeader));
          rows[size_t(w)] += tp::count(p);
        }
      });
    for (uint64_t r : rows) rep.rows += r;
    rep.lap("install_roots");
    return rep;
  }

  // The current image of a tuple (checkers, at quiescence): volatile if installed, else the
  // snapshot page read directly in NVM. version = its TID.
  bool read_current(uint32_t table, uint64_t key, char* out, uint64_t& version) {
    if (where_.at(table).tree) return tree_read_current(*ordered_[where_[table].index], key, out, version);
    Storage& s = *storages_[where_[table].index];
    const ArrayShape& sh = s.shape;
    if (key >= sh.capacity) return false;
    uint64_t leaf = sh.leaf_of(key), slot = sh.slot_in_leaf(key);
    Page* p = s.root;
    int level = sh.root_level();
    for (; level > 0; level--) {
      DualPointer& d = *p->child(sh.child_slot(level, leaf));
      Page* v = d.volatile_page.load();
      if (!v) break;
      p = v;
    }
    if (level > 0) {  // snapshot world from here down
      SnapshotPtr sp = p->child(sh.child_slot(level, leaf))->snapshot_page.load();
      for (level--;; level--) {
        p = area_->page(snapshot_index(sp));
        dev::read(p, ps_);
        if (level == 0) break;
        sp = p->child(sh.child_slot(level, leaf))->snapshot_page.load();
      }
    }
    memcpy(out, p->payload(slot, sh.g.slot), sh.g.len);
    version = p->tid(slot, sh.g.slot)->load() & ~(1ull << 63);
    return true;
  }

  // Invariants at quiescence: every snapshot page the trees name has its own header (storage,
  // level, position) and no record above the snapshot's epoch or locked; no volatile record
  // is locked.
  nlohmann::json check() const {
    uint64_t bad = 0;
    std::vector<std::string> ex;
    auto fail = [&](const std::string& m) { if (++bad <= 10) ex.push_back(m); };
    for (auto& t : trees_)
      for (size_t level = 0; level < t.ptrs.size(); level++)
        for (uint64_t idx = 0; idx < t.ptrs[level].size(); idx++) {
          const Page* p = area_->page(snapshot_index(t.ptrs[level][idx]));
          if (!t.ptrs[level][idx] || p->hdr.storage != t.id || p->hdr.level != level || p->hdr.index != idx) {
            fail("storage " + std::to_string(t.id) + " level " + std::to_string(level) + " page " + std::to_string(idx) +
                 " names a snapshot page of another position");
            continue;
          }
          if (level == 0)
            for (uint64_t r = 0; r < t.shape.records(idx); r++) {
              uint64_t tid = const_cast<Page*>(p)->tid(r, t.shape.g.slot)->load();
              if ((tid >> 63) || epoch_of(tid) > std::max<uint64_t>(p->hdr.snapshot_epoch, snapshot_epoch_.load()))
                fail("snapshot record " + std::to_string(idx * t.shape.g.per_leaf + r) + " of storage " +
                     std::to_string(t.id) + " locked or above its snapshot's epoch");
            }
        }
    // Ordered trees: snapshot leaves contiguous over every key, each page's records sorted in
    // its range with plain TIDs of the snapshot's epochs; every leaf pointer leads somewhere.
    for (size_t i = 0; i < ordered_.size(); i++) {
      const TreeSnapshot& t = tsnap_[i];
      const std::string name = ordered_[i]->info.name;
      uint64_t expect = 0;
      for (const TreeLeaf& l : t.leaves) {
        const Page* p = area_->page(snapshot_index(l.ptr));
        if (l.low != expect || l.low >= l.high || p->hdr.storage != t.id || p->hdr.level != 0 || tp::low(p) != l.low ||
            tp::high(p) != l.high) {
          fail(name + ": snapshot leaf [" + std::to_string(l.low) + ", " + std::to_string(l.high) + ") out of place");
          expect = l.high;
          continue;
        }
        expect = l.high;
        for (uint64_t j = 0; j < tp::count(p); j++) {
          uint64_t k = tp::key(p, j, t.g.slot), w = tp::tid(p, j, t.g.slot);
          if (k < l.low || k >= l.high || (j > 0 && k <= tp::key(p, j - 1, t.g.slot)) || (w & ~kTidBits) ||
              epoch_of(w) > std::max<uint64_t>(p->hdr.snapshot_epoch, snapshot_epoch_.load()))
            fail(name + ": snapshot record " + std::to_string(k) + " out of order, flagged or above its snapshot's epoch");
        }
      }
      if (expect != kInfKey) fail(name + ": the snapshot leaves stop at key " + std::to_string(expect));
      ordered_[i]->visit(0, kInfKey, false, [&](const TreeStorage::Leaf& l) {
        Page* v = l.v;
        if (!v && !l.sp) fail(name + ": leaf pointer at key " + std::to_string(l.low) + " leads nowhere");
        if (v)
          for (uint64_t j = 0; j < tp::count(v); j++)
            if (tp::tid(v, j, t.g.slot)->load() & (kTidLock | kTidInserting | kTidMoved))
              fail(name + ": volatile record " + std::to_string(tp::key(v, j, t.g.slot)) + " locked, moved or mid-insert");
        return true;
      });
    }
    if (uint64_t u = unmatched_.load()) fail(std::to_string(u) + " snapshot-only leaf pointers found no leaf of their range");
    {
      std::lock_guard g(stats_mu_);
      for (const std::string& t : torn_) fail(t);
    }
    return {{"violations", bad}, {"examples", ex}};
  }

  // For tests and stats: volatile pages in use, snapshot pages in use.
  uint64_t volatile_pages() const { return pool_->in_use(); }
  uint64_t snapshot_pages_in_use() const { return area_->in_use(); }
  uint64_t snapshot_epoch() const { return snapshot_epoch_; }
  uint64_t durable_epoch() const { return writer_->durable_epoch(); }

  // Counters of the measured phase start here (the driver calls it as the phase starts).
  void begin_measure() {
    std::array<uint64_t, 8> c = counts();
    std::lock_guard g(stats_mu_);
    measured_ = Totals{};
    counts0_ = c;
  }
  // Workers' counters summed: volatile reads, snapshot reads, cache hits, misses, installs,
  // the misses' NVM bytes, waits for a drop pass and their time.
  std::array<uint64_t, 8> counts() const {
    std::array<uint64_t, 8> c{};
    for (auto& th : threads_) {
      c[0] += th.volatile_reads;
      c[1] += th.snapshot_reads;
      c[2] += th.cache_hits;
      c[3] += th.cache_misses;
      c[4] += th.installs;
      c[5] += th.miss_bytes;
      c[6] += th.dram_waits;
      c[7] += th.dram_wait_ns;
    }
    return c;
  }

  // Counts since begin_measure() (the measured phase; since the start when it was not called),
  // but `gleaner` and `log_writer`, which are lifetime totals (`gleaner_measured`: the phase's).
  nlohmann::json stats() const {
    std::array<uint64_t, 8> c = counts();
    LogWriter::Stats ls = writer_->stats();
    std::lock_guard g(stats_mu_);
    for (size_t i = 0; i < c.size(); i++) c[i] -= counts0_[i];
    uint64_t vr = c[0], sr = c[1], hits = c[2], misses = c[3], inst = c[4], miss_bytes = c[5];
    auto totals = [&](const Totals& t) {
      return nlohmann::json{{"runs", t.runs},
                            {"time_s", t.time_s},
                            {"map_s", t.map_s},
                            {"reduce_s", t.reduce_s},
                            {"install_s", t.install_s},
                            {"pause_s", t.pause_s},
                            {"log_records", t.records},
                            {"records_applied", t.applied},
                            {"log_bytes_gleaned", t.log_bytes},
                            {"snapshot_pages_written", t.pages},
                            {"snapshot_bytes_written", t.bytes},
                            {"volatile_pages_dropped", t.dropped},
                            {"nvm_read_bytes", t.device.nvm_read_bytes},
                            {"nvm_write_bytes", t.device.nvm_write_bytes},
                            {"clwb", t.device.clwb},
                            {"sfence", t.device.sfence},
                            {"interior_s", t.interior_s},
                            {"reducer_input_records", t.reducer_input},
                            {"work_bytes_peak", t.work_peak},
                            {"work_bytes_unbudgeted", t.work_unbudgeted},
                            // Each stage's records over its own time: the mappers' records read,
                            // the reducers' records applied (after both compactions).
                            {"mapper_records_per_s", t.map_s > 0 ? double(t.records) / t.map_s : 0.0},
                            {"reducer_records_per_s", t.reduce_s > 0 ? double(t.applied) / t.reduce_s : 0.0}};
    };
    return {{"page_size", ps_},
            {"snapshot_cache",
             {{"enabled", cache_ != nullptr},
              {"frames", cache_ ? cache_->frames() : 0},
              {"bytes", cache_ ? cache_->bytes() : 0},
              {"hits", hits},
              {"misses", misses},
              {"miss_nvm_read_bytes", miss_bytes},
              {"bytes_read_per_miss", misses ? double(miss_bytes) / double(misses) : 0.0},
              {"evictions", cache_ ? cache_->evictions() : 0}}},
            // waits: transactions refused a volatile page that waited for the gleaner's next
            // drop pass; wait_s: the workers' time in those waits (the measured phase's).
            {"volatile_pages",
             {{"in_use", pool_->in_use()},
              {"capacity", pool_->capacity()},
              {"installed", inst},
              {"waits", c[6]},
              {"wait_s", double(c[7]) * 1e-9}}},
            {"snapshot_pages", {{"in_use", area_->in_use()}, {"capacity", area_->pages()}}},
            {"reads", {{"volatile", vr}, {"snapshot", sr}}},
            // advanced: epoch advances over the run's life; asked: those the gleaner asked for
            // under DRAM pressure rather than waiting for the --epoch-ms tick.
            {"epochs",
             {{"current", g_epoch.load()},
              {"durable", writer_->durable_epoch()},
              {"snapshot", snapshot_epoch_.load()},
              {"advanced", ls.advances},
              {"asked", ls.asked_advances}}},
            {"log_writer",
             {{"batches", ls.batches},
              {"bytes", ls.bytes},
              {"records", ls.records},
              {"stalls", ls.stalls},
              {"busy_s", ls.busy_s},
              {"records_per_s", ls.busy_s > 0 ? double(ls.records) / ls.busy_s : 0.0}}},
            {"gleaner", totals(lifetime_)},
            {"gleaner_measured", totals(measured_)},
            {"ordered_trees", tree_stats()},
            {"gleaner_mappers", env_.opt.gleaner_mappers},
            {"gleaner_reducers", env_.opt.gleaner_reducers}};
  }

 private:
  struct LoadBuffer {
    std::mutex mu;
    std::vector<uint64_t> keys;
    std::vector<char> images;
  };
  struct Where {
    bool tree;       // an ordered tree, else an array storage
    uint32_t index;  // in ordered_ / tsnap_, or in storages_ / trees_
  };
  struct Storage {
    Storage(const TableInfo& ti, const ArrayShape& s) : info(ti), shape(s) {}
    TableInfo info;
    ArrayShape shape;
    Page* root = nullptr;  // always volatile
  };
  struct Totals {
    uint64_t runs = 0, records = 0, reducer_input = 0, applied = 0, log_bytes = 0, pages = 0, bytes = 0, dropped = 0;
    uint64_t work_peak = 0, work_unbudgeted = 0;
    double time_s = 0, map_s = 0, reduce_s = 0, interior_s = 0, install_s = 0, pause_s = 0;
    dev::Counters device;
  };

  // A snapshot page for reading: from the cache (pinned until done) or read whole from NVM.
  template <class F>
  void with_snapshot_page(Thread& th, SnapshotPtr sp, F&& f) {
    const Page* nvm = area_->page(snapshot_index(sp));
    const uint64_t read0 = dev::my_counters().nvm_read_bytes;
    if (cache_) {
      SnapshotCache::Pin pin = cache_->get(sp, nvm);
      (pin.hit ? th.cache_hits : th.cache_misses)++;
      if (!pin.hit) th.miss_bytes += dev::my_counters().nvm_read_bytes - read0;
      f(pin.page);
      cache_->unpin(pin.frame);
    } else {
      dev::read(nvm, ps_);
      memcpy(th.page.data(), nvm, ps_);
      th.cache_misses++;
      th.miss_bytes += dev::my_counters().nvm_read_bytes - read0;
      f(reinterpret_cast<const Page*>(th.page.data()));
    }
  }

  bool snapshot_read(Thread& th, Storage& s, DualPointer& d, int level, uint64_t leaf, uint64_t key, RowRef& ref) {
    const ArrayShape& sh = s.shape;
    SnapshotPtr sp = d.snapshot_page.load(std::memory_order_acquire);
    char* copy = th.copy_space(sh.g.len);
    for (;; level--) {
      bool leaf_level = level == 0;
      SnapshotPtr next = 0;
      with_snapshot_page(th, sp, [&](const Page* p) {
        if (leaf_level) {
          memcpy(copy, const_cast<Page*>(p)->payload(sh.slot_in_leaf(key), sh.g.slot), sh.g.len);
        } else {
          next = const_cast<Page*>(p)->child(sh.child_slot(level, leaf))->snapshot_page.load(std::memory_order_relaxed);
        }
      });
      if (leaf_level) break;
      sp = next;
    }
    th.snapshot_reads++;
    ref = RowRef{copy, nullptr, &d};
    return true;
  }

  // Install a volatile page at `d`, a copy of its snapshot page; a racing installer may win.
  Page* install(Thread& th, DualPointer& d) {
    Page* np = copy_page(th, d.snapshot_page.load(std::memory_order_acquire));
    if (!np) return nullptr;
    Page* expected = nullptr;
    if (!d.volatile_page.compare_exchange_strong(expected, np, std::memory_order_acq_rel)) {
      pool_->give(np);
      return expected;
    }
    return np;
  }
  // A fresh volatile page holding a copy of snapshot page sp (null: the pool is empty).
  Page* copy_page(Thread& th, SnapshotPtr sp) {
    Page* np = pool_->take();
    if (!np) {
      wake_gleaner();
      return nullptr;
    }
    with_snapshot_page(th, sp, [&](const Page* p) { memcpy(static_cast<void*>(np), p, ps_); });
    th.installs++;
    if (pool_->fill() > kPressure) wake_gleaner();
    return np;
  }

  // A log whose durable range (below the durable-epoch marker's LSN) holds bytes that are no
  // log record: the marker reached NVM before the records it covers (check() reports it).
  void note_torn(const GleanResult& r, const std::vector<LogRange>& ranges) {
    std::lock_guard g(stats_mu_);
    for (size_t i = 0; i < r.torn.size(); i++)
      if (r.torn[i])
        torn_.push_back("log " + std::to_string(i) + ": bytes " + std::to_string(r.stop[i]) + " to " +
                        std::to_string(ranges[i].to) +
                        " lie below the durable-epoch marker's LSN but hold no log record (never reached NVM)");
  }

  nlohmann::json tree_stats() const {
    nlohmann::json j = nlohmann::json::object();
    for (size_t i = 0; i < ordered_.size(); i++)
      j[ordered_[i]->info.name] = {{"splits", ordered_[i]->splits()},
                                   {"snapshot_leaves", i < tree_sizes_.size() ? tree_sizes_[i].first : 0},
                                   {"snapshot_interior_pages", i < tree_sizes_.size() ? tree_sizes_[i].second : 0}};
    return j;
  }

  // The current copy of a moved record (false: none, the split left it behind).
  bool relocate(Access& a) {
    TreeStorage& t = tree(a.table, "moved records");
    for (;;) {
      Page* v = t.find(a.key).v;
      int64_t s = v ? tp::find(v, a.key, t.g.slot) : -1;
      if (s < 0) return false;
      std::atomic<uint64_t>* w = tp::tid(v, uint64_t(s), t.g.slot);
      if (w->load(std::memory_order_acquire) & kTidMoved) {  // a split still copying it (we hold no lock)
        std::this_thread::yield();
        continue;
      }
      a.row = RowRef{tp::payload(v, uint64_t(s), t.g.slot), w, v};
      return true;
    }
  }

  // No volatile page for this transaction: its retry waits for the gleaner's next drop pass.
  void refuse(Thread& th) {
    th.refusal = AbortCause::DramSpace;
    th.drop_pass_seen = drop_passes_.load(std::memory_order_acquire);
    wake_gleaner();
  }

  TreeStorage& tree(uint32_t table, const char* what) {
    if (!where_.at(table).tree)
      throw std::logic_error("FOEDUS: table " + infos_[table].name + " is an array storage (dense keys): no " + what);
    return *ordered_[where_[table].index];
  }

  // A point lookup in an ordered tree (see lookup()). A lookup that finds no key puts the leaf
  // into the node set (a volatile leaf's version; a snapshot leaf's parent version and pointer).
  bool tree_lookup(Thread& th, TreeStorage& t, uint64_t key, RowRef& ref, bool for_write) {
    const uint32_t slot = t.g.slot;
    for (;;) {
      TreeStorage::Leaf l = t.find(key);
      if (l.d) dev::read(l.d, sizeof *l.d);
      Page* v = l.v;
      if (!v) {
        if (!for_write) {
          th.node_set.push_back({tp::version(l.parent), l.parent_version});
          char* copy = th.copy_space(t.g.len);
          bool found = false;
          with_snapshot_page(th, l.sp, [&](const Page* p) {
            int64_t s = tp::find_sorted(p, key, slot);
            if (s >= 0) memcpy(copy, tp::payload(p, uint64_t(s), slot), t.g.len), found = true;
          });
          th.snapshot_reads++;
          if (!found) {
            th.scan_ptrs.push_back(l.d);
            return false;
          }
          ref = RowRef{copy, nullptr, l.d};  // the CC watches d (its pointer set)
          return true;
        }
        Page* np = copy_page(th, l.sp);
        if (!np) {
          refuse(th);
          return false;
        }
        if (!(v = t.install(l.parent, key, np, *pool_))) continue;  // the parent split: again
        l.version = tp::ver(v) & ~tp::kLocked;
        if (l.version & tp::kMoved) continue;
      }
      int64_t s = tp::find(v, key, slot);
      // A committed delete's tombstone, or an insert not committed: not there, and its word goes
      // into the node set (an insert's commit, or a claim of the tombstone, changes it).
      if (s >= 0) {
        std::atomic<uint64_t>* w = tp::tid(v, uint64_t(s), slot);
        uint64_t cur = w->load(std::memory_order_acquire);
        if (cur & kTidAbsent) {
          th.node_set.push_back({w, cur});
          s = -1;
        }
      }
      if (s < 0) {
        th.node_set.push_back({tp::version(v), l.version});  // read before the records
        return false;
      }
      ref = RowRef{tp::payload(v, uint64_t(s), slot), tp::tid(v, uint64_t(s), slot), v};
      th.volatile_reads++;
      return true;
    }
  }

  void scan(Thread* th, uint32_t table, uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out, bool reverse) {
    out.clear();
    if (lo > hi || limit == 0) return;
    TreeStorage& t = tree(table, "ordered scans");
    const uint32_t slot = t.g.slot;
    std::vector<uint64_t> keys;
    t.visit(lo, hi, reverse, [&](const TreeStorage::Leaf& l) {
      keys.clear();
      if (Page* v = l.v) {
        if (th) th->node_set.push_back({tp::version(v), l.version});  // read before the records
        uint64_t n = tp::count_acq(v);
        dev::read(v, sizeof(PageHeader) + n * slot);
        for (uint64_t j = 0; j < n; j++) {
          uint64_t k = tp::key(v, j, slot);
          if (k < lo || k > hi) continue;
          std::atomic<uint64_t>* word = tp::tid(v, j, slot);
          uint64_t w = word->load(std::memory_order_acquire);
          if (!(w & kTidAbsent)) {
            keys.push_back(k);
          } else if (th && std::find(th->inserted.begin(), th->inserted.end(), word) == th->inserted.end()) {
            th->node_set.push_back({word, w});  // passed over: its insert's commit aborts us
          }
        }
      } else {
        if (th) {
          th->node_set.push_back({tp::version(l.parent), l.parent_version});
          th->scan_ptrs.push_back(l.d);
        }
        auto collect = [&](const Page* p) {
          for (uint64_t j = 0, n = tp::count(p); j < n; j++)
            if (uint64_t k = tp::key(p, j, slot); k >= lo && k <= hi) keys.push_back(k);
        };
        SnapshotPtr sp = l.sp;
        if (th) {
          with_snapshot_page(*th, sp, collect);
        } else {
          const Page* p = area_->page(snapshot_index(sp));
          dev::read(p, ps_);
          collect(p);
        }
      }
      std::sort(keys.begin(), keys.end());
      if (reverse) std::reverse(keys.begin(), keys.end());
      for (uint64_t k : keys) {
        out.push_back(k);
        if (out.size() == limit) return false;
      }
      return true;
    });
  }

  bool tree_read_current(TreeStorage& t, uint64_t key, char* out, uint64_t& version) {
    const uint32_t slot = t.g.slot;
    TreeStorage::Leaf l = t.find(key);
    if (Page* v = l.v) {
      int64_t s = tp::find(v, key, slot);
      if (s < 0) return false;
      uint64_t w = tp::tid(v, uint64_t(s), slot)->load();
      if (w & kTidAbsent) return false;
      memcpy(out, tp::payload(v, uint64_t(s), slot), t.g.len);
      version = w & kTidBits;
      return true;
    }
    const Page* p = area_->page(snapshot_index(l.sp));
    dev::read(p, ps_);
    int64_t s = tp::find_sorted(p, key, slot);
    if (s < 0) return false;
    memcpy(out, tp::payload(p, uint64_t(s), slot), t.g.len);
    version = tp::tid(p, uint64_t(s), slot);
    return true;
  }

  // 7.5 for an ordered tree (transactions paused): each leaf pointer whose range the new
  // snapshot has a leaf of gets that leaf as its snapshot half, and its volatile leaf is dropped
  // when no record in it is locked, being inserted or above the snapshot's epoch; a volatile
  // leaf of another range (split since) keeps no snapshot half. Parents adopt foster twins left
  // over first; a leaf still without a pointer of its own (no page for the adoption) stays. The
  // pages splits replaced are freed (no transaction runs, so none holds them).
  void tree_install_walk(TreeStorage& t, const TreeSnapshot& s, uint64_t epoch, uint64_t& dropped) {
    t.settle(*pool_);
    std::unordered_map<uint64_t, const TreeLeaf*> by_low;
    for (const TreeLeaf& l : s.leaves) by_low[l.low] = &l;
    const uint32_t slot = t.g.slot;
    t.visit(0, kInfKey, false, [&](const TreeStorage::Leaf& l) {
      DualPointer* d = l.d;
      if (!d) return true;
      auto it = by_low.find(l.low);
      const TreeLeaf* m = it != by_low.end() && it->second->high == l.high ? it->second : nullptr;
      Page* v = l.v;
      if (!v) {
        if (m) d->snapshot_page.store(m->ptr, std::memory_order_release);
        else unmatched_.fetch_add(1, std::memory_order_relaxed);  // check() reports it
        return true;
      }
      d->snapshot_page.store(m ? m->ptr : 0, std::memory_order_release);
      if (!m) return true;
      for (uint64_t j = 0, n = tp::count(v); j < n; j++) {
        uint64_t w = tp::tid(v, j, slot)->load(std::memory_order_relaxed);
        if ((w & (kTidLock | kTidInserting | kTidMoved)) || epoch_of(w) > epoch) return true;
      }
      d->volatile_page.store(nullptr, std::memory_order_release);
      pool_->give(v);
      dropped++;
      return true;
    });
    t.free_retired(*pool_);
  }

  void make_roots(int nthreads = 1) {
    for (size_t i = 0; i < storages_.size(); i++) {
      Storage& s = *storages_[i];
      if (s.root) pool_->give(s.root);  // (a restart after tests that ran)
      s.root = pool_->take();
      const Page* src = area_->page(snapshot_index(trees_[i].ptrs.back()[0]));
      dev::read(src, ps_);
      memcpy(static_cast<void*>(s.root), src, ps_);
    }
    for (size_t i = 0; i < ordered_.size(); i++) {  // the interior, volatile, over snapshot leaves
      ordered_[i]->build(tsnap_[i].leaves, *pool_, nthreads);
    }
  }

  void write_snapshot_meta(uint64_t id, uint64_t epoch, const std::vector<uint64_t>& gleaned) {
    const SnapshotMeta* prev = MetaArea::newest(meta_->snapshot);
    uint64_t seq = prev ? prev->seq + 1 : 1;
    SnapshotMeta& m = meta_->snapshot[seq & 1];
    m.seq = seq;
    m.id = id;
    m.epoch = epoch;
    for (uint32_t i = 0; i < kMaxLogs; i++) m.gleaned[i] = i < gleaned.size() ? gleaned[i] : 0;
    for (uint32_t i = 0; i < kMaxStorages; i++) m.root[i] = 0;
    for (auto& t : trees_) m.root[t.id] = t.ptrs.back()[0];
    for (auto& t : tsnap_) m.root[t.id] = t.root;
    m.high_water = area_->high_water();
    m.checksum = m.sum();
    dev::persist(&m, sizeof m);
    snapshot_id_ = id;
    snapshot_epoch_ = epoch;
  }

  void wake_gleaner() {
    {
      std::lock_guard g(wake_mu_);
      wake_ = true;
    }
    wake_cv_.notify_one();
  }

  void gleaner_loop() {
    auto interval = std::chrono::milliseconds(env_.opt.gleaner_interval_ms);
    auto next = std::chrono::steady_clock::now() + interval;
    while (running_.load()) {
      {
        std::unique_lock g(wake_mu_);
        wake_cv_.wait_until(g, next, [&] { return wake_ || !running_.load(); });
        wake_ = false;
      }
      if (!running_.load()) break;
      bool due = std::chrono::steady_clock::now() >= next, pressure = pool_->fill() > kPressure;
      if (due || pressure || writer_->wants_gleaning()) {
        if (pressure) await_epoch_turn();
        run_gleaner(false);
        next = std::chrono::steady_clock::now() + interval;
      }
      dev::pay_debt();
      dev::publish();
    }
  }

  // DRAM pressure: the pages written in the running epoch can be dropped only once a snapshot
  // covers it, so ask the log writer to advance the epoch now and wait until the running one is
  // durable (bounded: a transaction still running in it holds it back), rather than for the
  // --epoch-ms tick (with 20 ms epochs, two ticks per drop pass throttled every worker).
  void await_epoch_turn() {
    const uint64_t e = g_epoch.load(std::memory_order_seq_cst);
    if (writer_->durable_epoch() >= e || !writer_->running()) return;
    writer_->advance_soon();
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * env_.opt.epoch_ms + 10);
    while (writer_->durable_epoch() < e && running_.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }

  bool run_gleaner(bool) {
    std::lock_guard g(glean_mu_);
    auto t0 = std::chrono::steady_clock::now();
    uint64_t epoch = writer_->durable_epoch();  // first: the marker's LSNs below cover it
    if (epoch <= snapshot_epoch_) return false;
    std::vector<LogRange> ranges;
    for (uint32_t i = 0; i < nlogs_; i++)
      ranges.push_back({writer_->file(i), writer_->file_bytes(i), writer_->gleaned(i), writer_->marker_lsn(i)});
    for (size_t i = 0; i < ordered_.size(); i++) tsnap_[i].bounds = ordered_[i]->leaf_bounds();
    GleanResult r = glean(trees_, tsnap_, *area_, ranges, epoch, snapshot_id_ + 1, env_.opt.gleaner_mappers,
                          env_.opt.gleaner_reducers, &env_.dram);
    // glean() counted its own traffic (this thread's interior pages included): from here on,
    // the metadata and the install pass only.
    dev::Counters c0 = dev::my_counters();
    note_torn(r, ranges);
    dev::crash_point("foedus.gleaner_before_metadata");
    write_snapshot_meta(snapshot_id_ + 1, epoch, r.stop);
    dev::crash_point("foedus.gleaner_after_metadata");
    for (uint32_t i = 0; i < nlogs_; i++) writer_->set_gleaned(i, r.stop[i]);
    // 7.5: install the new snapshot pointers and drop volatile pages not modified since the
    // snapshot's epoch, with transactions paused (an in-memory pass of milliseconds).
    auto t1 = std::chrono::steady_clock::now();
    paused_.store(true, std::memory_order_seq_cst);
    for (auto& l : logs_)
      while (l->active_epoch.load(std::memory_order_seq_cst)) std::this_thread::yield();
    auto t2 = std::chrono::steady_clock::now();
    uint64_t dropped = 0;
    for (size_t i = 0; i < storages_.size(); i++)
      install_walk(trees_[i], storages_[i]->root, trees_[i].shape.root_level(), 0, epoch, dropped);
    for (size_t i = 0; i < ordered_.size(); i++) tree_install_walk(*ordered_[i], tsnap_[i], epoch, dropped);
    paused_.store(false, std::memory_order_seq_cst);
    drop_passes_.fetch_add(1, std::memory_order_release);
    area_->release_retired();
    auto t3 = std::chrono::steady_clock::now();
    r.device += dev::my_counters() - c0;
    Totals add;
    add.dropped = dropped;
    add.install_s = std::chrono::duration<double>(t3 - t1).count();
    add.pause_s = std::chrono::duration<double>(t3 - t2).count();
    add.time_s = std::chrono::duration<double>(t3 - t0).count();
    record(r, dropped, &add);
    return true;
  }

  void record(const GleanResult& r, uint64_t, const Totals* extra = nullptr) {
    std::lock_guard g(stats_mu_);
    tree_sizes_.clear();
    for (auto& t : tsnap_) tree_sizes_.push_back({t.leaves.size(), t.interior.size()});
    for (Totals* t : {&lifetime_, &measured_}) {
      t->runs++;
      t->records += r.records;
      t->reducer_input += r.reducer_input;
      t->applied += r.applied;
      t->interior_s += r.interior_s;
      t->work_peak = std::max(t->work_peak, r.work_peak_bytes);
      t->work_unbudgeted += r.work_unbudgeted_bytes;
      t->log_bytes += r.log_bytes;
      t->pages += r.pages_written;
      t->bytes += r.bytes_written;
      t->map_s += r.map_s;
      t->reduce_s += r.reduce_s;
      t->device += r.device;
      if (extra) {
        t->dropped += extra->dropped;
        t->install_s += extra->install_s;
        t->pause_s += extra->pause_s;
        t->time_s += extra->time_s;
      } else {
        t->time_s += r.map_s + r.reduce_s + r.interior_s;
      }
    }
  }

  // Set the snapshot half of every dual pointer under volatile page `v` (at `level`, position
  // `idx`) to the new snapshot; drop each volatile child with no record above `epoch` (true:
  // `v` itself may be dropped).
  bool install_walk(const SnapshotTree& t, Page* v, int level, uint64_t idx, uint64_t epoch, uint64_t& dropped) {
    if (level == 0) {
      for (uint64_t r = 0; r < t.shape.records(idx); r++) {
        uint64_t tid = v->tid(r, t.shape.g.slot)->load(std::memory_order_relaxed);
        if ((tid >> 63) || epoch_of(tid) > epoch) return false;
      }
      return true;
    }
    bool all = true;
    for (uint64_t c = 0; c < t.shape.children(level, idx); c++) {
      DualPointer& d = *v->child(c);
      uint64_t child = idx * t.shape.g.fanout + c;
      d.snapshot_page.store(t.ptrs[size_t(level) - 1][child], std::memory_order_release);
      Page* cv = d.volatile_page.load(std::memory_order_relaxed);
      if (!cv) continue;
      if (install_walk(t, cv, level - 1, child, epoch, dropped)) {
        d.volatile_page.store(nullptr, std::memory_order_release);
        pool_->give(cv);
        dropped++;
      } else {
        all = false;
      }
    }
    return all;
  }

  EngineEnv& env_;
  int nthreads_;
  uint32_t ps_ = 4096;
  uint32_t nlogs_ = 0;
  MetaArea* meta_ = nullptr;
  std::vector<std::unique_ptr<Storage>> storages_;
  std::vector<SnapshotTree> trees_;  // the current snapshot's page tables (gleaner's)
  std::vector<Where> where_;         // by table id
  std::vector<TableInfo> infos_;     // by table id
  std::vector<std::unique_ptr<TreeStorage>> ordered_;  // the ordered trees' volatile side
  std::vector<TreeSnapshot> tsnap_;  // and their snapshots (gleaner's)
  std::vector<std::unique_ptr<LoadBuffer>> loads_;
  std::atomic<uint64_t> unmatched_{0};  // snapshot-only leaf pointers no new snapshot leaf matched
  std::unique_ptr<SnapshotArea> area_;
  std::unique_ptr<VolatilePool> pool_;
  std::unique_ptr<SnapshotCache> cache_;
  char* log_mem_ = nullptr;
  std::vector<std::unique_ptr<WorkerLog>> logs_;
  std::unique_ptr<LogWriter> writer_;
  std::deque<Thread> threads_;  // (atomics inside: never relocated)
  std::atomic<uint64_t> snapshot_id_{1}, snapshot_epoch_{0};  // the gleaner writes, stats() reads
  std::atomic<bool> paused_{false};
  std::atomic<uint64_t> drop_passes_{0};
  std::atomic<bool> running_{false};
  std::thread gleaner_;
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool wake_ = false;
  std::mutex glean_mu_;
  mutable std::mutex stats_mu_;
  Totals lifetime_, measured_;
  std::vector<std::pair<uint64_t, uint64_t>> tree_sizes_;
  std::vector<std::string> torn_;  // torn logs found by gleanings (stats_mu_)  // per ordered tree: snapshot leaves, interior pages
  std::array<uint64_t, 8> counts0_{};
};

}  // namespace nvt::foedus

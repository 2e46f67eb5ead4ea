// WBL, write-behind logging (Arulraj et al., VLDB'16, as papers/zen-vldb21.txt section 2.3 and
// Figure 1(b) describe and evaluate it; facts in ../shared/notes/anchor-systems.md):
//   DRAM:    the hash and ordered indexes and a tuple cache (zen's MetCache, used for images
//            only: per-thread regions, CLOCK, pinning) of at most database / P (the DRAM rule).
//   NVM:     multi-versioned tuples (version.h: commit timestamp, tuple ID, writer txn id,
//            previous-version reference, head id), out of place in zen's 2 MB heap pages with
//            zen's light-weight space management (DRAM free lists, nothing persisted on
//            allocation or free); one persistent "head" per tuple holding the CC method's
//            per-tuple metadata, persisted whenever the CC changes it (lock words and read
//            timestamps written on reads included): the cost the Zen paper attributes to WBL;
//            the write-behind log, a ring of {cp, cd} records.
//   Commit:  persist() takes a commit timestamp no larger than the durable dirty bound cd
//            (waiting for the next record when the grant is used up), writes every modified
//            tuple as a new version in a free slot (the previous version stays intact), flushes
//            them and fences.
//   Group commit: a thread every --group-commit-us computes cp, the largest timestamp below
//            which no commit is still persisting its versions, and cd, the bound for the next
//            interval, appends {cp, cd}, flushes and fences it; only then may timestamps up to
//            cd be taken, and commits up to cp be acknowledged (sync()); a read-only one once
//            cp reaches the newest timestamp taken when it committed. Without the thread
//            (unit tests, which never call start()) each commit does the group commit itself.
//   Recover: read the last durable record; every version with a timestamp above cp (in (cp, cd]
//            by construction) never committed and is erased; keep per key the newest committed
//            version; rebuild indexes, heads and free lists. No redo, no undo.
// Supports every CC method but MCSI/PGSI (they need nvmvcc).
//
// CC metadata persistence: the engine sees the transaction between CC calls (lookup/insert of
// the next tuple, persist(), release()); there it compares each touched head with a snapshot
// and persists (flush + fence) each one that changed. The CC's own dev::update()/write() calls
// have already counted the stores, so those flushes count clwb only (dev::flush_written).
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
#include "storage/engines/wbl/version.h"
#include "storage/engines/zen/met_cache.h"
#include "storage/engines/zen/nvm_heap.h"
#include "storage/engines/zen/recovery.h"
#include "storage/hash_index.h"
#include "storage/parallel.h"
#include "storage/prefetch.h"
#include "storage/table_indexes.h"
#include "storage/violations.h"

namespace nvt::wbl {

using zen::Garbage;
using zen::HeapRegion;
using zen::kPageBytes;
using zen::NvmHeap;

constexpr uint64_t kLoadCts = 1;               // commit timestamp of loaded tuples
constexpr uint64_t kMinEntriesPerRegion = 64;  // as Zen: a transaction's working set
constexpr uint64_t kMinEntriesPerScanRegion = 320;
constexpr size_t kGcPerTxn = 64;
constexpr uint64_t kMinGrant = 256;  // timestamps a record grants beyond those already taken
constexpr uint64_t kMaxHeapBytes = (1ull << 32) * 32;  // previous-version references: 32 bits of 32 B

template <class CC>
class Wbl {
 public:
  static constexpr const char* name = "wbl";
  template <class C>
  static constexpr bool supports = !needs_nvmvcc<C> && !needs_foedus<C> && !needs_caracal<C>;
  using Meta = typename CC::Meta;

  // A head: the CC's per-tuple metadata in persistent NVM, one per tuple (all its versions).
  static constexpr uint32_t kHeadStride = std::max<uint32_t>(16, (sizeof(Meta) + 15) / 16 * 16);
  static constexpr uint32_t kMetaWords = kHeadStride / 8;
  static_assert(kHeadStride <= 64, "wbl: a CC's per-tuple metadata must fit one cache line");
  static_assert(alignof(Meta) <= 16);

  struct Aux {  // what a cache entry keeps beside the image: its tuple's head
    char* head = nullptr;
    uint32_t hid = 0;
  };
  using Cache = zen::MetCache<Aux>;
  using Entry = typename Cache::Entry;

  struct Tracked {
    char* head;
    uint64_t snap[kMetaWords];
  };

  struct Thread {
    int tid = 0;
    bool active = false;
    uint64_t hits = 0, accesses = 0;
    std::vector<Entry*> pinned;
    std::vector<std::pair<Access*, char*>> written;  // persist() -> install()
    std::vector<Tracked> tracked;                    // heads this transaction touched
    std::vector<std::pair<uint32_t, uint32_t>> undone_heads;  // (table, head) of rolled-back inserts
    std::deque<Garbage> garbage;
    std::vector<Garbage> tombstones;  // held until recovery (as Zen's)
    std::vector<uint32_t> regions;    // heap regions this thread writes; its own one last
    std::vector<uint64_t> hand;
    std::vector<uint64_t> foreign_hand;  // per (table, region): victim() in other regions
    std::vector<uint32_t> need;
    uint64_t borrowed = 0;  // entries taken from other regions
    uint64_t min_cts = 0, txn_seq = 0;
    uint64_t last_cts = 0;  // the last commit's timestamp; a read-only one's: the newest taken
    uint64_t meta_flushes = 0, meta_fences = 0, versions = 0, grant_waits = 0, reclaimed = 0;
    std::chrono::steady_clock::time_point short_since{};
  };

  // Zen's heap (nvm_heap.h): superseded versions wait for the next durable record and for every
  // running transaction, as Zen's for the global minimum.
  static uint64_t heap_pages(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    return NvmHeap::pages_for(tables, o.threads, slot_bytes);
  }
  static uint64_t metadata_bytes(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    return NvmHeap::allocator_bytes(tables, o.threads, slot_bytes);
  }
  static uint64_t nvm_bytes(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    uint64_t p = heap_pages(tables, o), heads = 0;
    for (auto& t : tables) heads += t.capacity * kHeadStride + (2ull << 20);
    return NvmHeap::nvm_bytes(p) + heads + kLogRecords * sizeof(LogRecord) + (8ull << 20);
  }
  static std::pair<uint64_t, uint64_t> hit_counts(const Thread& th) { return {th.hits, th.accesses}; }

  Wbl(EngineEnv& env, const std::vector<TableInfo>& tables)
      : env_(env), nthreads_(env.opt.threads), interval_us_(env.opt.group_commit_us),
        shared_(new Shared[size_t(env.opt.threads)]) {
    if (tables.size() > zen::kMaxTables) throw std::invalid_argument("wbl: too many tables");
    if (interval_us_ < 1 || interval_us_ > 1000000)
      throw std::invalid_argument("wbl: group-commit interval must be 1..1000000 us");
    std::vector<uint32_t> strides;
    for (uint32_t i = 0; i < tables.size(); i++) {
      if (tables[i].capacity >= (1ull << 32)) throw std::invalid_argument("wbl: table " + tables[i].name + " exceeds 2^32 rows");
      auto t = std::make_unique<Table>();
      t->make_indexes(tables[i], env.dram);
      t->len = tables[i].schema.tuple_size();
      t->heads = env.nvm.region("wbl.heads." + std::to_string(i), t->info.capacity * kHeadStride,
                                dev::RegionKind::Persistent).base;
      strides.push_back(slot_bytes(t->len));
      tables_.push_back(std::move(t));
    }
    env.dram.charge(kPrivateBytesPerThread * uint64_t(nthreads_), "private");
    heap_ = std::make_unique<NvmHeap>(env.nvm, heap_pages(tables, env.opt), "wbl", strides, nthreads_, false,
                                      "wbl: NVM version heap full (raise --nvm-size)");
    if (heap_->pages().pages() * kPageBytes > kMaxHeapBytes) throw std::invalid_argument("wbl: version heap above 128 GiB");
    env.dram.charge(metadata_bytes(tables, env.opt), "wbl.allocator");
    log_ = reinterpret_cast<LogRecord*>(
        env.nvm.region("wbl.log", kLogRecords * sizeof(LogRecord), dev::RegionKind::Persistent).base);

    // The tuple cache: the DRAM for data (database / P), within what indexes, private data and
    // allocator metadata left of the budget; the allowances never become cache.
    uint64_t min_entries = kMinEntriesPerRegion;
    for (auto& t : tables_)
      if (t->info.ordered) min_entries = kMinEntriesPerScanRegion;
    std::vector<zen::CacheDemand> d;
    for (auto& t : tables_) {
      uint64_t min = min_entries * uint64_t(nthreads_);
      d.push_back({1.0, t->info.capacity * t->len, Cache::entry_bytes(t->len), min, t->info.capacity + min});
    }
    std::vector<uint64_t> plan;
    try {
      plan = zen::plan_cache(env.dram.data_left(), d, env.dram.left());
    } catch (const dev::BudgetError& e) {
      std::string m = e.what();
      auto at = m.find("Zen's minimum Met-Cache");
      if (at != std::string::npos) m.replace(at, 23, "WBL's minimum tuple cache");
      throw dev::BudgetError(m);
    }
    for (size_t i = 0; i < tables_.size(); i++)
      tables_[i]->cache = std::make_unique<Cache>(tables_[i]->len, plan[i] / uint64_t(nthreads_), nthreads_,
                                                  env.dram, "tuple_cache." + tables_[i]->info.name);

    threads_.resize(size_t(nthreads_));
    for (int t = 0; t < nthreads_; t++) {
      Thread& th = threads_[size_t(t)];
      th.tid = t;
      th.regions = heap_->regions_of(t);
      th.hand.assign(tables_.size(), 0);
      th.foreign_hand.assign(tables_.size() * size_t(nthreads_), 0);
      th.need.assign(tables_.size(), 0);
    }
  }

  ~Wbl() { stop(); }

  Thread& thread(int tid) { return threads_.at(size_t(tid)); }
  size_t tables() const { return tables_.size(); }
  const TableInfo& table_info(uint32_t t) const { return tables_[t]->info; }

  void load(Thread& th, uint32_t table, uint64_t key, const char* image) {
    Table& t = *tables_[table];
    char* slot = take(th, heap_->region(size_t(th.tid)), table);
    uint32_t hid = new_head(t);
    Version* v = Version::at(slot);
    v->set_cts(kLoadCts);
    v->set_id(zen::NvmTuple::make_id(table, key));
    v->txn = 0;
    v->link = hid;
    memcpy(v->data(), image, t.len);
    new (head(t, hid)) Meta();
    t.index_loaded(key, zen::nvm_value(slot));
    t.order_key(key);
  }

  bool insert(Thread& th, uint32_t table, uint64_t key, RowRef& ref) {
    enter(th);
    Table& t = *tables_[table];
    th.accesses++;
    if (t.index->lookup(key) != HashIndex::kNoValue) return false;
    Entry* e = victim(th, table);
    Cache::clear_for_insert(e, key, table, t.len);
    e->meta.hid = new_head(t);
    e->meta.head = head(t, e->meta.hid);
    track(th, e->meta.head);
    new (e->meta.head) Meta();  // fresh CC metadata, persisted at the next step if it changed
    dev::write(e->meta.head, sizeof(Meta));
    e->state.store(1 | zen::kClock | zen::kNew, std::memory_order_release);
    if (!t.index->insert(key, reinterpret_cast<uint64_t>(e))) {
      e->state.store(zen::kFree, std::memory_order_release);
      th.undone_heads.push_back({table, e->meta.hid});
      return false;
    }
    return pinned(th, e, ref);
  }
  void undo_insert(Thread& th, Access& a) {
    Entry* e = static_cast<Entry*>(a.row.handle);
    tables_[a.table]->index->remove(a.key);
    e->state.fetch_or(zen::kCopy, std::memory_order_acq_rel);
    th.undone_heads.push_back({a.table, e->meta.hid});  // reused after the CC released it
  }
  bool visible(const Access& a) const {
    return Cache::visible(static_cast<Entry*>(a.row.handle), a.type == AccessType::Insert);
  }
  void scan_keys(uint32_t table, uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out,
                 bool reverse) const {
    tables_.at(table)->scan(lo, hi, limit, out, reverse);
  }

  void prefetch(uint32_t table, const uint64_t* keys, size_t n) const {
    const Table& t = *tables_[table];
    prefetch_batch(*t.index, keys, n, [&](uint64_t v) {
      if (zen::is_nvm_value(v)) return std::pair<const void*, size_t>(zen::nvm_of(v), slot_bytes(t.len));
      return std::pair<const void*, size_t>(reinterpret_cast<const void*>(v), Cache::entry_bytes(t.len));
    });
  }

  bool lookup(Thread& th, uint32_t table, uint64_t key, RowRef& ref) {
    enter(th);
    Table& t = *tables_[table];
    th.accesses++;
    for (;;) {
      uint64_t v;
      if (Entry* e = Cache::pin_indexed(*t.index, key, v)) {
        th.hits++;
        return pinned(th, e, ref);
      }
      if (v == HashIndex::kNoValue) return false;
      // Miss: the newest version comes into this thread's cache region.
      Entry* e = victim(th, table);
      fill(e, t, table, key, zen::nvm_of(v));
      if (t.index->update(key, v, reinterpret_cast<uint64_t>(e))) return pinned(th, e, ref);
      e->state.store(zen::kFree, std::memory_order_release);
    }
  }

  // Room for the transaction's new versions, checked before the CC validates (as Zen's).
  bool reserve(Thread& th, const Access* acc, size_t n) {
    return heap_->reserve(th.regions, th.need, acc, n, th.short_since, [&] { reclaim(th, ~size_t(0)); }, [] {});
  }

  // Commit (commit.h): versions out of place, flushed, fenced, within the grant.
  uint64_t persist(Thread& th, Access* acc, size_t n);

  // Durable commit latency without blocking the worker (the driver): a commit is durable once
  // a record's cp reaches its token; durable_point() is that cp and the TSC at which its record
  // was durable (or a later record's: the driver asks once per transaction).
  uint64_t commit_token(const Thread& th) const { return th.last_cts; }
  std::pair<uint64_t, uint64_t> durable_point() const;

  void sync(Thread& th);

  void install(Thread& th, Access& a) {
    char* slot = nullptr;
    for (auto& [acc, s] : th.written)
      if (acc == &a) slot = s;
    if (!slot) throw std::logic_error("wbl: install of a write persist() did not see");
    Table& t = *tables_[a.table];
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
      Cache::install(e, a.local, a.len, slot, a.version, zen::kNew);
      t.order_key(a.key);
      return;
    }
    Cache::install(e, a.local, a.len, slot, a.version);
    th.garbage.push_back({old, a.table, a.version});
  }

  void committed(Thread&) {}

  void release(Thread& th, Access*, size_t) {
    persist_meta(th, 0);  // what finish() or abort() wrote (unlocks, timestamps)
    for (Entry* e : th.pinned) Cache::unpin(e);
    th.pinned.clear();
    th.written.clear();
    th.tracked.clear();
    for (auto [table, hid] : th.undone_heads) {
      Table& t = *tables_[table];
      std::lock_guard g(t.head_mu);
      t.free_heads.push_back(hid);
    }
    th.undone_heads.clear();
    if (th.active) {
      shared_[th.tid].active_since.store(0, std::memory_order_seq_cst);
      th.active = false;
    }
    reclaim(th, kGcPerTxn);
  }

  // The loaded database is written back, then the first record (cp = cd = the load's
  // timestamp) and the loaded mark make it complete.
  void after_load() {
    heap_->flush_used_pages();
    for (auto& t : tables_) dev::flush(t->heads, t->head_next.load() * kHeadStride);
    dev::fence();
    append_record(kLoadCts, kLoadCts);
    cp_.store(kLoadCts);
    cd_.store(kLoadCts);
    heap_->pages().set_loaded();
  }

  void start() {
    if (running_.exchange(true)) return;
    // Its device traffic is published after every record (dev::publish), so the harness counts
    // it in the measured phase, in per_txn and per_txn.background, as MMDB's checkpointer.
    gc_thread_ = std::thread([this] {
      dev::set_thread_node(0);
      dev::publish();
      auto next = std::chrono::steady_clock::now();
      const auto step = std::chrono::microseconds(interval_us_);
      while (running_.load(std::memory_order_acquire)) {
        next += step;
        auto now = std::chrono::steady_clock::now();
        if (next > now) std::this_thread::sleep_until(next);
        else next = now;  // fell behind (descheduled): no burst of records to catch up
        if (!running_.load(std::memory_order_acquire)) break;
        group_commit(true);
        dev::pay_debt();
        dev::publish();
      }
      gc_counters_ = dev::my_counters();
    });
  }
  // Tests: the group-commit thread stops as a power failure would stop it, with no last record.
  void halt() {
    if (running_.exchange(false) && gc_thread_.joinable()) gc_thread_.join();
  }
  // Stops the group-commit thread and writes a last record that covers every commit.
  void stop() {
    if (running_.exchange(false) && gc_thread_.joinable()) gc_thread_.join();
    if (log_ && heap_ && heap_->pages().loaded()) group_commit(false);
  }

  RecoveryReport recover(int nthreads);  // recovery.h

  bool read_current(uint32_t table, uint64_t key, char* out, uint64_t& version) {
    Table& t = *tables_.at(table);
    uint64_t v = t.index->lookup(key);
    if (v == HashIndex::kNoValue) return false;
    if (zen::is_nvm_value(v)) {
      Version* x = Version::at(zen::nvm_of(v));
      memcpy(out, x->data(), t.len);
      version = x->cts();
    } else {
      Entry* e = reinterpret_cast<Entry*>(v);
      if (e->state.load() & zen::kNew) return false;
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
                             {"bytes", t->cache->bytes()},
                             {"table_rows", t->info.capacity},
                             {"evictions", t->cache->evictions.load()}};
    uint64_t hits = 0, acc = 0, mf = 0, mfe = 0, ver = 0, waits = 0, rec = 0, pending = 0, borrowed = 0;
    for (auto& th : threads_) {
      hits += th.hits;
      acc += th.accesses;
      mf += th.meta_flushes;
      mfe += th.meta_fences;
      ver += th.versions;
      waits += th.grant_waits;
      rec += th.reclaimed;
      pending += th.garbage.size();
      borrowed += th.borrowed;
    }
    return {{"tuple_cache", cache},
            {"cache_entries_borrowed", borrowed},
            {"cache_hits", hits},
            {"tuple_accesses", acc},
            {"versions_written", ver},
            {"cc_meta_flushes", mf},   // heads flushed because the CC changed them
            {"cc_meta_fences", mfe},   // fences those flushes needed
            {"grant_waits", waits},    // commits that waited for a record to raise cd
            {"versions_reclaimed", rec},
            {"garbage_pending", pending},
            {"group_commit",
             {{"interval_us", interval_us_},
              {"records", records_.load()},
              {"cp", cp_.load()},
              {"cd", cd_.load()},
              {"thread_clwb", gc_counters_.clwb},
              {"thread_sfence", gc_counters_.sfence},
              {"thread_nvm_write_bytes", gc_counters_.nvm_write_bytes}}},
            {"recovery", {{"cp", recovery_cp_}, {"cd", recovery_cd_},
                          {"versions_kept", recovered_versions_}, {"versions_erased", discarded_versions_}}},
            {"nvm_pages", {{"used", heap_->pages().used()}, {"total", heap_->pages().pages()}}},
            {"next_cts", counter_.load()}};
  }

 private:
  struct Table : TableIndexes {
    uint32_t len = 0;
    std::unique_ptr<Cache> cache;
    char* heads = nullptr;
    std::atomic<uint64_t> head_next{0};
    std::mutex head_mu;
    std::vector<uint32_t> free_heads;  // after recovery, or rolled-back inserts
  };

  struct alignas(64) Shared {
    std::atomic<uint64_t> active_since{0};  // clock when the running transaction began; 0: none
    std::atomic<uint64_t> inflight{0};      // a lower bound of the timestamp being persisted; 0: none
  };

  static char* head(Table& t, uint32_t hid) { return t.heads + uint64_t(hid) * kHeadStride; }

  uint32_t new_head(Table& t) {
    {
      std::lock_guard g(t.head_mu);
      if (!t.free_heads.empty()) {
        uint32_t h = t.free_heads.back();
        t.free_heads.pop_back();
        return h;
      }
    }
    uint64_t h = t.head_next.fetch_add(1);
    if (h >= t.info.capacity) throw std::runtime_error("table " + t.info.name + " is full");
    return uint32_t(h);
  }

  uint64_t prev_ref(const char* slot) const {
    return slot ? uint64_t(slot - heap_->pages().page(0)) / 32 + 1 : 0;
  }

  // A transaction starts at its first lookup: its start bounds what may be reclaimed.
  void enter(Thread& th) {
    if (!th.tracked.empty()) persist_meta(th, th.tracked.size() - 1);  // the previous access
    if (th.active) return;
    shared_[th.tid].active_since.store(counter_.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
    th.active = true;
  }

  bool pinned(Thread& th, Entry* e, RowRef& ref) {
    th.pinned.push_back(e);
    if (th.tracked.empty() || th.tracked.back().head != e->meta.head) track(th, e->meta.head);
    ref = RowRef{e->data(), e->meta.head, e};
    return true;
  }

  void track(Thread& th, char* h) {
    Tracked& t = th.tracked.emplace_back();
    t.head = h;
    for (uint32_t w = 0; w < kMetaWords; w++)
      t.snap[w] = std::atomic_ref<uint64_t>(reinterpret_cast<uint64_t*>(h)[w]).load(std::memory_order_relaxed);
  }

  void persist_meta(Thread& th, size_t from);  // the CC's changed heads (commit.h)

  void fill(Entry* e, Table& t, uint32_t table, uint64_t key, char* slot) {
    Version* v = Version::at(slot);
    dev::read(slot, kVersionHeader + t.len);
    memcpy(e->data(), v->data(), t.len);
    dev::write(e->data(), t.len);
    e->nvm = slot;
    e->key = key;
    e->table = table;
    e->cts = v->cts();
    e->meta.hid = v->head();
    e->meta.head = head(t, e->meta.hid);
    e->state.store(1 | zen::kClock, std::memory_order_release);
  }

  Entry* victim(Thread& th, uint32_t table) {
    Table& t = *tables_[table];
    auto unlink = [&](Entry* e) {
      if (!t.index->update(e->key, reinterpret_cast<uint64_t>(e), zen::nvm_value(e->nvm)))
        throw std::logic_error("wbl: evicted cache entry was not indexed");
    };
    if (Entry* e = t.cache->victim(th.tid, th.hand[table], unlink)) return e;
    // Every entry of the own region is pinned (a transaction that touches many tuples, e.g.
    // TPC-C's StockLevel): take one from another region. Entries hold images only (the CC
    // metadata is in the heads), so any thread may evict any unpinned entry: the state CAS
    // decides, and each thread walks other regions with hands of its own.
    for (int r = 1; r < nthreads_; r++) {
      int o = (th.tid + r) % nthreads_;
      if (Entry* e = t.cache->victim(o, th.foreign_hand[size_t(table) * size_t(nthreads_) + size_t(o)], unlink)) {
        th.borrowed++;
        return e;
      }
    }
    throw std::runtime_error("wbl: tuple cache region of " + t.info.name +
                             " too small for one transaction (every entry pinned; raise --dram-size)");
  }

  char* take(Thread& th, HeapRegion& r, uint32_t table) {
    return heap_->take(r, table, [&] { reclaim(th, ~size_t(0)); });
  }

  // The write-behind log (group_commit.h).
  void await_grant(Thread& th, uint64_t cts);

  void group_commit(bool grant);

  void append_record(uint64_t cp, uint64_t cd);

  LogRecord last_record() const;

  // Reclamation: an old version may be reused once its successor is covered by a durable record
  // (else recovery may need it) and no running transaction started before the successor.
  uint64_t reclaim_bound() const {
    uint64_t m = counter_.load(std::memory_order_seq_cst);
    for (int t = 0; t < nthreads_; t++) {
      uint64_t a = shared_[t].active_since.load(std::memory_order_seq_cst);
      if (a && a < m) m = a;
    }
    return std::min(m, cp_.load(std::memory_order_acquire) + 1);
  }

  void reclaim(Thread& th, size_t budget) {
    heap_->collect_inbox(th.tid);
    if (th.garbage.empty()) return;
    if (th.garbage.front().cts >= th.min_cts) th.min_cts = reclaim_bound();
    th.reclaimed += heap_->drain(th.tid, th.garbage, th.min_cts, budget);
  }

  EngineEnv& env_;
  int nthreads_;
  int interval_us_;
  std::vector<std::unique_ptr<Table>> tables_;
  std::unique_ptr<NvmHeap> heap_;
  std::vector<Thread> threads_;
  std::unique_ptr<Shared[]> shared_;
  LogRecord* log_ = nullptr;
  std::atomic<uint64_t> counter_{kLoadCts + 1};  // the commit-timestamp clock
  std::atomic<uint64_t> cp_{0}, cd_{0};           // of the last durable record
  std::atomic<uint64_t> cp_tsc_{0};               // when that record was durable
  std::mutex gc_mu_;
  uint64_t seq_ = 0, last_c_ = kLoadCts + 1;
  std::atomic<uint64_t> records_{0};
  std::atomic<bool> running_{false};
  std::thread gc_thread_;
  dev::Counters gc_counters_;
  uint64_t recovery_cp_ = 0, recovery_cd_ = 0, recovered_versions_ = 0, discarded_versions_ = 0;
};

}  // namespace nvt::wbl

// The member functions of WBL's concepts, one file each (defined inline, as they were in the
// class, so that the hot path compiles as before).
#include "storage/engines/wbl/commit.h"
#include "storage/engines/wbl/group_commit.h"
#include "storage/engines/wbl/recovery.h"
#include "storage/engines/wbl/check.h"

// NVMVCC: a single-layer multi-version engine in NVM (papers/mcsi.txt section 3). Every tuple
// version lives in NVM and is read and written there; there is no DRAM copy of tuples. Only
// the indexes (key -> record head) are in DRAM. A record head holds the latest-version pointer;
// versions form a newest-to-oldest chain, each stamped with its creator's txid; which versions
// are committed is decided by the CC method's persistent transaction status (MCSI's per-thread
// status arrays, PGSI's shared commit log), so a commit persists the new versions' payloads
// (here) and then the status (the CC), and no log is written.
// Supports only the snapshot-isolation methods written for it (concurrency_control/mcsi.h,
// pgsi.h): they walk the version chains through what lookup() exposes (si_common.h).
// Inserts, deletes, scans: an insert takes a fresh record head for a key never seen (or the
// key's head, whose chain ends in a tombstone) and the CC links the first version, stamped with
// the inserter's txid like any update; a delete is an update that links a tombstone version
// (section 3). Snapshots decide what exists: the hash index keeps every key that has a head.
// A table with TableInfo::ordered keeps its keys in an ordered index too: a key enters it when
// its insert commits and leaves it once its delete is below the CC's horizon (every snapshot
// sees it), so a scan lists every key a snapshot may hold and read() filters them.
// Each table has its own version heap (slots of its tuple size).
// Recovery in a fresh process keeps, per record, the newest version whose creator committed,
// freezes it (txid 0), unlinks everything above and below, rebuilds the indexes and the free
// slot lists, and clears the CC's status storage. A record whose newest committed version is
// a tombstone, or that has none (an insert that never committed), is dropped: its head cleared.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/engine.h"
#include "storage/engines/nvmvcc/version.h"
#include "storage/hash_index.h"
#include "storage/table_indexes.h"
#include "storage/violations.h"

namespace nvt::nvmvcc {

constexpr uint64_t kRecoveryHeads = 1 << 13;  // record heads one recovery thread takes at a time

template <class C>
concept SiOnNvmvcc = requires {
  { C::kNvMvcc } -> std::convertible_to<bool>;
  C::kNvmStateBytes;
};

template <class CC>
class NvMvcc {
 public:
  static constexpr const char* name = "nvmvcc";
  template <class C>
  static constexpr bool supports = SiOnNvmvcc<C>;
  static constexpr uint32_t kMaxTables = 32;
  static constexpr uint64_t kMagic = 0x4e564d5643430001ull;  // "NVMVCC" 1

  struct Table : TableIndexes {
    RecordHead* heads = nullptr;  // NVM, record ID order
    std::atomic<uint64_t> next{0};
    std::unique_ptr<VersionHeap> heap;
  };
  // A committed delete whose key leaves the ordered index once CC::below_horizon(txid).
  struct DeadKey {
    uint32_t table;
    uint64_t key;
    RecordHead* head;
    uint64_t ref;  // the tombstone version
    uint64_t txid;
  };
  struct Thread {
    std::vector<SiCtx> ctx;  // per table: the CC's view of that table's version heap
    uint64_t accesses = 0;
    std::deque<DeadKey> dead;
  };

  static uint64_t slot_bytes(const TableInfo& t) {
    return (sizeof(Version) + t.schema.tuple_size() + 63) / 64 * 64;
  }
  // Version slots: two per row (the current version and one being replaced) plus room for
  // versions pruning has not reached yet.
  static uint64_t heap_slots(const TableInfo& t, const EngineOptions& o) {
    return 2 * t.capacity + uint64_t(std::max(o.threads, 1)) * 8192 + 4096;
  }
  static uint64_t nvm_bytes(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    uint64_t b = 4096 + CC::kNvmStateBytes;
    for (auto& t : tables)
      b += t.capacity * sizeof(RecordHead) + heap_slots(t, o) * slot_bytes(t) + 2 * (2ull << 20);
    return b + 2 * (2ull << 20) + (8ull << 20);
  }
  // No cache: every access is an NVM access.
  static std::pair<uint64_t, uint64_t> hit_counts(const Thread& th) { return {0, th.accesses}; }
  static RecordHead* head_of(const Access& a) { return static_cast<RecordHead*>(a.row.handle); }

  NvMvcc(EngineEnv& env, const std::vector<TableInfo>& tables)
      : env_(env), threads_(std::max(env.opt.threads, 1)) {
    if (tables.size() > kMaxTables) throw std::invalid_argument("nvmvcc: too many tables");
    dev::Region meta = env.nvm.region("nvmvcc.meta", 4096, dev::RegionKind::Persistent);
    meta_ = reinterpret_cast<MetaArea*>(meta.base);
    bool fresh = !meta.existed;
    dev::Region ccr = env.nvm.region("nvmvcc.cc", CC::kNvmStateBytes, dev::RegionKind::Persistent);
    CC::attach(ccr.base, threads_, !ccr.existed);
    for (auto& ti : tables) {
      auto t = std::make_unique<Table>();
      t->heads = reinterpret_cast<RecordHead*>(
          env.nvm.region("nvmvcc.heads." + ti.name, ti.capacity * sizeof(RecordHead),
                         dev::RegionKind::Persistent).base);
      t->make_indexes(ti, env.dram);
      uint64_t sb = slot_bytes(ti), ns = heap_slots(ti, env.opt);
      dev::Region heap = env.nvm.region("nvmvcc.versions." + ti.name, ns * sb, dev::RegionKind::Persistent);
      if (heap.existed) ns = heap.size / sb;
      t->heap = std::make_unique<VersionHeap>(heap.base, sb, ns, threads_);
      tables_.push_back(std::move(t));
    }
    env.dram.charge(kPrivateBytesPerThread * uint64_t(threads_), "private");
    if (fresh) {
      memset(meta_, 0, sizeof *meta_);
      meta_->magic = kMagic;
      dev::persist(meta_, sizeof *meta_);
    }
    threads_ctx_ = std::vector<Thread>(size_t(threads_));
    for (int i = 0; i < threads_; i++) {
      threads_ctx_[size_t(i)].ctx.resize(tables_.size());
      for (size_t t = 0; t < tables_.size(); t++) {
        threads_ctx_[size_t(i)].ctx[t].tid = i;
        threads_ctx_[size_t(i)].ctx[t].heap = tables_[t]->heap.get();
      }
    }
  }

  Thread& thread(int tid) { return threads_ctx_.at(size_t(tid)); }
  size_t tables() const { return tables_.size(); }
  const TableInfo& table_info(uint32_t t) const { return tables_[t]->info; }

  // The loaded image is a frozen version (txid 0, committed), made durable by after_load().
  void load(Thread& th, uint32_t table, uint64_t key, const char* image) {
    Table& t = *tables_.at(table);
    RecordHead* h = new_head(t, key);
    uint64_t ref = t.heap->alloc(th.ctx[table].tid);
    if (!ref) throw std::runtime_error("nvmvcc: version heap full while loading");
    Version* v = t.heap->at(ref);
    v->txid.store(kFrozenTxid, std::memory_order_relaxed);
    v->prev = 0;
    v->inl.store(kCommitted, std::memory_order_relaxed);
    v->flags = 0;
    v->seq = 0;
    uint32_t len = t.info.schema.tuple_size();
    memcpy(v->data(), image, len);  // counted by after_load()'s flush
    h->latest.store(ref, std::memory_order_release);
    t.index_loaded(key, reinterpret_cast<uint64_t>(h));
    t.order_key(key);
  }

  // Everything loaded made durable, then the row counts: the image is recoverable from here.
  void after_load() {
    for (auto& t : tables_) {
      dev::flush(t->heads, t->next.load() * sizeof(RecordHead));
      if (t->heap->high_water()) dev::flush(t->heap->at(1), t->heap->high_water() * t->heap->slot_bytes());
    }
    dev::fence();
    for (size_t i = 0; i < tables_.size(); i++)
      meta_->rows[i] = std::min(tables_[i]->next.load(), tables_[i]->info.capacity);
    meta_->ntables = uint32_t(tables_.size());
    dev::persist(meta_, sizeof *meta_);
    meta_->loaded = 1;
    dev::persist(&meta_->loaded, sizeof meta_->loaded);
  }

  // The CC finds the version to read or updates the chain through the head (handle) and this
  // worker's context (meta); there is no tuple image before the CC has chosen a version.
  bool lookup(Thread& th, uint32_t table, uint64_t key, RowRef& ref) {
    Table& t = *tables_[table];
    uint64_t v = t.index->lookup(key);
    if (v == HashIndex::kNoValue) return false;
    th.accesses++;
    ref = RowRef{nullptr, &th.ctx[table], reinterpret_cast<RecordHead*>(v)};
    return true;
  }

  // The key's record head, a fresh one for a key never seen: the CC links the insert's version
  // if the key is absent from its snapshot (si_common.h), so a duplicate fails there.
  bool insert(Thread& th, uint32_t table, uint64_t key, RowRef& ref) {
    Table& t = *tables_[table];
    uint64_t v = t.index->lookup(key);
    if (v == HashIndex::kNoValue) {
      auto h = reinterpret_cast<uint64_t>(new_head(t, key));
      v = t.index->insert(key, h) ? h : t.index->lookup(key);  // lost a race: the winner's head
    }
    th.accesses++;
    ref = RowRef{nullptr, &th.ctx[table], reinterpret_cast<RecordHead*>(v)};
    return true;
  }
  // Nothing to undo: the CC marks the insert's version aborted, which every reader passes over.
  void undo_insert(Thread&, Access&) {}

  // Keys of `table` in [lo, hi] from its ordered index: every key a snapshot may hold (and
  // some it does not, which the CC's read filters).
  void scan_keys(uint32_t table, uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out,
                 bool reverse) const {
    tables_.at(table)->scan(lo, hi, limit, out, reverse);
  }

  // The new versions' payloads (written in place in NVM by the workload), and a delete's
  // tombstone flag, made durable before the CC's commit status is.
  void persist(Thread&, Access* acc, size_t n) {
    bool any = false;
    for (size_t i = 0; i < n; i++) {
      Access& a = acc[i];
      if (a.type == AccessType::Read) continue;
      any = true;
      if (a.type == AccessType::Delete) {
        Version* v = Version::of(a.local);
        v->flags |= kTombstone;
        dev::flush(v, sizeof *v);  // counted by the flush alone (device.h's rule)
        continue;
      }
      dev::flush(a.local, a.len);
    }
    if (any) {
      dev::fence();
      dev::crash_point("nvmvcc.payloads");
    }
  }
  // The version is linked already. An insert's key enters the ordered index now (after its
  // version is linked: see committed()), before its commit makes it visible.
  void install(Thread& th, Access& a) {
    Version* v = Version::of(a.local);
    a.version = v->seq;
    Table& t = *tables_[a.table];
    if (!t.ordered) return;
    if (a.type == AccessType::Insert) t.ordered->insert(a.key);
    if (a.type == AccessType::Delete)
      th.dead.push_back({a.table, a.key, head_of(a), t.heap->ref_of(v), v->txid.load()});
  }
  // Deleted keys every snapshot sees deleted leave the ordered index, unless a version was
  // linked over the tombstone meanwhile (a reinsert, whose install adds the key again if it
  // was taken out before its version was linked).
  void committed(Thread& th) {
    while (!th.dead.empty() && CC::below_horizon(th.dead.front().txid)) {
      DeadKey d = th.dead.front();
      th.dead.pop_front();
      Table& t = *tables_[d.table];
      t.ordered->remove_if(d.key, [&] {
        return d.head->latest.load(std::memory_order_acquire) == d.ref &&
               t.heap->at(d.ref)->txid.load(std::memory_order_acquire) == d.txid;
      });
    }
  }
  void release(Thread&, Access*, size_t) {}
  void start() {}
  void stop() {}

  // Every head's chain on every recovery thread (runs of kRecoveryHeads heads taken in turn).
  RecoveryReport recover(int nthreads) {
    RecoveryReport rep;
    if (meta_->magic != kMagic || !meta_->loaded)
      throw std::runtime_error("NVM image holds no complete NVMVCC database to recover from (power failed while loading?)");
    if (meta_->ntables != tables_.size())
      throw std::runtime_error("nvmvcc: the image's table count differs from the schema's");
    const size_t nw = size_t(std::max(1, nthreads));
    std::vector<std::vector<uint8_t>> used(tables_.size());
    struct Run { size_t table; uint64_t lo, hi; };
    std::vector<Run> runs;
    for (size_t ti = 0; ti < tables_.size(); ti++) {
      used[ti].assign(tables_[ti]->heap->slots(), 0);
      for (uint64_t lo = 0; lo < tables_[ti]->info.capacity; lo += kRecoveryHeads)
        runs.push_back({ti, lo, std::min(tables_[ti]->info.capacity, lo + kRecoveryHeads)});
    }
    std::vector<uint64_t> tops(tables_.size() * nw, 0), rows(nw, 0), dropped(nw, 0);
    std::atomic<size_t> next{0};
    std::atomic<bool> duplicate{false};
    std::atomic<uint64_t> duplicate_key{0};
    parallel(int(nw), [&](int w) {
      // Counts in locals, written once at the end: neighbouring threads' counts share a cache
      // line, which bumping them in place would bounce between the cores.
      uint64_t my_rows = 0, my_dropped = 0;
      for (size_t k; (k = next.fetch_add(1)) < runs.size();) {
        Table& t = *tables_[runs[k].table];
        VersionHeap& heap = *t.heap;
        uint64_t top = 0;
        for (uint64_t i = runs[k].lo; i < runs[k].hi; i++) {
          RecordHead* h = &t.heads[i];
          dev::read(h, sizeof *h);  // recovery's reads are charged like any other (issue 17)
          uint64_t r = h->latest.load(), keep = 0;
          if (!r) continue;
          for (uint64_t steps = 0; r && r <= heap.slots() && steps < heap.slots(); steps++) {
            Version* v = heap.at(r);
            dev::read(v, sizeof *v);
            uint64_t s = v->inl.load() ? uint64_t(v->inl.load()) : CC::recovered_status(v->txid.load());
            if (s == kCommitted) { keep = r; break; }
            my_dropped++;  // an uncommitted version: no log, nothing is replayed
            r = v->prev;
          }
          if (!keep || heap.at(keep)->tombstone()) {  // never committed, or deleted: gone
            h->latest.store(0);
            dev::flush(&h->latest, sizeof h->latest);
            continue;
          }
          Version* v = heap.at(keep);
          v->txid.store(kFrozenTxid);
          v->inl.store(kCommitted);
          v->prev = 0;
          dev::flush(v, sizeof *v);
          if (h->latest.load() != keep) {
            h->latest.store(keep);
            dev::flush(&h->latest, sizeof h->latest);
          }
          used[runs[k].table][keep - 1] = 1;
          if (!t.index->insert(h->key, reinterpret_cast<uint64_t>(h)) && !duplicate.exchange(true))
            duplicate_key = h->key;
          top = i + 1;  // heads ascend within a run
          my_rows++;
        }
        uint64_t& tw = tops[runs[k].table * nw + size_t(w)];
        tw = std::max(tw, top);
      }
      rows[size_t(w)] = my_rows, dropped[size_t(w)] = my_dropped;
      dev::fence();
    });
    if (duplicate) throw std::runtime_error("nvmvcc: duplicate key " + std::to_string(duplicate_key.load()) + " in the record heads");
    dropped_ = 0;
    for (size_t w = 0; w < nw; w++) rep.rows += rows[w], dropped_ += dropped[w];
    for (size_t ti = 0; ti < tables_.size(); ti++) {
      Table& t = *tables_[ti];
      t.next = *std::max_element(tops.begin() + std::ptrdiff_t(ti * nw), tops.begin() + std::ptrdiff_t((ti + 1) * nw));
      t.rebuild_ordered(int(nw));
    }
    rep.replayed = 0;
    rep.lap("scan_chains_and_index");
    for (size_t ti = 0; ti < tables_.size(); ti++) tables_[ti]->heap->rebuild(used[ti], threads_, int(nw));
    rep.lap("rebuild_free_slots");
    // Every surviving version is frozen, so the transaction statuses are no longer needed.
    CC::clear_persistent();
    rep.lap("clear_status");
    return rep;
  }

  bool read_current(uint32_t table, uint64_t key, char* out, uint64_t& version) {
    Table& t = *tables_.at(table);
    uint64_t hv = t.index->lookup(key);
    if (hv == HashIndex::kNoValue) return false;
    Version* v = newest_committed(t, reinterpret_cast<RecordHead*>(hv), nullptr);
    if (!v || v->tombstone()) return false;
    memcpy(out, v->data(), t.info.schema.tuple_size());
    version = v->seq;
    return true;
  }

  // Invariants: every record with a version indexed under its key, its chain inside the heap,
  // no version slot in two chains, every live record (newest committed version no tombstone)
  // in the ordered index and every key there indexed.
  nlohmann::json check() const {
    Violations fail;
    for (auto& tp : tables_) {
      Table& t = *tp;
      std::vector<bool> seen(t.heap->slots());
      uint64_t n = std::min<uint64_t>(t.next.load(), t.info.capacity), indexed = 0, heads = 0;
      for (uint64_t i = 0; i < n; i++) {
        RecordHead* h = &t.heads[i];
        std::string where = t.info.name + " record " + std::to_string(i);
        bool in_index = t.index->lookup(h->key) == reinterpret_cast<uint64_t>(h);
        heads += in_index;
        if (!h->latest.load()) continue;  // unused, or an insert about to link its version
        if (!in_index) fail(where + ": not indexed under its key");
        Version* v = newest_committed(t, h, &seen, [&](const std::string& s) { fail(where + s); });
        if (v && !v->tombstone() && t.ordered && !t.ordered->contains(h->key))
          fail(where + ": live but not in the ordered index");
      }
      t.index->for_each([&](uint64_t, uint64_t) { indexed++; });
      if (indexed != heads)
        fail(t.info.name + ": index holds " + std::to_string(indexed) + " keys for " +
             std::to_string(heads) + " records");
      if (t.ordered)
        t.ordered->for_each([&](uint64_t k) {
          if (t.index->lookup(k) == HashIndex::kNoValue)
            fail(t.info.name + ": key " + std::to_string(k) + " ordered but not indexed");
        });
    }
    return fail.json();
  }

  nlohmann::json stats() const {
    uint64_t created = 0, pruned = 0, steps = 0, acc = 0, total = 0, hw = 0, free = 0, pending = 0;
    for (auto& th : threads_ctx_) {
      for (auto& c : th.ctx) {
        created += c.versions_created;
        pruned += c.versions_pruned;
        steps += c.chain_steps;
      }
      acc += th.accesses;
      pending += th.dead.size();
    }
    for (auto& t : tables_) {
      total += t->heap->slots();
      hw += t->heap->high_water();
      free += t->heap->free_slots();
    }
    nlohmann::json j = {{"versions_created", created},
                        {"versions_pruned", pruned},
                        {"chain_steps", steps},
                        {"nvm_row_accesses", acc},
                        {"recovery_dropped_versions", dropped_},
                        {"deleted_keys_pending", pending},
                        {"version_slots", {{"total", total}, {"high_water", hw}, {"free", free}}}};
    if constexpr (requires { CC::stats(); }) j["cc"] = CC::stats();
    return j;
  }

 private:
  struct MetaArea {
    uint64_t magic;
    uint32_t ntables;
    uint32_t loaded;
    uint64_t rows[kMaxTables];
  };

  // A record head for `key` (not yet indexed, no version): the next unused one of the table.
  RecordHead* new_head(Table& t, uint64_t key) {
    uint64_t i = t.next.fetch_add(1);
    if (i >= t.info.capacity) throw std::runtime_error("table " + t.info.name + " is full");
    RecordHead* h = &t.heads[i];
    h->key = key;  // durable with `latest`, which shares its line, when a version is linked
    h->latest.store(0, std::memory_order_relaxed);  // counted where it is flushed
    return h;
  }

  // The newest version whose creator committed (the status arrays / clog as they are now), or
  // nullptr. With `seen`, marks the slots walked and reports a chain that leaves the heap or
  // shares a slot through `fail`.
  static Version* newest_committed(const Table& t, const RecordHead* h, std::vector<bool>* seen,
                                   const std::function<void(const std::string&)>& fail = {}) {
    uint64_t r = h->latest.load();
    for (uint64_t steps = 0; r; steps++) {
      if (seen) {
        if (r > t.heap->slots() || steps > t.heap->slots()) { fail(": chain leaves the heap"); return nullptr; }
        if ((*seen)[r - 1]) { fail(": version slot " + std::to_string(r) + " shared"); return nullptr; }
        (*seen)[r - 1] = true;
      }
      Version* v = t.heap->at(r);
      uint64_t s = v->inl.load() ? uint64_t(v->inl.load()) : CC::current_status(v->txid.load());
      if (s == kCommitted) return v;
      r = v->prev;
    }
    return nullptr;
  }

  EngineEnv& env_;
  int threads_;
  MetaArea* meta_ = nullptr;
  std::vector<std::unique_ptr<Table>> tables_;
  std::vector<Thread> threads_ctx_;
  uint64_t dropped_ = 0;  // by the last recovery
};

}  // namespace nvt::nvmvcc

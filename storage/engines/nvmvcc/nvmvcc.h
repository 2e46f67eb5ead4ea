// NVMVCC: a single-layer multi-version engine in NVM (papers/mcsi.txt section 3). Every tuple
// version lives in NVM and is read and written there; there is no DRAM copy of tuples. Only
// the indexes (key -> record head) are in DRAM. A record head holds the latest-version pointer;
// versions form a newest-to-oldest chain, each stamped with its creator's txid; which versions
// are committed is decided by the CC method's persistent transaction status (MCSI's per-thread
// status arrays, PGSI's shared commit log), so a commit persists the new versions' payloads
// (here) and then the status (the CC), and no log is written.
// Supports only the snapshot-isolation methods written for it (concurrency_control/mcsi.h,
// pgsi.h): they walk the version chains through what lookup() exposes (si_common.h).
// Recovery in a fresh process keeps, per record, the newest version whose creator committed,
// freezes it (txid 0), unlinks everything above and below, rebuilds the index and the free
// slot lists, and clears the CC's status storage.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/engine.h"
#include "storage/engines/nvmvcc/version.h"
#include "storage/hash_index.h"

namespace nvt::nvmvcc {

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

  struct Table {
    TableInfo info;
    RecordHead* heads = nullptr;  // NVM, record ID order
    std::atomic<uint64_t> next{0};
    std::unique_ptr<HashIndex> index;
  };
  struct Thread : SiCtx {
    uint64_t accesses = 0;
  };

  static uint64_t slot_bytes(const std::vector<TableInfo>& tables) {
    uint64_t m = 0;
    for (auto& t : tables) m = std::max<uint64_t>(m, t.schema.tuple_size());
    return (sizeof(Version) + m + 63) / 64 * 64;
  }
  // Version slots: two per row (the current version and one being replaced) plus room for
  // versions pruning has not reached yet.
  static uint64_t heap_slots(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    uint64_t rows = 0;
    for (auto& t : tables) rows += t.capacity;
    return 2 * rows + uint64_t(std::max(o.threads, 1)) * 8192 + 4096;
  }
  static uint64_t nvm_bytes(const std::vector<TableInfo>& tables, const EngineOptions& o) {
    uint64_t b = 4096 + CC::kNvmStateBytes + heap_slots(tables, o) * slot_bytes(tables);
    for (auto& t : tables) b += t.capacity * sizeof(RecordHead) + (2ull << 20);
    return b + 3 * (2ull << 20) + (8ull << 20);
  }
  // No cache: every access is an NVM access.
  static std::pair<uint64_t, uint64_t> hit_counts(const Thread& th) { return {0, th.accesses}; }

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
      t->info = ti;
      t->heads = reinterpret_cast<RecordHead*>(
          env.nvm.region("nvmvcc.heads." + ti.name, ti.capacity * sizeof(RecordHead),
                         dev::RegionKind::Persistent).base);
      t->index = std::make_unique<HashIndex>(ti.capacity, env.dram, "index." + ti.name);
      tables_.push_back(std::move(t));
    }
    env.dram.charge(kPrivateBytesPerThread * uint64_t(threads_), "private");
    uint64_t sb = slot_bytes(tables), ns = heap_slots(tables, env.opt);
    dev::Region heap = env.nvm.region("nvmvcc.versions", ns * sb, dev::RegionKind::Persistent);
    if (heap.existed) ns = heap.size / sb;
    heap_ = std::make_unique<VersionHeap>(heap.base, sb, ns, threads_);
    if (fresh) {
      memset(meta_, 0, sizeof *meta_);
      meta_->magic = kMagic;
      dev::persist(meta_, sizeof *meta_);
    }
    threads_ctx_ = std::vector<Thread>(size_t(threads_));
    for (int i = 0; i < threads_; i++) {
      threads_ctx_[size_t(i)].tid = i;
      threads_ctx_[size_t(i)].heap = heap_.get();
    }
  }

  Thread& thread(int tid) { return threads_ctx_.at(size_t(tid)); }
  size_t tables() const { return tables_.size(); }
  const TableInfo& table_info(uint32_t t) const { return tables_[t]->info; }

  // The loaded image is a frozen version (txid 0, committed), made durable by after_load().
  void load(Thread& th, uint32_t table, uint64_t key, const char* image) {
    Table& t = *tables_.at(table);
    uint64_t i = t.next.fetch_add(1);
    if (i >= t.info.capacity) throw std::runtime_error("table " + t.info.name + " is full");
    uint64_t ref = heap_->alloc(th.tid);
    if (!ref) throw std::runtime_error("nvmvcc: version heap full while loading");
    Version* v = heap_->at(ref);
    v->txid.store(kFrozenTxid, std::memory_order_relaxed);
    v->prev = 0;
    v->inl.store(kCommitted, std::memory_order_relaxed);
    v->flags = 0;
    v->seq = 0;
    uint32_t len = t.info.schema.tuple_size();
    memcpy(v->data(), image, len);
    dev::write(v, sizeof *v + len);
    RecordHead* h = &t.heads[i];
    h->key = key;
    h->latest.store(ref, std::memory_order_release);
    dev::write(h, sizeof *h);
    if (!t.index->insert(key, reinterpret_cast<uint64_t>(h)))
      throw std::runtime_error("duplicate key " + std::to_string(key) + " in " + t.info.name);
  }

  // Everything loaded made durable, then the row counts: the image is recoverable from here.
  void after_load() {
    for (auto& t : tables_) dev::flush(t->heads, t->next.load() * sizeof(RecordHead));
    dev::flush(heap_->at(1), heap_->high_water() * heap_->slot_bytes());
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
    ref = RowRef{nullptr, static_cast<SiCtx*>(&th), reinterpret_cast<RecordHead*>(v)};
    return true;
  }

  // The new versions' payloads (written in place in NVM by the workload) made durable before
  // the CC's commit status is.
  void persist(Thread&, Access* acc, size_t n) {
    bool any = false;
    for (size_t i = 0; i < n; i++) {
      Access& a = acc[i];
      if (a.type == AccessType::Read) continue;
      dev::write(a.local, a.len);
      dev::flush(a.local, a.len);
      any = true;
    }
    if (any) {
      dev::fence();
      dev::crash_point("nvmvcc.payloads");
    }
  }
  void install(Thread&, Access& a) { a.version = Version::of(a.local)->seq; }  // already linked
  void committed(Thread&) {}
  void release(Thread&, Access*, size_t) {}
  void start() {}
  void stop() {}

  RecoveryReport recover(int) {
    RecoveryReport rep;
    using clk = std::chrono::steady_clock;
    auto t0 = clk::now();
    auto lap = [&](const char* step) {
      auto t1 = clk::now();
      rep.steps.push_back({step, std::chrono::duration<double>(t1 - t0).count()});
      t0 = t1;
    };
    if (meta_->magic != kMagic || !meta_->loaded)
      throw std::runtime_error("NVM image holds no complete NVMVCC database to recover from (power failed while loading?)");
    if (meta_->ntables != tables_.size())
      throw std::runtime_error("nvmvcc: the image's table count differs from the schema's");
    std::vector<bool> used(heap_->slots());
    for (size_t ti = 0; ti < tables_.size(); ti++) {
      Table& t = *tables_[ti];
      uint64_t n = meta_->rows[ti];
      if (n > t.info.capacity) throw std::runtime_error("nvmvcc: row count beyond capacity");
      t.next = n;
      for (uint64_t i = 0; i < n; i++) {
        RecordHead* h = &t.heads[i];
        uint64_t r = h->latest.load(), keep = 0;
        for (uint64_t steps = 0; r && r <= heap_->slots() && steps < heap_->slots(); steps++) {
          Version* v = heap_->at(r);
          uint64_t s = v->inl.load() ? uint64_t(v->inl.load()) : CC::recovered_status(v->txid.load());
          if (s == kCommitted) { keep = r; break; }
          dropped_++;  // an uncommitted version: no log, nothing is replayed
          r = v->prev;
        }
        if (!keep) throw std::runtime_error("nvmvcc: record " + std::to_string(i) + " of " +
                                            t.info.name + " has no committed version");
        Version* v = heap_->at(keep);
        v->txid.store(kFrozenTxid);
        v->inl.store(kCommitted);
        v->prev = 0;
        dev::flush(v, sizeof *v);
        if (h->latest.load() != keep) {
          h->latest.store(keep);
          dev::flush(&h->latest, sizeof h->latest);
        }
        used[keep - 1] = true;
        if (!t.index->insert(h->key, reinterpret_cast<uint64_t>(h)))
          throw std::runtime_error("nvmvcc: duplicate key " + std::to_string(h->key) + " in " +
                                   t.info.name);
      }
      rep.rows += n;
    }
    dev::fence();
    rep.replayed = 0;
    lap("scan_chains_and_index");
    heap_->rebuild(used, threads_);
    lap("rebuild_free_slots");
    // Every surviving version is frozen, so the transaction statuses are no longer needed.
    CC::clear_persistent();
    lap("clear_status");
    return rep;
  }

  bool read_current(uint32_t table, uint64_t key, char* out, uint64_t& version) {
    Table& t = *tables_.at(table);
    uint64_t hv = t.index->lookup(key);
    if (hv == HashIndex::kNoValue) return false;
    auto* h = reinterpret_cast<RecordHead*>(hv);
    for (uint64_t r = h->latest.load(); r;) {
      Version* v = heap_->at(r);
      uint64_t s = v->inl.load() ? uint64_t(v->inl.load()) : CC::current_status(v->txid.load());
      if (s == kCommitted) {
        memcpy(out, v->data(), t.info.schema.tuple_size());
        version = v->seq;
        return true;
      }
      r = v->prev;
    }
    return false;
  }

  // Invariants: every record indexed under its key, its chain reaching a committed version,
  // no version slot in two chains, and after recovery no uncommitted version anywhere.
  nlohmann::json check() const {
    uint64_t bad = 0;
    std::vector<std::string> ex;
    auto fail = [&](const std::string& s) { if (++bad <= 10) ex.push_back(s); };
    std::vector<bool> seen(heap_->slots());
    for (auto& tp : tables_) {
      Table& t = *tp;
      uint64_t n = std::min<uint64_t>(t.next.load(), t.info.capacity), indexed = 0;
      for (uint64_t i = 0; i < n; i++) {
        RecordHead* h = &t.heads[i];
        std::string where = t.info.name + " record " + std::to_string(i);
        if (t.index->lookup(h->key) != reinterpret_cast<uint64_t>(h)) fail(where + ": not indexed under its key");
        bool committed = false;
        uint64_t r = h->latest.load();
        for (uint64_t steps = 0; r && !committed; steps++) {
          if (r > heap_->slots() || steps > heap_->slots()) { fail(where + ": chain leaves the heap"); break; }
          if (seen[r - 1]) { fail(where + ": version slot " + std::to_string(r) + " shared"); break; }
          seen[r - 1] = true;
          Version* v = heap_->at(r);
          uint64_t s = v->inl.load() ? uint64_t(v->inl.load()) : CC::current_status(v->txid.load());
          committed = s == kCommitted;
          r = v->prev;
        }
        if (!committed) fail(where + ": no committed version");
      }
      t.index->for_each([&](uint64_t, uint64_t) { indexed++; });
      if (indexed != n)
        fail(t.info.name + ": index holds " + std::to_string(indexed) + " keys for " +
             std::to_string(n) + " records");
    }
    return {{"violations", bad}, {"examples", ex}};
  }

  nlohmann::json stats() const {
    uint64_t created = 0, pruned = 0, steps = 0, acc = 0;
    for (auto& th : threads_ctx_) {
      created += th.versions_created;
      pruned += th.versions_pruned;
      steps += th.chain_steps;
      acc += th.accesses;
    }
    nlohmann::json j = {{"versions_created", created},
                        {"versions_pruned", pruned},
                        {"chain_steps", steps},
                        {"nvm_row_accesses", acc},
                        {"recovery_dropped_versions", dropped_},
                        {"version_slots", {{"total", heap_->slots()},
                                           {"high_water", heap_->high_water()},
                                           {"free", heap_->free_slots()},
                                           {"bytes_each", heap_->slot_bytes()}}}};
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

  EngineEnv& env_;
  int threads_;
  MetaArea* meta_ = nullptr;
  std::vector<std::unique_ptr<Table>> tables_;
  std::unique_ptr<VersionHeap> heap_;
  std::vector<Thread> threads_ctx_;
  uint64_t dropped_ = 0;  // by the last recovery
};

}  // namespace nvt::nvmvcc

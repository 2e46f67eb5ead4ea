// The transaction manager: the one path from a benchmark to an engine and a CC method.
// read()/write() look the tuple up in the engine and hand its CC metadata to the CC method;
// commit() runs CC validation, the engine's persistence protocol, the installs and the CC's
// publication, in that order. Templates only: no virtual call per access.
// insert()/remove() are writes to the CC (it locks or validates them like any write; an
// inserted tuple starts with fresh CC metadata); the engine hides a tuple being inserted from
// other transactions and makes a delete visible at install. A duplicate insert fails at once,
// and an access that the CC grants to a tuple deleted meanwhile aborts. scan() reads the keys
// its ordered index holds now, each through read(): no phantom protection (as DBx1000), unless
// the engine validates what its scans covered (FOEDUS's node set: validate(Thread&)).
#pragma once
#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "storage/access.h"

namespace nvt {

template <class Engine, class CC>
class TxnManager {
 public:
  TxnManager(Engine& e, int tid) : eng_(e), th_(e.thread(tid)) { acc_.reserve(64); }

  // read_only: the transaction promises not to write; a CC that can use it (Cicada reads such
  // a transaction at a snapshot, without validation) takes it, the others ignore it.
  void begin(bool read_only = false) {
    user_aborted_ = false;
    acc_.clear();
    forget_index();
    chunk_ = 0;
    used_ = 0;
    // MVCC and HEKATON read a read-only transaction at a snapshot only where the engine asks
    // for snapshot readers (Zen+); Cicada always does.
    if constexpr (requires { CC::kSnapshotOnRequest; }) {
      if constexpr (requires { eng_.snapshot_readers(); }) read_only = read_only && eng_.snapshot_readers();
      else read_only = false;
    }
    if constexpr (requires { cc_.begin(txn_, read_only); }) cc_.begin(txn_, read_only);
    else cc_.begin(txn_);
    // An engine that treats snapshot readers apart (Zen+ reads their misses in NVM) learns
    // whether the CC reads this attempt at a snapshot below every running writer.
    if constexpr (requires { eng_.begin(th_, true); }) {
      bool snapshot = false;
      if constexpr (requires { CC::snapshot_reader(txn_); }) snapshot = CC::snapshot_reader(txn_);
      eng_.begin(th_, snapshot);
    }
  }

  // A hint: the transaction will access these keys of `table` (an engine without prefetch
  // ignores it). Changes no state and no counter.
  void prefetch(uint32_t table, const uint64_t* keys, size_t n) const {
    if constexpr (requires { eng_.prefetch(table, keys, n); }) eng_.prefetch(table, keys, n);
  }

  // The tuple image to read, or nullptr when the transaction must abort (cause()).
  const char* read(uint32_t table, uint64_t key) {
    if (Access* a = find(table, key)) {
      if (a->type == AccessType::Delete) { txn_.cause = AbortCause::User; return nullptr; }
      return a->type == AccessType::Read ? a->image : a->local;
    }
    Access* a = add(AccessType::Read, table, key);
    if (!a) return nullptr;
    const char* p = cc_.read(txn_, *a);
    if (!p) { drop_last(); return nullptr; }
    a->image = p;
    if (!visible(*a)) return gone();
    return p;
  }

  // A private image to modify, installed at commit; nullptr when the transaction must abort.
  char* write(uint32_t table, uint64_t key) { return modify(AccessType::Write, table, key); }

  // A zeroed image for a new tuple, installed at commit; nullptr when the key is present (or
  // being inserted by another transaction) or the transaction must abort otherwise.
  char* insert(uint32_t table, uint64_t key) {
    if (find(table, key)) { txn_.cause = AbortCause::User; return nullptr; }
    RowRef ref;
    if (!eng_.insert(th_, table, key, ref)) {
      txn_.cause = AbortCause::WriteConflict;
      // ... unless the engine refused it for a cause of its own (FOEDUS: no DRAM page yet).
      if constexpr (requires { th_.refusal; })
        if (th_.refusal != AbortCause::None) txn_.cause = th_.refusal;
      return nullptr;
    }
    Access& a = push(AccessType::Insert, table, key, ref);
    // Fresh metadata: only a CC that locks more than tuples refuses, or a multi-version one that
    // finds the key in the snapshot (a duplicate) or a concurrent insert or delete of it.
    if (!cc_.write(txn_, a)) {
      eng_.undo_insert(th_, a);
      drop_last();
      return nullptr;
    }
    memset(a.local, 0, a.len);
    return a.local;
  }

  // Delete the tuple at commit. False when it is missing or the transaction must abort.
  bool remove(uint32_t table, uint64_t key) { return modify(AccessType::Delete, table, key) != nullptr; }

  // Visit the committed tuples of `table` with keys in [lo, hi] in key order (descending when
  // `reverse`), each read through the CC, until `limit` were visited or f(key, image) returns
  // false. Keys deleted since the ordered index listed them (or, on a multi-version engine,
  // absent from the snapshot) are skipped, and more keys are listed in their place.
  // False: abort (cause()).
  template <class F>
  bool scan(uint32_t table, uint64_t lo, uint64_t hi, size_t limit, F&& f, bool reverse = false) {
    size_t seen = 0;
    while (seen < limit && lo <= hi) {
      size_t want = limit - seen;
      // An engine that validates its scans at commit (FOEDUS) records them in its thread.
      if constexpr (requires { eng_.scan_keys(th_, table, lo, hi, want, keys_, reverse); })
        eng_.scan_keys(th_, table, lo, hi, want, keys_, reverse);
      else
        eng_.scan_keys(table, lo, hi, want, keys_, reverse);
      for (uint64_t k : keys_) {
        const char* img = read(table, k);
        if (!img) {
          if (txn_.cause == AbortCause::User && !refused() && !find(table, k)) continue;  // deleted
          return false;
        }
        seen++;
        if (!f(k, img)) return true;
      }
      if (keys_.size() < want) break;  // the range holds no more keys
      uint64_t last = keys_.back();
      if (reverse ? last == lo : last == hi) break;
      (reverse ? hi : lo) = reverse ? last - 1 : last + 1;
    }
    return true;
  }

  bool commit() {
    // An engine that may be short of NVM space says so before the CC validates, so the
    // transaction aborts cleanly (holding nothing) rather than failing inside persist().
    if constexpr (requires { eng_.reserve(th_, acc_.data(), acc_.size()); })
      if (!eng_.reserve(th_, acc_.data(), acc_.size())) {
        txn_.cause = AbortCause::NvmSpace;
        abort();
        return false;
      }
    // An engine whose records may move while a transaction runs (FOEDUS's tree splits) points
    // the accesses at their current copies first.
    if constexpr (requires { eng_.relocate(th_, acc_.data(), acc_.size()); }) eng_.relocate(th_, acc_.data(), acc_.size());
    if (!cc_.validate(txn_, acc_.data(), acc_.size())) {
      abort();
      return false;
    }
    // An engine with checks of its own at the serialization point, the write set still locked
    // (FOEDUS: its scans' and failed lookups' node set).
    if constexpr (requires { eng_.validate(th_); })
      if (!eng_.validate(th_)) {
        txn_.cause = AbortCause::Validation;
        abort();
        return false;
      }
    try {
      eng_.persist(th_, acc_.data(), acc_.size());
    } catch (...) {
      // NVM full mid-persist: release the CC's locks so no other worker spins on them forever;
      // nothing is durable (no LP / log fence yet), so the image stays recoverable.
      abort();
      throw;
    }
    for (Access& a : acc_)
      if (a.type != AccessType::Read) eng_.install(th_, a);
    eng_.committed(th_);
    cc_.finish(txn_, acc_.data(), acc_.size());
    eng_.release(th_, acc_.data(), acc_.size());
    return true;
  }

  void abort() {
    // FOEDUS: a tree split waits for the locks of the records it moves, and undoing an insert
    // the split moved waits for the split to finish, so its locks go first (its OCC readers see an
    // insert's record as absent until the undo either way). Elsewhere the undo comes first: a
    // lock-based reader must not find an unlocked record of an aborted insert.
    constexpr bool release_first = requires { requires Engine::kReleaseBeforeUndoInsert; };
    if constexpr (release_first) cc_.abort(txn_, acc_.data(), acc_.size());
    if constexpr (requires(Access& a) { eng_.undo_insert(th_, a); })
      for (Access& a : acc_)
        if (a.type == AccessType::Insert) eng_.undo_insert(th_, a);
    if constexpr (!release_first) cc_.abort(txn_, acc_.data(), acc_.size());
    eng_.release(th_, acc_.data(), acc_.size());
    acc_.clear();  // a second abort() (user_abort(), then the driver's) finds nothing to undo
    forget_index();
  }
  // A transaction that decides to roll back by itself (e.g. TPC-C's 1% NewOrder).
  // The caller does not retry it and must not abort() it again.
  void user_abort() { txn_.cause = AbortCause::User; user_aborted_ = true; abort(); }
  bool user_aborted() const { return user_aborted_; }

  AbortCause cause() const { return txn_.cause; }
  const std::vector<Access>& accesses() const { return acc_; }
  typename Engine::Thread& engine_thread() { return th_; }

 private:
  Access* find(uint32_t table, uint64_t key) {
    if (acc_.size() > kIndexFrom) {  // a long transaction: by key, not a scan of every access
      for (; indexed_ < acc_.size(); indexed_++) where_[{acc_[indexed_].table, acc_[indexed_].key}] = uint32_t(indexed_);
      auto it = where_.find({table, key});
      return it == where_.end() ? nullptr : &acc_[it->second];
    }
    for (Access& a : acc_)
      if (a.key == key && a.table == table) return &a;
    return nullptr;
  }
  // The access just added failed: it goes, from the key index too.
  void drop_last() {
    if (indexed_ == acc_.size()) where_.erase({acc_.back().table, acc_.back().key}), indexed_--;
    acc_.pop_back();
  }
  void forget_index() {
    if (indexed_) where_.clear();
    indexed_ = 0;
  }

  char* modify(AccessType type, uint32_t table, uint64_t key) {
    if (Access* a = find(table, key)) {
      if (a->type == AccessType::Delete) { txn_.cause = AbortCause::User; return nullptr; }
      if (a->type == AccessType::Insert) {
        if (type == AccessType::Delete) { txn_.cause = AbortCause::User; return nullptr; }
        return a->local;
      }
      // An engine whose reads may not reach the tuple a write must (FOEDUS: a read of an
      // immutable snapshot page) moves the access first, or refuses it with a cause.
      if constexpr (requires { eng_.upgrade(th_, *a); })
        if (a->type == AccessType::Read)
          if (AbortCause c = eng_.upgrade(th_, *a); c != AbortCause::None) { txn_.cause = c; return nullptr; }
      if (a->type == AccessType::Read && !cc_.upgrade(txn_, *a)) return nullptr;
      if (type == AccessType::Delete || a->type == AccessType::Read) a->type = type;
      return a->local;
    }
    Access* a = add(type, table, key);
    if (!a) return nullptr;
    if (!cc_.write(txn_, *a)) { drop_last(); return nullptr; }
    if (!visible(*a)) return gone();
    return a->local;
  }

  // An engine whose CC decides visibility itself (nvmvcc: the snapshot) has no visible().
  bool visible(const Access& a) {
    if constexpr (requires { eng_.visible(a); }) return eng_.visible(a);
    else return true;
  }

  // The engine refused a lookup for its own reasons (Zen: another transaction runs alone).
  bool refused() const {
    if constexpr (requires { th_.refused; }) return th_.refused;
    return false;
  }

  // The CC granted an access to a tuple deleted meanwhile: the transaction aborts.
  std::nullptr_t gone() {
    txn_.cause = AbortCause::ReadConflict;
    return nullptr;
  }

  Access* add(AccessType type, uint32_t table, uint64_t key) {
    RowRef ref;
    bool found;
    // An engine whose lookups differ for writes (FOEDUS installs a volatile page) is told.
    if constexpr (requires { eng_.lookup(th_, table, key, ref, true); })
      found = eng_.lookup(th_, table, key, ref, type != AccessType::Read);
    else
      found = eng_.lookup(th_, table, key, ref);
    if (!found) {
      txn_.cause = AbortCause::User;  // a missing key: the workload's own error
      // ... unless the engine refused it for a cause of its own (FOEDUS: no DRAM page yet).
      if constexpr (requires { th_.refusal; })
        if (th_.refusal != AbortCause::None) txn_.cause = th_.refusal;
      return nullptr;
    }
    return &push(type, table, key, ref);
  }

  Access& push(AccessType type, uint32_t table, uint64_t key, const RowRef& ref) {
    uint32_t len = eng_.table_info(table).schema.tuple_size();
    Access& a = acc_.emplace_back();
    a.type = type;
    a.table = table;
    a.key = key;
    a.len = len;
    a.row = ref;
    a.local = buffer(len);
    return a;
  }

  // Private images come from chunks kept across transactions: no allocation per request.
  char* buffer(uint32_t len) {
    constexpr size_t kChunk = 256 * 1024;
    size_t need = (len + 63) / 64 * 64;
    if (chunks_.empty() || used_ + need > kChunk) {
      if (!chunks_.empty()) { chunk_++; used_ = 0; }
      if (chunk_ == chunks_.size())
        chunks_.emplace_back(new (std::align_val_t(64)) char[std::max(kChunk, need)]);
    }
    char* p = chunks_[chunk_].get() + used_;
    used_ += need;
    return p;
  }

  struct AlignedDelete {
    void operator()(char* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };

  Engine& eng_;
  typename Engine::Thread& th_;
  CC cc_;
  typename CC::Txn txn_;
  std::vector<Access> acc_;
  // Accesses by (table, key) once a transaction has more than kIndexFrom (Zen+'s long scans
  // and updates: a linear find per access made them quadratic); acc_[0, indexed_) are in it.
  static constexpr size_t kIndexFrom = 64;
  struct KeyHash {
    size_t operator()(const std::pair<uint32_t, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.second * 0x9E3779B97F4A7C15ull ^ k.first);
    }
  };
  std::unordered_map<std::pair<uint32_t, uint64_t>, uint32_t, KeyHash> where_;
  size_t indexed_ = 0;
  std::vector<uint64_t> keys_;  // scan()
  std::vector<std::unique_ptr<char[], AlignedDelete>> chunks_;
  size_t chunk_ = 0, used_ = 0;
  bool user_aborted_ = false;
};

}  // namespace nvt

// The transaction manager: the one path from a benchmark to an engine and a CC method.
// read()/write() look the tuple up in the engine and hand its CC metadata to the CC method;
// commit() runs CC validation, the engine's persistence protocol, the installs and the CC's
// publication, in that order. Templates only: no virtual call per access.
#pragma once
#include <memory>
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
    chunk_ = 0;
    used_ = 0;
    if constexpr (requires { cc_.begin(txn_, read_only); }) cc_.begin(txn_, read_only);
    else cc_.begin(txn_);
  }

  // The tuple image to read, or nullptr when the transaction must abort (cause()).
  const char* read(uint32_t table, uint64_t key) {
    if (Access* a = find(table, key)) return a->type == AccessType::Read ? a->image : a->local;
    Access* a = add(AccessType::Read, table, key);
    if (!a) return nullptr;
    const char* p = cc_.read(txn_, *a);
    if (!p) acc_.pop_back();
    else a->image = p;
    return p;
  }

  // A private image to modify, installed at commit; nullptr when the transaction must abort.
  char* write(uint32_t table, uint64_t key) {
    if (Access* a = find(table, key)) {
      if (a->type == AccessType::Write) return a->local;
      if (!cc_.upgrade(txn_, *a)) return nullptr;
      a->type = AccessType::Write;
      return a->local;
    }
    Access* a = add(AccessType::Write, table, key);
    if (!a) return nullptr;
    if (!cc_.write(txn_, *a)) { acc_.pop_back(); return nullptr; }
    return a->local;
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
    if (!cc_.validate(txn_, acc_.data(), acc_.size())) {
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
      if (a.type == AccessType::Write) eng_.install(th_, a);
    eng_.committed(th_);
    cc_.finish(txn_, acc_.data(), acc_.size());
    eng_.release(th_, acc_.data(), acc_.size());
    return true;
  }

  void abort() {
    cc_.abort(txn_, acc_.data(), acc_.size());
    eng_.release(th_, acc_.data(), acc_.size());
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
    for (Access& a : acc_)
      if (a.key == key && a.table == table) return &a;
    return nullptr;
  }

  Access* add(AccessType type, uint32_t table, uint64_t key) {
    RowRef ref;
    if (!eng_.lookup(th_, table, key, ref)) {
      txn_.cause = AbortCause::User;  // a missing key: the workload's own error
      return nullptr;
    }
    uint32_t len = eng_.table_info(table).schema.tuple_size();
    Access& a = acc_.emplace_back();
    a.type = type;
    a.table = table;
    a.key = key;
    a.len = len;
    a.row = ref;
    a.local = buffer(len);
    return &a;
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
  std::vector<std::unique_ptr<char[], AlignedDelete>> chunks_;
  size_t chunk_ = 0, used_ = 0;
  bool user_aborted_ = false;
};

}  // namespace nvt

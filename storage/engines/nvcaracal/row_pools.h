// The persistent row pool and the persistent value pool (papers/nvcaracal-eurosys23.txt
// sections 5.4, 5.5): per core, fixed-size blocks in NVM taken from a ring-buffer free list,
// else from a bump offset. Allocation changes only DRAM; the bump, head and tail offsets are
// persisted at each epoch commit into one of two slots chosen by the epoch's parity, so the
// last checkpointed epoch's allocation state is never overwritten and a crash reverts to it.
// Blocks freed in the running epoch sit beyond the checkpointed tail and are not reused before
// the epoch commits. Frees by major GC are not revertible (the row header no longer names the
// block): they are made durable before execution in a third line {epoch, tail}, which
// recovery prefers when it belongs to the crashed epoch.
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "storage/device/device.h"
#include "storage/device/power_fail.h"

namespace nvt::nvc {

struct alignas(64) PoolSlot {
  uint64_t bump, head, tail;
  uint64_t pad[5];
};
struct PoolMeta {
  PoolSlot slot[2];  // by epoch parity
  PoolSlot gc;       // {bump = epoch, head unused, tail}: major GC's frees of that epoch
};

class BlockPool {
 public:
  // Lay out over [base, base + bytes_for(n, block)) of persistent NVM.
  static uint64_t bytes_for(uint64_t blocks, uint64_t block_bytes) {
    return sizeof(PoolMeta) + (blocks * 8 + 63) / 64 * 64 + blocks * block_bytes;
  }
  BlockPool() = default;
  // Blocks are named by global references: the pool's id << 40 | index (a free list may hold
  // another core's blocks: major GC frees where it runs).
  static constexpr int kIdShift = 40;
  void attach(char* base, uint64_t blocks, uint64_t block_bytes, uint32_t id, std::string what) {
    id_ = uint64_t(id) << kIdShift;
    meta_ = reinterpret_cast<PoolMeta*>(base);
    ring_ = reinterpret_cast<uint64_t*>(base + sizeof(PoolMeta));
    blocks_ = base + sizeof(PoolMeta) + (blocks * 8 + 63) / 64 * 64;
    cap_ = blocks;
    block_ = block_bytes;
    what_ = std::move(what);
  }

  char* block(uint64_t i) const { return blocks_ + i * block_; }  // by local index
  uint64_t capacity() const { return cap_; }
  uint64_t bump() const { return bump_; }
  uint64_t free_count() const { return tail_ - head_; }
  uint64_t in_use() const { return bump_ - (tail_ - head_); }

  uint64_t alloc() {
    if (head_ < reuse_limit_) {  // from the free list, never past what execution may reuse
      uint64_t* e = &ring_[head_++ % cap_];
      dev::read(e, 8);
      return *e;
    }
    if (bump_ == cap_)
      throw std::runtime_error(what_ + " is full (" + std::to_string(cap_) + " blocks): give a larger --nvm-size");
    return id_ | bump_++;
  }
  // A global reference to the free list's tail (flushed at persist_gc or checkpoint).
  void free(uint64_t i) {
    if (tail_ - head_ >= cap_) throw std::logic_error(what_ + ": free list overflow");
    ring_[tail_++ % cap_] = i;
  }
  // Execution may reuse the free list up to here (the durable tail at its start).
  void begin_execution() { reuse_limit_ = tail_; }

  // Every block taken so far flushed (the load's rows, made durable once by the thread that
  // commits epoch 0; the caller fences).
  void flush_used() const {
    if (bump_) dev::flush(blocks_, bump_ * block_);
  }
  // Major GC's frees of `epoch` made durable (the caller fences).
  void persist_gc(uint64_t epoch) {
    flush_ring_fenced();
    meta_->gc = PoolSlot{epoch, head_, tail_, {}};
    dev::flush(&meta_->gc, sizeof(PoolSlot));
  }
  // The epoch's allocation state into the slot of its parity (the caller fences). The
  // injected fault `wrong-parity` writes the other slot: the committed epoch's state is lost.
  void checkpoint(uint64_t epoch) {
    flush_ring_fenced();
    int s = int(epoch & 1) ^ int(dev::fault_is(dev::Fault::WrongParity));
    meta_->slot[s] = PoolSlot{bump_, head_, tail_, {}};
    dev::flush(&meta_->slot[s], sizeof(PoolSlot));
  }
  // Back to the state of checkpointed epoch `committed`, keeping the crashed epoch's durable
  // GC frees. Reads through the device model.
  void restore(uint64_t committed) {
    const PoolSlot& s = meta_->slot[committed & 1];
    dev::read(&s, 24);
    dev::read(&meta_->gc, 24);
    bump_ = s.bump;
    head_ = s.head;
    tail_ = s.tail;
    if (meta_->gc.bump == committed + 1 && meta_->gc.tail > tail_) tail_ = meta_->gc.tail;
    flushed_ = tail_;
    reuse_limit_ = tail_;
  }
  // The free list's blocks in order, duplicates kept (the checker looks for them).
  std::vector<uint64_t> free_list() const {
    std::vector<uint64_t> v;
    for (uint64_t i = head_; i < tail_; i++) {
      dev::read(&ring_[i % cap_], 8);
      v.push_back(ring_[i % cap_]);
    }
    return v;
  }
  // The blocks on the free list (recovery: a block GC freed before the crash is not freed twice).
  std::unordered_set<uint64_t> free_set() const {
    std::unordered_set<uint64_t> s;
    for (uint64_t i = head_; i < tail_; i++) {
      dev::read(&ring_[i % cap_], 8);
      s.insert(ring_[i % cap_]);
    }
    return s;
  }

 private:
  // The entries appended since the last flush, fenced before the offset that covers them is
  // written: a tail that lands before its entries would free whatever the ring held there.
  void flush_ring_fenced() {
    if (flushed_ == tail_) return;
    flush_ring();
    dev::fence();
  }
  void flush_ring() {  // the entries appended since the last flush, a line at a time
    for (uint64_t i = flushed_; i < tail_;) {
      uint64_t at = i % cap_, n = std::min({8 - at % 8, tail_ - i, cap_ - at});
      dev::flush(&ring_[at], 8 * n);
      i += n;
    }
    flushed_ = tail_;
  }

  PoolMeta* meta_ = nullptr;
  uint64_t* ring_ = nullptr;
  char* blocks_ = nullptr;
  uint64_t cap_ = 0, block_ = 0, id_ = 0;
  std::string what_;
  // DRAM state: the running epoch's offsets.
  uint64_t bump_ = 0, head_ = 0, tail_ = 0, reuse_limit_ = 0, flushed_ = 0;
};

}  // namespace nvt::nvc

// NVMVCC's persistent layout, shared with the snapshot-isolation CC methods that run on it
// (concurrency_control/mcsi.h, pgsi.h): papers/mcsi.txt sections 3.1-3.3.
//   RecordHead (NVM): the latest-version pointer of one record and its key; one per loaded or
//                     inserted record, its position the record ID. latest = 0: no version
//                     yet (an insert about to link its first one) or unused.
//   Version (NVM):    creator txid, previous-version pointer, the creator's final status
//                     inlined once known, flags (tombstone), then the tuple payload.
//                     Newest-to-oldest chain. A delete is a tombstone version (section 3); an
//                     insert is a chain whose first version its creator links.
//   VersionHeap:      fixed-size version slots in one NVM region per table; per-thread free
//                     lists in DRAM (rebuilt by recovery from what the chains reach).
//   SiCtx:            what the engine exposes to the CC through RowRef::meta: the worker's
//                     thread id and the slot allocator of the accessed table.
// Pointers are slot numbers + 1 (0 = none), so the image is position independent.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "storage/device/device.h"
#include "storage/parallel.h"

namespace nvt::nvmvcc {

// Transaction status, 2 bits (papers/mcsi.txt 4.4): initial, running, committed, aborted.
enum Status : uint64_t { kInitial = 0, kRunning = 1, kCommitted = 2, kAborted = 3 };

// Versions written by the loader or frozen by recovery: committed and visible to everyone.
constexpr uint64_t kFrozenTxid = 0;

// Version::flags: this version removes the record (a committed delete hides it from the
// snapshots that include its creator).
constexpr uint32_t kTombstone = 1;

struct Version {
  std::atomic<uint64_t> txid;
  uint64_t prev;                 // slot + 1 of the previous version, 0 = none
  std::atomic<uint32_t> inl;     // 0 or the creator's final status (kCommitted / kAborted)
  uint32_t flags;                // kTombstone: the creator deleted the record
  uint64_t seq;                  // the record's version number: the predecessor's + 1
  char* data() { return reinterpret_cast<char*>(this + 1); }
  static Version* of(char* data) { return reinterpret_cast<Version*>(data) - 1; }
  bool tombstone() const { return flags & kTombstone; }
};
static_assert(sizeof(Version) == 32);

// One cache line per head: a line flushed by one thread lands as it was when flushed, so heads
// sharing a line could roll back another record's durable head pointer (crash torture found it
// under the device model's power-failure mode).
struct alignas(64) RecordHead {
  std::atomic<uint64_t> latest;  // slot + 1 of the newest version
  uint64_t key;
};
static_assert(sizeof(RecordHead) == 64);

class VersionHeap {
 public:
  VersionHeap() = default;
  VersionHeap(char* base, uint64_t slot_bytes, uint64_t slots, int threads)
      : base_(base), slot_(slot_bytes), slots_(slots), free_(size_t(threads)) {}

  Version* at(uint64_t ref) const {  // ref = slot + 1
    return reinterpret_cast<Version*>(base_ + (ref - 1) * slot_);
  }
  uint64_t ref_of(const Version* v) const {
    return uint64_t(reinterpret_cast<const char*>(v) - base_) / slot_ + 1;
  }
  // A free slot for thread `tid`, or 0 when the heap is exhausted.
  uint64_t alloc(int tid) {
    auto& f = free_[size_t(tid)].list;
    if (!f.empty()) { uint64_t r = f.back(); f.pop_back(); return r; }
    uint64_t s = next_.fetch_add(1, std::memory_order_relaxed);
    if (s >= slots_) { next_.store(slots_, std::memory_order_relaxed); return 0; }
    return s + 1;
  }
  void free(int tid, uint64_t ref) { free_[size_t(tid)].list.push_back(ref); }

  // Recovery: `used` marks the reachable slots; everything else below the high-water mark
  // becomes free, thread t's list the free slots of the t-th of `threads` equal runs, the lists
  // built on `workers` threads.
  void rebuild(const std::vector<uint8_t>& used, int threads, int workers) {
    const size_t nw = size_t(std::max(1, workers));
    std::vector<uint64_t> tops(nw, 0);
    parallel(int(nw), [&](int w) {
      for (uint64_t s = used.size() * uint64_t(w + 1) / nw; s-- > used.size() * uint64_t(w) / nw;)
        if (used[s]) { tops[size_t(w)] = s + 1; break; }
    });
    const uint64_t hw = *std::max_element(tops.begin(), tops.end());
    free_.assign(size_t(threads), {});
    parallel(int(nw), [&](int w) {
      for (size_t t = size_t(w); t < size_t(threads); t += nw)
        for (uint64_t s = hw * t / size_t(threads); s < hw * (t + 1) / size_t(threads); s++)
          if (!used[s]) free_[t].list.push_back(s + 1);
    });
    next_.store(hw);
  }
  void resize_threads(int threads) {
    if (size_t(threads) > free_.size()) free_.resize(size_t(threads));
  }

  uint64_t slot_bytes() const { return slot_; }
  uint64_t slots() const { return slots_; }
  uint64_t high_water() const { return std::min(next_.load(), slots_); }
  uint64_t free_slots() const {
    uint64_t n = 0;
    for (auto& f : free_) n += f.list.size();
    return n;
  }

 private:
  struct alignas(64) FreeList { std::vector<uint64_t> list; };
  char* base_ = nullptr;
  uint64_t slot_ = 0, slots_ = 0;
  std::atomic<uint64_t> next_{0};
  std::vector<FreeList> free_;
};

// Per-worker context the engine hands the CC through RowRef::meta.
struct alignas(64) SiCtx {
  int tid = 0;
  VersionHeap* heap = nullptr;
  uint64_t versions_created = 0;
  uint64_t versions_pruned = 0;
  uint64_t chain_steps = 0;  // versions passed over by reads and update checks
};

}  // namespace nvt::nvmvcc

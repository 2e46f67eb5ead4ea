// The persistent row (papers/nvcaracal-eurosys23.txt sections 4.3-4.5, 5.3): a fixed-size slot
// in NVM (--persistent-row-bytes, default 256, Optane's access unit) holding at most two
// versions: the last checkpointed one and one written in the running epoch (or a stale
// checkpointed one). Its first cache line is the header {sid, ref} x 2 plus the key and table
// (so recovery rebuilds the index by scanning rows); the rest is an inline heap of two halves.
// A value that fits a half lives inline, a larger one in a block of the persistent value pool.
//
// Ordering: version 0 always has the smaller serial id. The header is one cache line written
// by one flush, so a crash leaves it whole, old or new (the device model persists a flushed
// line as it was when flushed); a new value goes to the slot of the stale version, never over
// the checkpointed one, so whichever header survives names an intact checkpointed version, and
// a version of an epoch later than the committed one is dropped by recovery (revert).
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>

#include "storage/engines/nvcaracal/epoch.h"

namespace nvt::nvc {

struct alignas(64) RowHeader {
  Sid sid[2];       // 0 = no version
  uint64_t ref[2];  // kInline | offset in the row, a value-pool reference (+1), kTombstone; 0 = none
  uint64_t key;
  uint32_t table;
  uint32_t len;     // value bytes
  uint64_t live;    // kLive while the row is allocated
  uint64_t pad;
};
static_assert(sizeof(RowHeader) == 64);

inline constexpr uint64_t kInline = 1ull << 63;
// The reference of a version that deletes the row (a tombstone: no value). Major GC then frees
// the row; until it has, readers and recovery see no row.
inline constexpr uint64_t kTombstone = 1ull << 62;
inline constexpr uint64_t kLive = 0x524f57ull;  // "ROW"
inline constexpr uint32_t kHeaderBytes = sizeof(RowHeader);
// The smallest row: the header and an inline heap of two 32 B halves.
inline constexpr uint32_t kMinRowBytes = 128;

inline bool is_inline(uint64_t ref) { return ref & kInline; }
inline bool is_tombstone(uint64_t ref) { return ref == kTombstone; }

// The geometry every row of an image shares.
struct RowGeometry {
  uint32_t row_bytes = 256;
  uint32_t half() const { return (row_bytes - kHeaderBytes) / 2; }
  bool fits_inline(uint32_t len) const { return len <= half(); }
  uint64_t inline_slot(int i) const { return kInline | (kHeaderBytes + uint64_t(i) * half()); }
  // The inline slot the other version does not use.
  uint64_t other_inline(uint64_t ref) const { return ref == inline_slot(0) ? inline_slot(1) : inline_slot(0); }
};

// Change a header in place, one 8 B store at a time in an order a crash between any two of
// them (eADR persists every store) leaves recoverable: a version's serial id is set before its
// reference and cleared before it, and version 0 takes version 1's serial id before its
// reference (both ids equal: repair() keeps version 1). The caller flushes the line; under
// ADR the flushed line lands whole.
inline void store_header(RowHeader* h, const RowHeader& to) {
  auto put = [](uint64_t& field, uint64_t v) {
    if (field != v) std::atomic_ref<uint64_t>(field).store(v, std::memory_order_release);
  };
  if (to.sid[0] != h->sid[0]) {  // version 0 changes: becomes version 1 (GC)
    put(h->sid[0], to.sid[0]);
    put(h->ref[0], to.ref[0]);
  }
  if (to.sid[1] != h->sid[1] || to.ref[1] != h->ref[1]) {
    put(h->sid[1], to.sid[1]);
    put(h->ref[1], to.ref[1]);
  }
}
// After a crash: both serial ids equal (a crash inside GC's copy of version 1 over version 0)
// keep version 1 alone; a reference without a serial id goes. True when it changed anything.
inline bool repair(RowHeader& h) {
  bool changed = false;
  if (h.sid[0] && h.sid[0] == h.sid[1]) {
    h.ref[0] = h.ref[1];
    h.sid[1] = 0;
    changed = true;
  }
  if (!h.sid[1] && h.ref[1]) h.ref[1] = 0, changed = true;
  return changed;
}

// The latest version whose epoch is at most `epoch` (the checkpoint a reader before this
// epoch's writes sees); -1 when none.
inline int version_at_most(const RowHeader& h, uint64_t epoch) {
  for (int i = 1; i >= 0; i--)
    if (h.sid[i] && epoch_of(h.sid[i]) <= epoch) return i;
  return -1;
}

}  // namespace nvt::nvc

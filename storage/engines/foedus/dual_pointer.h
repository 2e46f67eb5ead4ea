// FOEDUS's dual pointer (foedus-sigmod15 section 4): every page pointer names both the volatile
// page in DRAM (null when there is none) and the snapshot page in NVM (0 when the page was never
// snapshotted). Each half is one atomic word: a worker installs the volatile half by CAS (two
// installers race, one wins), the log gleaner sets the snapshot half and drops the volatile half
// while transactions are paused (section 7.5), so no reader ever sees a half-made pair.
#pragma once
#include <atomic>
#include <cstdint>

namespace nvt::foedus {

struct Page;

// A snapshot pointer: the snapshot that wrote the page (16 bits, wrapping) over the page's index
// in the snapshot area (48 bits). The snapshot id keeps a reused page index from aliasing an
// older page in the snapshot cache, whose tags are whole snapshot pointers.
using SnapshotPtr = uint64_t;
inline SnapshotPtr make_snapshot_ptr(uint64_t snapshot, uint64_t index) { return (snapshot & 0xffff) << 48 | index; }
inline uint64_t snapshot_index(SnapshotPtr p) { return p & ((1ull << 48) - 1); }

struct DualPointer {
  std::atomic<Page*> volatile_page{nullptr};
  std::atomic<SnapshotPtr> snapshot_page{0};
};
static_assert(sizeof(DualPointer) == 16);

}  // namespace nvt::foedus

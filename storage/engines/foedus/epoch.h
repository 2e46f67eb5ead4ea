// FOEDUS's epochs (foedus-sigmod15 section 6, after Silo): the global epoch advances every
// --epoch-ms; a commit's TID carries the epoch it serialized in; the durable global epoch is the
// largest epoch whose every log record is in NVM behind a fence. A transaction is acknowledged
// once its epoch is durable. Process-wide (the CC method reads the epoch at its serialization
// point, the engine's log writer advances it), set by the engine that owns the image.
#pragma once
#include <atomic>
#include <cstdint>

namespace nvt::foedus {

inline std::atomic<uint64_t> g_epoch{1};

// Flags of a record's TID word above the TID itself (Silo's layout: epoch << 32 | sequence):
// bit 63 is Silo's lock; the ordered tree (tree_storage.h) adds three. kMoved: a split copied
// the record to a new page, so whoever holds this copy aborts at validation; kAbsent: no
// committed record (a committed delete's tombstone, or an insert not yet committed);
// kInserting: an insert not yet committed or rolled back (with kAbsent).
constexpr uint64_t kTidLock = 1ull << 63;
constexpr uint64_t kTidMoved = 1ull << 62;
constexpr uint64_t kTidAbsent = 1ull << 61;
constexpr uint64_t kTidInserting = 1ull << 60;
constexpr uint64_t kTidBits = kTidInserting - 1;  // the TID without flags

// The epoch part of a TID.
inline uint64_t epoch_of(uint64_t tid) { return (tid & kTidBits) >> 32; }

}  // namespace nvt::foedus

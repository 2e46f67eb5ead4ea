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

// The epoch part of a TID (Silo's layout: epoch << 32 | sequence; bit 63 is the lock).
inline uint64_t epoch_of(uint64_t tid) { return (tid & ~(1ull << 63)) >> 32; }

}  // namespace nvt::foedus

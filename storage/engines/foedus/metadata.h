// FOEDUS's durable metadata in NVM (foedus-sigmod15 sections 6-7): the durable-epoch marker the
// log writer persists after each fenced batch, and the snapshot metadata record the gleaner
// persists after a snapshot's pages. Each comes in two slots written alternately with a sequence
// number and a checksum, so a torn write leaves the previous record valid (recovery takes the
// valid slot with the larger sequence).
#pragma once
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

#include "storage/device/device.h"
#include "storage/engines/foedus/dual_pointer.h"

namespace nvt::foedus {

constexpr uint32_t kMaxLogs = 64;
constexpr uint32_t kMaxStorages = 16;

inline uint64_t checksum_words(const void* p, size_t bytes) {
  uint64_t x = 0xcbf29ce484222325ull, w;
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    memcpy(&w, static_cast<const char*>(p) + i, 8);
    x = (x ^ w) * 0x100000001b3ull;
    x ^= x >> 29;
  }
  return x | 1;  // never 0: zeroed NVM is never valid
}

// Durable global epoch: every log record of an epoch at or below `epoch` lies in its log below
// `lsn[log]` behind a fence. Records at or above lsn, or of a later epoch, are not durable.
// The checksum covers the words in use only, so with up to five logs the marker is one cache
// line, written back whole or not at all.
struct EpochMarker {
  uint64_t seq;
  uint64_t checksum;
  uint64_t epoch;
  uint64_t lsn[kMaxLogs];
  uint64_t sum(uint64_t nlogs) const {
    return checksum_words(&epoch, sizeof epoch + nlogs * sizeof(uint64_t)) ^ seq;
  }
};

// A snapshot (section 7.4): its id, the epoch it covers, where each log's gleaning stopped, the
// root page of every storage, and the snapshot area's high-water mark.
struct SnapshotMeta {
  uint64_t seq;
  uint64_t id;
  uint64_t epoch;
  uint64_t gleaned[kMaxLogs];
  SnapshotPtr root[kMaxStorages];
  uint64_t high_water;  // snapshot page indexes in use are below this
  uint64_t checksum;
  uint64_t sum() const { return checksum_words(this, offsetof(SnapshotMeta, checksum)); }
};

struct MetaArea {
  static constexpr uint64_t kMagic = 0x31535544454f46ull;  // "FOEDUS1"
  uint64_t magic;
  uint64_t nlogs;
  uint64_t page_size;  // a restart must use the image's page geometry
  uint64_t pad[5];
  alignas(64) EpochMarker marker[2];
  alignas(64) SnapshotMeta snapshot[2];

  template <class R, class... N>
  static const R* newest(const R (&slots)[2], N... nlogs) {
    const R* best = nullptr;
    for (auto& r : slots)
      if (r.seq && r.checksum == r.sum(nlogs...) && (!best || r.seq > best->seq)) best = &r;
    return best;
  }
};

// The metadata region opened: a fresh image's initialized (as many logs as threads), an existing
// one's checked against this run (its page size; no more threads than it has logs). Returns the
// image's log count.
inline uint32_t open_meta(MetaArea& m, bool existed, int nthreads, uint64_t page_size) {
  if (!existed) {
    memset(static_cast<void*>(&m), 0, sizeof m);
    m.magic = MetaArea::kMagic;
    m.nlogs = uint64_t(nthreads);
    m.page_size = page_size;
    dev::persist(&m, sizeof m);
  } else if (m.magic != MetaArea::kMagic) {
    throw std::runtime_error("FOEDUS: the image's metadata is not FOEDUS's");
  } else if (m.page_size != page_size) {
    throw std::invalid_argument("FOEDUS: the image was made with --page-size " + std::to_string(m.page_size) +
                                ", not " + std::to_string(page_size));
  }
  const uint32_t nlogs = uint32_t(m.nlogs);
  if (nlogs > kMaxLogs || nlogs == 0) throw std::runtime_error("FOEDUS: bad log count in the image");
  if (uint32_t(nthreads) > nlogs && existed)
    throw std::invalid_argument("FOEDUS: the image has logs for " + std::to_string(nlogs) + " threads");
  return nlogs;
}

}  // namespace nvt::foedus

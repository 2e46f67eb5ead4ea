// Combining root pages and metadata (foedus-sigmod15 section 7.4): a snapshot is complete once
// its metadata, naming every storage's root page, the logs' gleaned offsets and the snapshot
// area's high water, is persisted. Two slots, alternating; a restart takes the newest intact
// one (MetaArea::newest), so a power failure mid-write leaves the previous snapshot.
#pragma once
#include <cstdint>
#include <vector>

#include "storage/device/device.h"
#include "storage/engines/foedus/gleaner.h"
#include "storage/engines/foedus/metadata.h"
#include "storage/engines/foedus/tree_snapshot.h"

namespace nvt::foedus {

inline void write_snapshot_meta(MetaArea& meta, uint64_t id, uint64_t epoch, const std::vector<uint64_t>& gleaned,
                                const std::vector<SnapshotTree>& trees, const std::vector<TreeSnapshot>& tsnap,
                                uint64_t high_water) {
  const SnapshotMeta* prev = MetaArea::newest(meta.snapshot);
  uint64_t seq = prev ? prev->seq + 1 : 1;
  SnapshotMeta& m = meta.snapshot[seq & 1];
  m.seq = seq;
  m.id = id;
  m.epoch = epoch;
  for (uint32_t i = 0; i < kMaxLogs; i++) m.gleaned[i] = i < gleaned.size() ? gleaned[i] : 0;
  for (uint32_t i = 0; i < kMaxStorages; i++) m.root[i] = 0;
  for (auto& t : trees) m.root[t.id] = t.ptrs.back()[0];
  for (auto& t : tsnap) m.root[t.id] = t.root;
  m.high_water = high_water;
  m.checksum = m.sum();
  dev::persist(&m, sizeof m);
}

}  // namespace nvt::foedus

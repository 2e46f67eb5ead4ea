// FOEDUS's log gleaner (foedus-sigmod15 section 7): turns the durable logs into the next
// snapshot. Mappers (--gleaner-mappers) read the log files in NVM from where the last gleaning
// stopped up to the snapshot epoch (each log cut into pieces that any mapper takes, where 7.2
// has a mapper per log), compact repeated writes of a key (7.3) and partition the
// records by storage and page among the reducers (--gleaner-reducers); each reducer sorts its
// records, compacts again, and merge-applies them onto the previous snapshot's leaf pages,
// writing the new pages to NVM; the interior pages above changed leaves are then written anew.
// Ordered trees (tree_snapshot.h) likewise, their records partitioned by the previous
// snapshot's leaf, the merged leaves cut where the volatile tree's leaves are cut.
// All writes go to pages the snapshot area hands out in ascending order (long sequential runs).
// The caller persists the snapshot metadata and installs the pointers (7.4-7.5). Its device
// traffic and time are its own (GleanResult), apart from the workers'.
#pragma once
#include <cstdint>
#include <vector>

#include "storage/device/device.h"
#include "storage/device/dram_budget.h"
#include "storage/engines/foedus/array_storage.h"
#include "storage/engines/foedus/snapshot_area.h"
#include "storage/engines/foedus/tree_snapshot.h"

namespace nvt::foedus {

// A storage as the gleaner sees it: its shape and the snapshot pointer of every page of the
// current snapshot, per level (leaves first). The gleaner updates `ptrs` to the new snapshot.
struct SnapshotTree {
  uint32_t id;
  ArrayShape shape;
  std::vector<std::vector<SnapshotPtr>> ptrs;
};

// One log file's part to glean: its ring and the LSN range. `verify`: read the whole range, the
// records above the epoch too, to check that every one is intact (a restart: the durable-epoch
// marker claims every byte below its LSN reached NVM).
struct LogRange {
  const char* base;
  uint64_t cap;
  uint64_t from, to;
  bool verify = false;
};

struct GleanResult {
  std::vector<uint64_t> stop;  // per log: the LSN of the first record left for the next time
  // Per log: it stopped before its range's end at bytes that are no log record (not at a record
  // of a later epoch): the range claimed records that never reached NVM (a torn log).
  std::vector<uint8_t> torn;
  // Each stage's records, counted where the stage handles them (Table 3's per-stage throughput):
  uint64_t records = 0;        // mappers: log records read (epoch at or below the snapshot's)
  uint64_t reducer_input = 0;  // reducers: records received (what the mappers' compaction left)
  uint64_t applied = 0;        // reducers: records applied to pages (what their compaction left)
  uint64_t log_bytes = 0;
  // Mappers: the pieces the logs were cut into, and those parsed again (their guessed start was
  // not where the piece before them ended: a record's bytes inside another's payload, or a torn one).
  uint64_t pieces = 0, pieces_parsed_again = 0;
  uint64_t pages_written = 0, bytes_written = 0;
  double map_s = 0, reduce_s = 0, interior_s = 0;
  // The same stages' CPU time, the process's (meaningful at a restart, when nothing else runs).
  double map_cpu_s = 0, reduce_cpu_s = 0, interior_cpu_s = 0;
  dev::Counters device;        // the gleaner threads' own traffic
  // DRAM working memory (hash maps, partitions, sort arrays, page buffers): its peak, and what
  // of it the DRAM budget could not cover (charged as foedus.gleaner_work while it lives).
  uint64_t work_peak_bytes = 0, work_unbudgeted_bytes = 0;
};

// Write new interior pages above the leaves `changed` names (per tree), bottom up, each level's
// pages on up to `nthreads` threads, updating `ptrs` and retiring the pages they supersede; then
// fence. Returns the pages written.
uint64_t write_interiors(std::vector<SnapshotTree>& trees, SnapshotArea& area,
                         std::vector<std::vector<uint64_t>>& changed, uint64_t epoch, uint64_t snapshot_id,
                         int nthreads = 1, const HelperTraffic& traffic = {});

// `trees`: the array storages; `ordered`: the ordered trees (their `bounds` set by the caller),
// whose log records are partitioned by the previous snapshot's leaf and merged onto it, the new
// leaves cut at the bounds, then their interior pages written anew.
// `dram`: the ledger its working memory is charged to (as overhead, foedus.gleaner_work) while
// it lives; the log ranges are parsed where they lie in NVM, not copied into DRAM.
GleanResult glean(std::vector<SnapshotTree>& trees, std::vector<TreeSnapshot>& ordered, SnapshotArea& area,
                  const std::vector<LogRange>& logs, uint64_t epoch, uint64_t snapshot_id, int mappers, int reducers,
                  dev::DramBudget* dram = nullptr);

}  // namespace nvt::foedus

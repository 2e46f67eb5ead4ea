// FOEDUS's counters for stats(): the workers' counters summed, the snapshot cache's, the log
// writer's, the ordered trees', and the gleaner's totals over its runs (each run's GleanResult,
// plus the install/drop pass's, 7.5), as JSON.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "storage/device/device.h"
#include "storage/engines/foedus/gleaner.h"
#include "storage/engines/foedus/log_writer.h"
#include "storage/engines/foedus/snapshot_cache.h"
#include "storage/engines/foedus/tree_storage.h"
#include "storage/engines/foedus/worker.h"

namespace nvt::foedus {

// Workers' counters summed: volatile reads, snapshot reads, cache hits, misses, installs, the
// misses' NVM bytes, waits for a drop pass and their time.
inline std::array<uint64_t, 8> worker_counts(const std::deque<Worker>& threads) {
  std::array<uint64_t, 8> c{};
  for (auto& th : threads) {
    c[0] += th.volatile_reads;
    c[1] += th.snapshot_reads;
    c[2] += th.cache_hits;
    c[3] += th.cache_misses;
    c[4] += th.installs;
    c[5] += th.miss_bytes;
    c[6] += th.dram_waits;
    c[7] += th.dram_wait_ns;
  }
  return c;
}

// Per ordered tree: its splits, and its snapshot's leaves and interior pages at the last gleaning.
inline nlohmann::json tree_stats(const std::vector<std::unique_ptr<TreeStorage>>& ordered,
                                 const std::vector<std::pair<uint64_t, uint64_t>>& sizes) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < ordered.size(); i++)
    j[ordered[i]->info.name] = {{"splits", ordered[i]->splits()},
                                {"snapshot_leaves", i < sizes.size() ? sizes[i].first : 0},
                                {"snapshot_interior_pages", i < sizes.size() ? sizes[i].second : 0}};
  return j;
}

// The snapshot cache (null: FOEDUS-NoSC) and the measured phase's hits and misses.
inline nlohmann::json snapshot_cache_stats(const SnapshotCache* cache, uint64_t hits, uint64_t misses,
                                           uint64_t miss_bytes) {
  return {{"enabled", cache != nullptr},
          {"frames", cache ? cache->frames() : 0},
          {"bytes", cache ? cache->bytes() : 0},
          {"hits", hits},
          {"misses", misses},
          {"miss_nvm_read_bytes", miss_bytes},
          {"bytes_read_per_miss", misses ? double(miss_bytes) / double(misses) : 0.0},
          {"evictions", cache ? cache->evictions() : 0}};
}

inline nlohmann::json log_writer_stats(const LogWriter::Stats& ls) {
  return {{"batches", ls.batches},
          {"bytes", ls.bytes},
          {"records", ls.records},
          {"stalls", ls.stalls},
          {"busy_s", ls.busy_s},
          {"records_per_s", ls.busy_s > 0 ? double(ls.records) / ls.busy_s : 0.0}};
}

struct GleanerTotals {
  uint64_t runs = 0, records = 0, reducer_input = 0, applied = 0, log_bytes = 0, pages = 0, bytes = 0, dropped = 0;
  uint64_t work_peak = 0, work_unbudgeted = 0, pieces = 0, pieces_parsed_again = 0;
  double time_s = 0, map_s = 0, reduce_s = 0, interior_s = 0, install_s = 0, pause_s = 0;
  dev::Counters device;

  // One gleaning; `extra`: its install pass (dropped pages, times), none for a restart's.
  void add(const GleanResult& r, const GleanerTotals* extra) {
    runs++;
    records += r.records;
    reducer_input += r.reducer_input;
    applied += r.applied;
    interior_s += r.interior_s;
    work_peak = std::max(work_peak, r.work_peak_bytes);
    work_unbudgeted += r.work_unbudgeted_bytes;
    log_bytes += r.log_bytes;
    pieces += r.pieces;
    pieces_parsed_again += r.pieces_parsed_again;
    pages += r.pages_written;
    bytes += r.bytes_written;
    map_s += r.map_s;
    reduce_s += r.reduce_s;
    device += r.device;
    if (extra) {
      dropped += extra->dropped;
      install_s += extra->install_s;
      pause_s += extra->pause_s;
      time_s += extra->time_s;
    } else {
      time_s += r.map_s + r.reduce_s + r.interior_s;
    }
  }

  nlohmann::json json() const {
    return nlohmann::json{{"runs", runs},
                          {"time_s", time_s},
                          {"map_s", map_s},
                          {"reduce_s", reduce_s},
                          {"install_s", install_s},
                          {"pause_s", pause_s},
                          {"log_records", records},
                          {"records_applied", applied},
                          {"log_bytes_gleaned", log_bytes},
                          {"log_pieces", pieces},  // the mappers' pieces of the logs, and those parsed twice
                          {"log_pieces_parsed_again", pieces_parsed_again},
                          {"snapshot_pages_written", pages},
                          {"snapshot_bytes_written", bytes},
                          {"volatile_pages_dropped", dropped},
                          {"nvm_read_bytes", device.nvm_read_bytes},
                          {"nvm_write_bytes", device.nvm_write_bytes},
                          {"clwb", device.clwb},
                          {"sfence", device.sfence},
                          {"interior_s", interior_s},
                          {"reducer_input_records", reducer_input},
                          {"work_bytes_peak", work_peak},
                          {"work_bytes_unbudgeted", work_unbudgeted},
                          // Each stage's records over its own time: the mappers' records read,
                          // the reducers' records applied (after both compactions).
                          {"mapper_records_per_s", map_s > 0 ? double(records) / map_s : 0.0},
                          {"reducer_records_per_s", reduce_s > 0 ? double(applied) / reduce_s : 0.0}};
  }
};

}  // namespace nvt::foedus

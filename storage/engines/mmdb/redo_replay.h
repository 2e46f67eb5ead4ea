// MMDB's redo replay on every recovery thread, whatever the number of logs: each log's ring from
// its replay start is cut into pieces that threads take in LSN order. A piece is parsed from a
// guess (the first intact record at or after its start) while the pieces before it are parsed
// elsewhere; once the piece before it is resolved (where its last record ended, or that the log
// stopped in it), the guess is checked against that end and the piece parsed again from it if
// the guess was wrong (a record can hold bytes that look like a record). A resolved piece is
// then applied while its bytes are still in cache. Applying is order-free (an image is
// installed only if newer than the row's), so the records applied are exactly those one pass of
// RedoLog::scan() visits, and each log ends where that pass ends.
#pragma once
#include <cstdint>
#include <vector>

#include "storage/engines/mmdb/redo_log.h"

namespace nvt::mmdb {

struct ReplayResult {
  std::vector<uint64_t> end;  // per log: the LSN after its last valid record
  uint64_t pieces = 0;        // pieces resolved on a log's chain
  uint64_t parsed_again = 0;  // pieces whose guessed start was wrong
};

struct ReplayOptions {
  uint64_t piece_bytes = 256 << 10;  // a piece stays in a core's cache from its parse to its apply
  bool always_guess = false;  // tests: guess every piece's start, even when the one before is resolved
};

// Replay logs[l] from from[l] on nthreads threads: f(entry, image) for every entry of every
// record one pass would visit, from any thread (f must be safe to call concurrently).
ReplayResult replay_logs(const std::vector<const RedoLog*>& logs, const std::vector<uint64_t>& from,
                         int nthreads, const RedoLog::Visit& f, const ReplayOptions& opt = {});

}  // namespace nvt::mmdb

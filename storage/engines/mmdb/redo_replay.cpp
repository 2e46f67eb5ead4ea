#include "storage/engines/mmdb/redo_replay.h"

#include <algorithm>
#include <atomic>
#include <deque>

#include "storage/parallel.h"

namespace nvt::mmdb {

namespace {

// The records that start in [begin, end) of one log's LSNs.
struct Piece {
  Piece(uint32_t l, uint64_t b, uint64_t e, bool f, bool la) : log(l), begin(b), end(e), first(f), last(la) {}
  uint32_t log;
  uint64_t begin, end;
  bool first, last;               // of its log's pieces
  std::vector<uint64_t> records;  // their LSNs
  uint64_t next = 0;              // where parsing ended: a record start at or past `end`, or the stop
  bool stopped = false;           // the log's valid records end at `next`, or before this piece
  std::atomic<bool> resolved{false};

  void resolve() {
    resolved.store(true, std::memory_order_release);
    resolved.notify_all();
  }
};

// Parse p's records from `lsn`, a record start.
void parse(const RedoLog& log, Piece& p, uint64_t lsn) {
  p.records.clear();
  for (lsn = log.record_start(lsn); lsn < p.end; lsn = log.record_start(lsn)) {
    const uint32_t bytes = log.intact(lsn);
    if (!bytes) {
      p.next = lsn;
      p.stopped = true;
      return;
    }
    p.records.push_back(lsn);
    lsn += bytes;
  }
  p.next = lsn;
  p.stopped = false;
}

}  // namespace

ReplayResult replay_logs(const std::vector<const RedoLog*>& logs, const std::vector<uint64_t>& from,
                         int nthreads, const RedoLog::Visit& f, const ReplayOptions& opt) {
  ReplayResult res;
  res.end.assign(logs.size(), 0);
  const uint64_t piece_bytes = std::max<uint64_t>(8, opt.piece_bytes & ~uint64_t(7));
  // Each log's ring from its start, in pieces that never cross the ring's end (no record does).
  std::deque<Piece> pieces;
  for (uint32_t l = 0; l < logs.size(); l++) {
    const uint64_t cap = logs[l]->capacity(), lim = from[l] + cap;
    for (uint64_t b = from[l]; b < lim;) {
      const uint64_t e = std::min({b + piece_bytes, lim, (b / cap + 1) * cap});
      pieces.emplace_back(l, b, e, b == from[l], e == lim);
      b = e;
    }
  }
  std::vector<std::atomic<bool>> ended(logs.size());
  std::atomic<size_t> take{0};
  std::atomic<uint64_t> resolved_on_chain{0}, again{0};
  parallel(std::max(1, nthreads), [&](int) {
    for (size_t i; (i = take.fetch_add(1)) < pieces.size();) {
      Piece& p = pieces[i];
      if (ended[p.log].load(std::memory_order_acquire)) {  // past the log's end: nothing to do
        p.stopped = true;
        p.resolve();
        continue;
      }
      const RedoLog& log = *logs[p.log];
      Piece* prev = p.first ? nullptr : &pieces[i - 1];
      // Parse from a guess while the piece before is still open; else from where it ended.
      uint64_t guessed = p.end;
      if (prev && (opt.always_guess || !prev->resolved.load(std::memory_order_acquire))) {
        guessed = log.find_intact(p.begin, p.end);
        if (guessed < p.end) parse(log, p, guessed);
      }
      uint64_t start = from[p.log];
      bool on_chain = true;
      if (prev) {
        prev->resolved.wait(false, std::memory_order_acquire);
        on_chain = !prev->stopped;
        start = prev->next;
      }
      if (!on_chain) {
        p.records.clear();
        p.stopped = true;
      } else if (start >= p.end) {  // a record from an earlier piece covers this one
        p.records.clear();
        p.next = start;
        p.stopped = false;
      } else if (start != guessed) {
        if (guessed < p.end) again.fetch_add(1, std::memory_order_relaxed);
        parse(log, p, start);
      }
      if (on_chain) {
        resolved_on_chain.fetch_add(1, std::memory_order_relaxed);
        if (p.stopped || p.last) res.end[p.log] = p.next;
        if (p.stopped) ended[p.log].store(true, std::memory_order_release);
      }
      p.resolve();  // before applying: the next piece's thread only needs where this one ended
      if (on_chain)
        for (uint64_t lsn : p.records) log.entries(lsn, f);
      std::vector<uint64_t>().swap(p.records);
    }
  });
  res.pieces = resolved_on_chain.load();
  res.parsed_again = again.load();
  return res;
}

}  // namespace nvt::mmdb

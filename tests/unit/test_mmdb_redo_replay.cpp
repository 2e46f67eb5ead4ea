// MMDB's redo replay in pieces (storage/engines/mmdb/redo_replay.h) against one pass of
// RedoLog::scan() over the same logs: every record holds, inside its first image, a whole record
// sealed for the LSN it lands at, so a piece that starts inside a record guesses wrong and is
// parsed again; one log wraps round its ring's end, one is empty; the torn variants stop a log
// in its middle (a zeroed header, a flipped body byte) with valid records after the stop. On 1,
// 2, 3 and 8 threads, in pieces of several sizes, the entries applied and each log's end are
// those of the one pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "storage/engines/mmdb/redo_replay.h"

using namespace nvt;
using namespace nvt::mmdb;

namespace {

// An entry as replay sees it: table, key, version, image length and a hash of the image.
using Seen = std::tuple<uint32_t, uint64_t, uint64_t, uint32_t, uint64_t>;

Seen seen(const LogEntry& e, const char* img) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint32_t i = 0; i < e.len; i++) h = (h ^ uint8_t(img[i])) * 0x100000001b3ull;
  return {e.table, e.key, e.version, e.len, h};
}

struct TestLog {
  explicit TestLog(uint64_t cap) : ring(cap, 0), scratch_ring(cap, 0), log(dev::Region{ring.data(), cap}),
                                   scratch(dev::Region{scratch_ring.data(), cap}) {}
  std::vector<char> ring, scratch_ring;
  RedoLog log, scratch;  // scratch seals the planted records
  uint64_t from = 0;
  std::vector<uint64_t> starts;  // each record's LSN

  uint64_t cap() const { return ring.size(); }
  // Records from `lsn` until `bytes` are written.
  void fill(uint64_t lsn, uint64_t bytes, std::mt19937_64& rng) {
    from = lsn;
    log.reset(lsn, lsn);
    while (log.tail() - from < bytes) append(rng);
  }
  void append(std::mt19937_64& rng) {
    const int n = 1 + int(rng() % 4);
    std::vector<uint32_t> len;
    uint64_t bytes = 24;
    for (int i = 0; i < n; i++) {
      len.push_back(80 + uint32_t(rng() % 1400));
      bytes += 24 + ((len.back() + 7) & ~7u);
    }
    uint64_t lsn = log.tail();
    if (cap() - lsn % cap() < bytes) lsn += cap() - lsn % cap();  // the record goes after a filler
    starts.push_back(lsn);
    // The first image holds a record sealed for where it lands: header, entry, 16 bytes.
    std::vector<char> img0(len[0]);
    for (char& c : img0) c = char(rng());
    const uint64_t at = 8 * (rng() % ((len[0] - 64) / 8));
    const uint64_t planted = lsn + 48 + at;
    scratch.reset(planted, planted);
    scratch.begin();
    char* p = scratch.add(99, rng(), 1, 16);
    memset(p, 7, 16);
    EXPECT_TRUE(scratch.append());
    memcpy(img0.data() + at, scratch_ring.data() + planted % cap(), 64);
    log.begin();
    for (int i = 0; i < n; i++) {
      char* d = log.add(uint32_t(i % 3), rng() % 5000, rng(), len[size_t(i)]);
      if (i == 0) memcpy(d, img0.data(), len[0]);
      else for (uint32_t b = 0; b < len[size_t(i)]; b++) d[b] = char(rng());
    }
    EXPECT_TRUE(log.append());
  }
};

}  // namespace

TEST(MmdbRedoReplay, PiecesTakeWhatOnePassTakesOnAnyThreadCount) {
  std::mt19937_64 rng(11);
  std::vector<std::unique_ptr<TestLog>> logs;
  logs.push_back(std::make_unique<TestLog>(1 << 20));
  logs[0]->fill(5 * (1ull << 20) - 40000, 900000, rng);  // across the ring's end
  logs.push_back(std::make_unique<TestLog>(256 << 10));
  logs[1]->fill(8192, 100000, rng);
  logs.push_back(std::make_unique<TestLog>(64 << 10));  // empty
  ASSERT_GT(logs[0]->starts.back() / logs[0]->cap(), logs[0]->from / logs[0]->cap()) << "log 0 wraps";

  for (int variant = 0; variant < 3; variant++) {  // 0: intact, 1: a zeroed header, 2: a flipped body byte
    std::vector<std::vector<char>> saved;
    for (auto& l : logs) saved.push_back(l->ring);
    if (variant == 1) {
      TestLog& l = *logs[0];
      memset(l.ring.data() + l.starts[l.starts.size() / 2] % l.cap(), 0, 24);
    } else if (variant == 2) {
      TestLog& l = *logs[1];
      l.ring[(l.starts[l.starts.size() / 3] + 100) % l.cap()] ^= 1;
    }
    std::vector<Seen> want;
    std::vector<uint64_t> want_end;
    for (auto& l : logs)
      want_end.push_back(l->log.scan(l->from, [&](const LogEntry& e, const char* img) { want.push_back(seen(e, img)); }));
    std::sort(want.begin(), want.end());
    ASSERT_GT(want.size(), 500u);
    if (variant == 0) {
      EXPECT_EQ(want_end[0], logs[0]->log.tail());
    } else {
      const int l = variant == 1 ? 0 : 1;
      EXPECT_LT(want_end[size_t(l)], logs[size_t(l)]->log.tail()) << "the pass stops in the log's middle";
    }

    std::vector<const RedoLog*> ptrs;
    std::vector<uint64_t> from;
    for (auto& l : logs) {
      ptrs.push_back(&l->log);
      from.push_back(l->from);
    }
    for (uint64_t piece : {4096ull, 16384ull, 256ull << 10})
      for (bool always_guess : {false, true})
        for (int threads : {1, 2, 3, 8}) {
          SCOPED_TRACE("variant " + std::to_string(variant) + ", pieces of " + std::to_string(piece) + " B, " +
                       std::to_string(threads) + " threads" + (always_guess ? ", always guessing" : ""));
          std::mutex mu;
          std::vector<Seen> got;
          ReplayResult r = replay_logs(ptrs, from, threads, [&](const LogEntry& e, const char* img) {
            Seen s = seen(e, img);
            std::lock_guard g(mu);
            got.push_back(s);
          }, {piece, always_guess});
          std::sort(got.begin(), got.end());
          EXPECT_EQ(r.end, want_end);
          EXPECT_TRUE(got == want) << got.size() << " entries applied, one pass visits " << want.size();
          EXPECT_GE(r.pieces, (want_end[0] - from[0]) / piece);
          if (always_guess && piece < (256u << 10)) {
            EXPECT_GT(r.parsed_again, 0u) << r.pieces << " pieces, every guess right: the test misses its case";
          }
          if (!always_guess && threads == 1) {
            EXPECT_EQ(r.parsed_again, 0u) << "one thread never guesses";
          }
        }
    for (size_t i = 0; i < logs.size(); i++) logs[i]->ring = saved[i];
  }
}

// Keys for inserts beyond the loaded range, and the committed high-water mark readers draw
// below (YCSB's insert key sequence and its AcknowledgedCounterGenerator).
//
// One atomic counter hands out the keys first, first+1, ... to whichever worker inserts next,
// rather than per-thread disjoint streams (first + tid + k * threads): the inserted keys stay
// dense and ordered by insert time, so "the newest key" is well defined and a scan past the
// loaded range meets them in insert order, and the high-water mark does not wait for the
// slowest thread's stream (with disjoint streams it could only be first + threads x the
// fewest inserts any thread committed). The price is one shared cache line per insert.
//
// A worker calls committed(key) after the inserting transaction's commit returned (the row is
// installed and visible). high_water() is the end of the longest prefix of committed keys:
// every key below it is loaded or committed, so a reader never picks a key whose insert is
// still running (or was rolled back and is being retried). A key taken but never committed
// (a run stopped while its transaction was retrying) holds the mark back from then on.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace nvt {

class InsertKeys {
 public:
  // Keys first .. first + room - 1 may be inserted; keys below `first` are loaded.
  InsertKeys(uint64_t first, uint64_t room, std::string what)
      : first_(first), room_(room), what_(std::move(what)), next_(first), high_(first),
        done_(new std::atomic<uint64_t>[(room + 63) / 64]) {
    for (uint64_t i = 0; i < (room + 63) / 64; i++) done_[i].store(0, std::memory_order_relaxed);
  }

  // A fresh key for an insert. Throws, naming `what`, once the room is used up.
  uint64_t take() {
    uint64_t k = next_.fetch_add(1);
    if (k - first_ >= room_)
      throw std::runtime_error("inserts used all " + std::to_string(room_) + " rows of room (" + what_ + ")");
    return k;
  }

  // The insert of `key` committed: mark it, then move the mark over every committed key.
  // Sequentially consistent throughout: a committer that stops because the key at the mark
  // is not marked yet is certain that key's committer, marking it later, will move on.
  void committed(uint64_t key) {
    uint64_t i = key - first_;
    done_[i / 64].fetch_or(1ull << (i % 64));
    uint64_t h = high_.load();
    for (;;) {
      uint64_t j = h - first_;
      if (j >= room_ || !(done_[j / 64].load() >> (j % 64) & 1)) return;
      if (high_.compare_exchange_weak(h, h + 1)) h++;
    }
  }

  // Every key below it is loaded or committed.
  uint64_t high_water() const { return high_.load(); }
  // Keys handed out so far (committed or not).
  uint64_t taken() const { return std::min(next_.load(), first_ + room_) - first_; }
  uint64_t first() const { return first_; }
  uint64_t room() const { return room_; }

 private:
  const uint64_t first_, room_;
  const std::string what_;
  std::atomic<uint64_t> next_, high_;
  std::unique_ptr<std::atomic<uint64_t>[]> done_;  // a bit per key of room
};

}  // namespace nvt

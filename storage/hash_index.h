// A concurrent hash index in DRAM: uint64 key -> uint64 value (an engine's tagged pointer).
// Open addressing with linear probing; inserts claim a key slot by CAS and publish the value
// with a release store, so lookups take no lock. Capacity is fixed at creation (2x the rows
// the table may hold) and charged to the DRAM budget.
#pragma once
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <x86intrin.h>

#include "storage/device/dram_budget.h"

namespace nvt {

class HashIndex {
 public:
  static constexpr uint64_t kEmptyKey = ~0ull;
  static constexpr uint64_t kNoValue = 0;  // values are never 0 or ~0
  // A slot's value word: 0 while its key was claimed but the value not yet stored, kRemoved
  // after remove() (the slot may be reused by the same key), else the value.
  static constexpr uint64_t kRemoved = ~0ull;

  // Slots for `expected_rows`: at least twice as many, a power of two.
  static uint64_t capacity_for(uint64_t expected_rows) {
    uint64_t cap = 16;
    while (cap < expected_rows * 2) cap <<= 1;
    return cap;
  }
  static uint64_t bytes_for(uint64_t expected_rows) { return capacity_for(expected_rows) * 16; }

  HashIndex(uint64_t expected_rows, dev::DramBudget& budget, const std::string& what)
      : budget_(budget), what_(what) {
    cap_ = capacity_for(expected_rows);
    slots_ = static_cast<Slot*>(budget.alloc(cap_ * sizeof(Slot), what));
    for (uint64_t i = 0; i < cap_; i++) slots_[i].key.store(kEmptyKey, std::memory_order_relaxed);
  }
  static_assert(sizeof(std::atomic<uint64_t>) == 8);
  ~HashIndex() { budget_.free(slots_, cap_ * sizeof(Slot), what_); }
  HashIndex(const HashIndex&) = delete;
  HashIndex& operator=(const HashIndex&) = delete;

  uint64_t bytes() const { return cap_ * sizeof(Slot); }

  // Returns false if the key is already present (value unchanged).
  bool insert(uint64_t key, uint64_t value) {
    check(key);
    for (uint64_t i = hash(key) & (cap_ - 1), n = 0; n < cap_; i = (i + 1) & (cap_ - 1), n++) {
      uint64_t k = slots_[i].key.load(std::memory_order_acquire);
      if (k == kEmptyKey) {
        if (slots_[i].key.compare_exchange_strong(k, key, std::memory_order_acq_rel)) {
          slots_[i].value.store(value, std::memory_order_release);
          return true;
        }
      }
      if (k == key) {
        // Present, or claimed by a concurrent insert that is about to store its value (wait for
        // it: one store away), or removed, in which case the first reinsert wins.
        uint64_t cur;
        while ((cur = slots_[i].value.load(std::memory_order_acquire)) == kNoValue) _mm_pause();
        return cur == kRemoved &&
               slots_[i].value.compare_exchange_strong(cur, value, std::memory_order_acq_rel);
      }
    }
    throw std::runtime_error("hash index " + what_ + " is full");
  }

  uint64_t lookup(uint64_t key) const {
    for (uint64_t i = hash(key) & (cap_ - 1), n = 0; n < cap_; i = (i + 1) & (cap_ - 1), n++) {
      uint64_t k = slots_[i].key.load(std::memory_order_acquire);
      if (k == key) return value_at(i);
      if (k == kEmptyKey) return kNoValue;
    }
    return kNoValue;
  }

  // Bring the key's first probe slot into the cache (storage/prefetch.h).
  void prefetch(uint64_t key) const { __builtin_prefetch(&slots_[hash(key) & (cap_ - 1)]); }

  // Replace the value of a present key (e.g. Zen moving a tuple between cache and NVM).
  bool update(uint64_t key, uint64_t expected, uint64_t value) {
    std::atomic<uint64_t>* v = find(key);
    return v && v->compare_exchange_strong(expected, value, std::memory_order_acq_rel);
  }
  void set(uint64_t key, uint64_t value) {
    std::atomic<uint64_t>* v = find(key);
    if (!v) throw std::logic_error("index set on absent key");
    v->store(value, std::memory_order_release);
  }
  // Removal leaves the key slot (a tombstone with no value) for the probe chains.
  bool remove(uint64_t key) {
    std::atomic<uint64_t>* v = find(key);
    if (!v) return false;
    uint64_t old = v->exchange(kRemoved, std::memory_order_acq_rel);
    return old != kNoValue && old != kRemoved;
  }

  template <class F>
  void for_each(F&& f) const { for_each_in(0, cap_, f); }
  // The same over slots [lo, hi) of slot_count(): several threads may each take a part.
  uint64_t slot_count() const { return cap_; }
  template <class F>
  void for_each_in(uint64_t lo, uint64_t hi, F&& f) const {
    for (uint64_t i = lo; i < hi && i < cap_; i++) {
      uint64_t k = slots_[i].key.load(std::memory_order_acquire);
      uint64_t v = slots_[i].value.load(std::memory_order_acquire);
      if (k != kEmptyKey && v != kNoValue && v != kRemoved) f(k, v);
    }
  }

 private:
  struct Slot {
    std::atomic<uint64_t> key;
    std::atomic<uint64_t> value;
  };
  static uint64_t hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
  }
  void check(uint64_t key) const {
    if (key == kEmptyKey) throw std::invalid_argument("key ~0 is reserved by the hash index");
  }
  // A key claimed but not yet published reads as absent: the row is not visible until its
  // inserter stores the value.
  uint64_t value_at(uint64_t i) const {
    uint64_t v = slots_[i].value.load(std::memory_order_acquire);
    return v == kRemoved ? kNoValue : v;
  }
  std::atomic<uint64_t>* find(uint64_t key) {
    for (uint64_t i = hash(key) & (cap_ - 1), n = 0; n < cap_; i = (i + 1) & (cap_ - 1), n++) {
      uint64_t k = slots_[i].key.load(std::memory_order_acquire);
      if (k == key) return &slots_[i].value;
      if (k == kEmptyKey) return nullptr;
    }
    return nullptr;
  }

  dev::DramBudget& budget_;
  std::string what_;
  uint64_t cap_;
  Slot* slots_;
};

}  // namespace nvt

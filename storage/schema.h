// Catalog: fixed-size tuples with named columns, and the tables built from them.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvt {

struct Column {
  std::string name;
  uint32_t size;
  uint32_t offset;
};

class Schema {
 public:
  Schema& add(const std::string& name, uint32_t size) {
    if (size == 0) throw std::invalid_argument("column " + name + " has size 0");
    cols_.push_back({name, size, tuple_size_});
    tuple_size_ += size;
    return *this;
  }
  uint32_t tuple_size() const { return tuple_size_; }
  size_t columns() const { return cols_.size(); }
  const Column& column(size_t i) const { return cols_.at(i); }
  const Column& column(const std::string& name) const {
    for (auto& c : cols_)
      if (c.name == name) return c;
    throw std::invalid_argument("no column " + name);
  }
  // A one-line description stored in the NVM image header so a restart can check it.
  std::string describe() const {
    std::string s;
    for (auto& c : cols_) s += c.name + ":" + std::to_string(c.size) + ",";
    return s;
  }

 private:
  std::vector<Column> cols_;
  uint32_t tuple_size_ = 0;
};

struct TableInfo {
  uint32_t id;
  std::string name;
  Schema schema;
  uint64_t capacity;  // rows the table may hold (load plus inserts)
  bool ordered = false;  // keep an ordered index of the keys too (range scans)
  // Keys are exactly [0, capacity), all loaded, none inserted or deleted: an engine may lay the
  // table out as an array (FOEDUS's array storage; its ordered tree takes every other table).
  bool dense = false;
};

}  // namespace nvt

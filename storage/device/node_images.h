// One NVM image kept in one file per NUMA node (--nvm-path a list or a {node} pattern): on a
// host with persistent memory on each socket, each node's file lies on that node's DAX file
// system, so where a byte lives is where its file is, not a page policy. The files are mapped
// into one contiguous range in the placement's order (numa.h's nvm_node_at, in 2 MB extents),
// so engines and the device model see one image, and every byte is charged to the node whose
// file holds it.
//
// Each file starts with a 2 MB prefix (keeps its data 2 MB aligned for huge DAX mappings)
// holding its identity: the image id shared by the files of one image, its node, the node
// count and the placement. A restart refuses files of another image, in another order, or laid
// out under another placement, naming the file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "storage/device/numa.h"

namespace nvt::dev {

class NodeImages {
 public:
  static constexpr uint64_t kPrefixBytes = kNodeExtentBytes;

  // Creates `paths[n] + ".new"` for every node (publish() renames them), or reopens `paths`.
  // `size` is rounded up to whole 2 MB extents; ignored on reopen (the files say it).
  // Throws DeviceError naming the file and what is wrong.
  NodeImages(const std::vector<std::string>& paths, uint64_t size, bool reopen, Placement p);
  ~NodeImages();
  NodeImages(const NodeImages&) = delete;
  NodeImages& operator=(const NodeImages&) = delete;

  char* base() const { return base_; }
  uint64_t size() const { return size_; }
  uint64_t node_span() const { return node_span_; }
  static constexpr uint64_t interleave() { return kNodeExtentBytes; }
  bool is_pmem() const { return is_pmem_; }   // every file mapped with MAP_SYNC (DAX)
  uint64_t node_bytes(int n) const { return bytes_[size_t(n)]; }

  void publish();
  // Power-failure mode: the files become `shadow` (the image's persistent content, same
  // offsets as base()), each written beside its file and renamed over it.
  void write_persistent(const char* shadow) const;

  // Where byte `off` of the image lies: its node's file and the offset in that file.
  struct Segment {
    uint64_t off, len;
    int node;
    uint64_t file_off;
  };
  const std::vector<Segment>& segments() const { return segs_; }

 private:
  void lay_out(Placement p);
  void map();
  void release();  // unmaps, closes, removes unpublished files

  std::vector<std::string> paths_;
  std::vector<std::string> creating_;  // the .new files until publish()
  std::vector<int> fds_;
  std::vector<uint64_t> bytes_;        // data bytes per node's file
  std::vector<Segment> segs_;
  uint64_t image_id_ = 0;
  uint64_t size_ = 0, node_span_ = 0;
  char* base_ = nullptr;
  bool is_pmem_ = false;
};

}  // namespace nvt::dev

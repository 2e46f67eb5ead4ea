#include "storage/device/node_images.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <random>

#include "storage/device/nvm_image.h"

namespace nvt::dev {

namespace {

constexpr char kNodeMagic[8] = {'N', 'V', 'T', 'B', 'N', 'O', 'D', 'E'};

struct NodeFileHeader {
  char magic[8];
  uint64_t image_id;  // the same in every file of one image
  uint32_t node, nodes;
  uint32_t placement;
  uint32_t pad;
  uint64_t image_size;
  uint64_t data_bytes;  // this file's share of the image
};

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::string err(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + strerror(errno);
}

}  // namespace

NodeImages::NodeImages(const std::vector<std::string>& paths, uint64_t size, bool reopen, Placement p)
    : paths_(paths), fds_(paths.size(), -1) {
  const int k = int(paths.size());
  try {
    if (reopen) {
      std::vector<NodeFileHeader> h(static_cast<size_t>(k));
      for (int n = 0; n < k; n++) {
        const std::string& path = paths_[size_t(n)];
        fds_[size_t(n)] = open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fds_[size_t(n)] < 0) throw DeviceError(err("no NVM image file for NUMA node " + std::to_string(n) + " at", path));
        NodeFileHeader& x = h[size_t(n)];
        if (pread(fds_[size_t(n)], &x, sizeof x, 0) != ssize_t(sizeof x) || memcmp(x.magic, kNodeMagic, sizeof kNodeMagic) != 0)
          throw DeviceError("file " + path + " is not one node's file of an nvtestbed NVM image (bad magic)");
        if (x.node != uint32_t(n) || x.nodes != uint32_t(k))
          throw DeviceError("NVM image file " + path + " is node " + std::to_string(x.node) + " of " +
                            std::to_string(x.nodes) + ", but --nvm-path gives it as node " + std::to_string(n) +
                            " of " + std::to_string(k));
        if (x.image_id != h[0].image_id)
          throw DeviceError("NVM image files " + paths_[0] + " and " + path + " belong to different images");
        if (x.placement != uint32_t(p))
          throw DeviceError("NVM image files " + paths_[0] + ",... were laid out for --numa-policy " +
                            placement_name(Placement(x.placement)) + ", this run asks " + placement_name(p) +
                            ": their extents would not line up");
      }
      image_id_ = h[0].image_id;
      size_ = h[0].image_size;
      lay_out(p);
      for (int n = 0; n < k; n++) {
        struct stat st {};
        fstat(fds_[size_t(n)], &st);
        if (h[size_t(n)].data_bytes != bytes_[size_t(n)] || uint64_t(st.st_size) < kPrefixBytes + bytes_[size_t(n)])
          throw DeviceError("NVM image file " + paths_[size_t(n)] + " is truncated or corrupted (" +
                            std::to_string(st.st_size) + " bytes, its layout needs " +
                            std::to_string(kPrefixBytes + bytes_[size_t(n)]) + ")");
      }
    } else {
      size_ = align_up(size, kNodeExtentBytes);
      image_id_ = std::random_device{}() * 0x100000001ull ^ uint64_t(getpid());
      // The whole image must fit in its file systems' free space together, whatever the
      // placement: an absurd size is refused here, before lay_out walks its 2 MB extents.
      std::map<uint64_t, uint64_t> free_by_fs;
      for (const auto& path : paths_) {
        Room r = room_at(path);
        free_by_fs[r.fs_id] = r.free;
      }
      uint64_t free = 0;
      for (auto& [fs, b] : free_by_fs) free = b > UINT64_MAX - free ? UINT64_MAX : free + b;
      if (size_ > free)
        throw DeviceError("cannot create NVM image " + paths_[0] + " (and its other node files) of " + format_size(size_) +
                          ": their file systems have " + format_size(free) + " free");
      lay_out(p);
      for (int n = 0; n < k; n++) {
        creating_.push_back(paths_[size_t(n)] + ".new");
        const std::string& path = creating_.back();
        unlink(path.c_str());
        check_room(paths_[size_t(n)], kPrefixBytes + bytes_[size_t(n)]);
        int fd = fds_[size_t(n)] = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) throw DeviceError(err("cannot create NVM image file", path));
        if (int e = posix_fallocate(fd, 0, off_t(kPrefixBytes + bytes_[size_t(n)])); e != 0) {
          errno = e;
          throw DeviceError(err("cannot create NVM image file of " + format_size(kPrefixBytes + bytes_[size_t(n)]), path));
        }
        NodeFileHeader x{};
        memcpy(x.magic, kNodeMagic, sizeof kNodeMagic);
        x.image_id = image_id_;
        x.node = uint32_t(n);
        x.nodes = uint32_t(k);
        x.placement = uint32_t(p);
        x.image_size = size_;
        x.data_bytes = bytes_[size_t(n)];
        if (pwrite(fd, &x, sizeof x, 0) != ssize_t(sizeof x) || fdatasync(fd) != 0)
          throw DeviceError(err("cannot write the header of NVM image file", path));
      }
    }
    map();
  } catch (...) {
    release();  // a throwing constructor runs no destructor
    throw;
  }
}

void NodeImages::lay_out(Placement p) {
  const int k = int(paths_.size());
  node_span_ = align_up((size_ + uint64_t(k) - 1) / uint64_t(k), kNodeExtentBytes);
  bytes_.assign(size_t(k), 0);
  segs_.clear();
  for (uint64_t off = 0; off < size_; off += kNodeExtentBytes) {
    int n = nvm_node_at(off, p, k, node_span_, interleave());
    if (n < 0 || n >= k) throw DeviceError("--numa-policy " + std::string(placement_name(p)) + " needs more NVM image files");
    if (!segs_.empty() && segs_.back().node == n) segs_.back().len += kNodeExtentBytes;
    else segs_.push_back({off, kNodeExtentBytes, n, bytes_[size_t(n)]});
    bytes_[size_t(n)] += kNodeExtentBytes;
  }
}

void NodeImages::map() {
  // A contiguous range reserved first, 2 MB aligned, then each extent mapped over it from its
  // node's file.
  void* r = mmap(nullptr, size_ + kNodeExtentBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) throw DeviceError(err("cannot reserve " + format_size(size_) + " for NVM image", paths_[0]));
  auto lo = reinterpret_cast<uintptr_t>(r);
  uintptr_t b = align_up(lo, kNodeExtentBytes);
  if (b > lo) munmap(r, b - lo);
  if (uintptr_t tail = lo + size_ + kNodeExtentBytes - (b + size_)) munmap(reinterpret_cast<void*>(b + size_), tail);
  base_ = reinterpret_cast<char*>(b);
  std::vector<int> pmem(paths_.size(), -1);  // per file: MAP_SYNC taken (1), refused (0)
  for (const Segment& s : segs_) {
    int fd = fds_[size_t(s.node)];
    void* want = base_ + s.off;
    auto off = off_t(kPrefixBytes + s.file_off);
    void* m = MAP_FAILED;
    if (pmem[size_t(s.node)] != 0) {  // MAP_SYNC succeeds only on DAX: the file is persistent memory
      m = mmap(want, s.len, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC | MAP_FIXED, fd, off);
      pmem[size_t(s.node)] = m != MAP_FAILED;
    }
    if (m == MAP_FAILED) m = mmap(want, s.len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, off);
    if (m == MAP_FAILED) throw DeviceError(err("cannot map NVM image file", paths_[size_t(s.node)]));
  }
  is_pmem_ = true;
  for (int x : pmem) is_pmem_ = is_pmem_ && x == 1;
}

void NodeImages::publish() {
  for (size_t n = 0; n < creating_.size(); n++)
    if (rename(creating_[n].c_str(), paths_[n].c_str()) != 0)
      throw DeviceError(err("cannot move the new NVM image file to", paths_[n]));
  creating_.clear();
}

void NodeImages::write_persistent(const char* shadow) const {
  for (size_t n = 0; n < paths_.size(); n++) {
    std::string tmp = paths_[n] + ".crash";
    int out = open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    char prefix[sizeof(NodeFileHeader)];
    bool ok = out >= 0 && pread(fds_[n], prefix, sizeof prefix, 0) == ssize_t(sizeof prefix) &&
              pwrite(out, prefix, sizeof prefix, 0) == ssize_t(sizeof prefix) &&
              ftruncate(out, off_t(kPrefixBytes + bytes_[n])) == 0;
    for (const Segment& s : segs_)
      if (ok && s.node == int(n))
        ok = pwrite(out, shadow + s.off, s.len, off_t(kPrefixBytes + s.file_off)) == ssize_t(s.len);
    if (!ok || fsync(out) != 0) {
      perror(("power-failure mode: cannot write " + tmp).c_str());
      _exit(1);
    }
    close(out);
  }
  for (const std::string& p : paths_)
    if (rename((p + ".crash").c_str(), p.c_str()) != 0) {
      perror("power-failure mode: rename");
      _exit(1);
    }
}

NodeImages::~NodeImages() { release(); }

void NodeImages::release() {
  if (base_) munmap(base_, size_);
  base_ = nullptr;
  for (int& fd : fds_)
    if (fd >= 0) close(fd), fd = -1;
  for (const std::string& c : creating_) unlink(c.c_str());
  creating_.clear();
}

}  // namespace nvt::dev

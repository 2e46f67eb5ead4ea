// One NVM image in one file per NUMA node (storage/device/node_images.h, --nvm-path a list or a
// {node} pattern): every byte lies in the file of the node the device model charges it to, a
// restart finds the data, and files of another image, order or placement are refused by name.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/device/device.h"
#include "storage/device/node_images.h"
#include "storage/device/nvm_image.h"
#include "system/numa_host.h"
#include "tests/unit/test_util.h"

using namespace nvt;
using nvt::test::TempPath;

namespace {

constexpr uint64_t kExtent = dev::kNodeExtentBytes;
constexpr uint64_t kImage = 16 * kExtent;

struct Files {
  TempPath a{"node0"}, b{"node1"};
  std::vector<std::string> paths() const { return {a.str(), b.str()}; }
  ~Files() {
    for (const auto& p : paths()) unlink((p + ".lock").c_str());
  }
};

dev::DeviceOptions two_nodes(const std::vector<std::string>& paths, dev::Placement p, bool reopen = false) {
  dev::DeviceOptions d = test::device_options(paths[0], kImage);
  d.node_paths = paths;
  d.numa_nodes = 2;
  d.placement = p;
  d.reopen = reopen;
  return d;
}

char byte_in_file(const std::string& path, uint64_t off) {
  int fd = open(path.c_str(), O_RDONLY);
  char c = 0;
  EXPECT_EQ(pread(fd, &c, 1, off_t(off)), 1) << path;
  close(fd);
  return c;
}

std::string open_error(const dev::DeviceOptions& d) {
  try {
    dev::NvmImage img(d);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// For every placement, the byte at each extent is found in the file of the node that
// nvm_node() charges, at that node's next extent of data.
TEST(NodeImages, EachExtentLiesInTheFileOfTheNodeThatOwnsIt) {
  for (dev::Placement pl : {dev::Placement::Stripe, dev::Placement::Local, dev::Placement::Remote,
                            dev::Placement::Naive, dev::Placement::LocalWrite}) {
    Files f;
    std::vector<uint64_t> file_off(2, 0);
    std::vector<std::pair<int, uint64_t>> where;  // per extent: node, offset in its file
    {
      dev::NvmImage img(two_nodes(f.paths(), pl));
      ASSERT_EQ(img.size(), kImage);
      img.publish();
      for (uint64_t e = 0; e < kImage / kExtent; e++) {
        char* p = dev::g_model.base + e * kExtent + 4096;  // past the image header in extent 0
        int n = dev::nvm_node(p);
        ASSERT_TRUE(n == 0 || n == 1);
        int want = pl == dev::Placement::Local    ? 0
                   : pl == dev::Placement::Remote ? 1
                   : pl == dev::Placement::Stripe ? int(e >= 8)
                                                  : int(e % 2);  // naive and local-write: 2 MB extents
        EXPECT_EQ(n, want) << dev::placement_name(pl) << " extent " << e;
        *p = char('a' + e);
        where.push_back({n, file_off[size_t(n)]});
        file_off[size_t(n)] += kExtent;
      }
    }
    for (uint64_t e = 0; e < where.size(); e++)
      EXPECT_EQ(byte_in_file(f.paths()[size_t(where[e].first)], dev::NodeImages::kPrefixBytes + where[e].second + 4096),
                char('a' + e))
          << dev::placement_name(pl) << " extent " << e;
  }
}

TEST(NodeImages, ARestartFindsTheDataAndRefusesFilesThatDoNotBelong) {
  Files f, other;
  {
    dev::NvmImage img(two_nodes(f.paths(), dev::Placement::LocalWrite));
    dev::Region r = img.region("data", 8 * kExtent, dev::RegionKind::Persistent);
    for (uint64_t i = 0; i < r.size; i += kExtent) r.base[i + 7] = char(i / kExtent + 1);
    img.publish();
  }
  {
    dev::NvmImage img(two_nodes(f.paths(), dev::Placement::LocalWrite, true));
    dev::Region r = img.region("data", 8 * kExtent, dev::RegionKind::Persistent);
    ASSERT_TRUE(r.existed);
    for (uint64_t i = 0; i < r.size; i += kExtent) EXPECT_EQ(r.base[i + 7], char(i / kExtent + 1));
  }
  EXPECT_NE(open_error(two_nodes({f.b.str(), f.a.str()}, dev::Placement::LocalWrite, true)).find("is node 1 of 2"),
            std::string::npos);
  EXPECT_NE(open_error(two_nodes(f.paths(), dev::Placement::Naive, true)).find("laid out for --numa-policy local-write"),
            std::string::npos);
  { dev::NvmImage img(two_nodes(other.paths(), dev::Placement::LocalWrite)); img.publish(); }
  EXPECT_NE(open_error(two_nodes({f.a.str(), other.b.str()}, dev::Placement::LocalWrite, true)).find("different images"),
            std::string::npos);
  dev::DeviceOptions single = test::device_options(f.a.str(), kImage);
  single.reopen = true;
  EXPECT_NE(open_error(single).find("one NUMA node's file"), std::string::npos);
}

// A setup that fails leaves the published files as they were. Two ways a new image fails: larger than its file system's free space (refused before any
// file is made, naming both sizes), and a node file the file system will not allocate (here a
// file-size limit, so the test needs no full disk). Either way the published image stays.
TEST(NodeImages, AFailedCreateKeepsThePublishedImage) {
  Files f;
  { dev::NvmImage img(two_nodes(f.paths(), dev::Placement::Stripe)); img.publish(); }
  dev::DeviceOptions huge = two_nodes(f.paths(), dev::Placement::Stripe);
  huge.size = 1ull << 50;
  std::string e = open_error(huge);
  EXPECT_NE(e.find("cannot create NVM image"), std::string::npos) << e;
  EXPECT_NE(e.find("free"), std::string::npos) << e;
  EXPECT_EQ(access((f.a.str() + ".new").c_str(), F_OK), -1);

  rlimit was{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &was), 0);
  rlimit small = was;
  small.rlim_cur = kExtent;  // smaller than one node's file
  auto old_handler = signal(SIGXFSZ, SIG_IGN);  // the limit's signal: fallocate fails instead
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  e = open_error(two_nodes(f.paths(), dev::Placement::Stripe));
  setrlimit(RLIMIT_FSIZE, &was);
  signal(SIGXFSZ, old_handler);
  EXPECT_NE(e.find("cannot create NVM image file of"), std::string::npos) << e;
  EXPECT_EQ(access((f.a.str() + ".new").c_str(), F_OK), -1);
  EXPECT_EQ(access((f.b.str() + ".new").c_str(), F_OK), -1);

  dev::NvmImage img(two_nodes(f.paths(), dev::Placement::Stripe, true));
  EXPECT_TRUE(img.reopened());
}

// A single-file image larger than its file system's free space is refused before it is made.
TEST(NvmImageRoom, AnImageLargerThanTheFreeSpaceIsRefusedNamingBoth) {
  TempPath p("room");
  dev::DeviceOptions d = test::device_options(p.str(), 1ull << 50);
  std::string e = open_error(d);
  EXPECT_NE(e.find("cannot create NVM image " + p.str() + " of 1024.0 TiB"), std::string::npos) << e;
  EXPECT_NE(e.find("free"), std::string::npos) << e;
  EXPECT_EQ(access((p.str() + ".new").c_str(), F_OK), -1);
  EXPECT_EQ(access(p.str().c_str(), F_OK), -1);
}

TEST(NumaPlan, NvmPathIsOneFileAListOrAPattern) {
  NumaPlan p;
  p.nodes = 2;
  p.real = {-1, -1};
  EXPECT_EQ(node_image_paths("/dev/shm/x.img", p), (std::vector<std::string>{"/dev/shm/x.img"}));
  EXPECT_EQ(node_image_paths("/m/pmem{node}/db{node}", p), (std::vector<std::string>{"/m/pmem0/db0", "/m/pmem1/db1"}));
  EXPECT_EQ(node_image_paths("/a,/b", p), (std::vector<std::string>{"/a", "/b"}));
  EXPECT_THROW(node_image_paths("/a,/b,/c", p), std::invalid_argument);
  EXPECT_THROW(node_image_paths("/a,", p), std::invalid_argument);
  EXPECT_THROW(node_image_paths("/a,/a", p), std::invalid_argument);
  p.real = {2, 3};  // real nodes: the host's ids
  EXPECT_EQ(node_image_paths("/mnt/pmem{node}/db", p), (std::vector<std::string>{"/mnt/pmem2/db", "/mnt/pmem3/db"}));
}

// The NVM device model: exact counters for known access patterns, costs charged (or not) by
// profile, the image header and its region directory, size parsing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "storage/device/device.h"
#include "storage/device/nvm_image.h"
#include "tests/unit/test_util.h"

using namespace nvt;
using nvt::test::TempPath;
using nvt::test::device_options;

namespace {

constexpr uint64_t kImage = 8ull << 20;

dev::Counters snap() { return dev::my_counters(); }

// Message of the DeviceError thrown by opening `d` (fails the test when nothing is thrown).
std::string open_error(const dev::DeviceOptions& d) {
  try {
    dev::NvmImage img(d);
  } catch (const dev::DeviceError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected dev::DeviceError, got another exception: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "opening " << d.path << " did not throw";
  return "";
}

void create_image(const std::string& path, const std::string& layout = "unit-test") {
  dev::NvmImage img(device_options(path, kImage, "dram", layout));
  img.region("first", 1 << 20, dev::RegionKind::Persistent);
  img.publish();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Counters

TEST(DeviceCounters, FlushCountsOneClwbPerLine) {
  TempPath p("flush");
  dev::NvmImage img(device_options(p.str(), kImage));
  char* b = img.region("r", 1 << 20, dev::RegionKind::Persistent).base;
  ASSERT_EQ(reinterpret_cast<uintptr_t>(b) % 4096, 0u);

  auto c0 = snap();
  dev::flush(b, 64);
  EXPECT_EQ((snap() - c0).clwb, 1u) << "64 B aligned = one line";

  c0 = snap();
  dev::flush(b, 65);
  EXPECT_EQ((snap() - c0).clwb, 2u) << "65 B from a line start spans two lines";

  c0 = snap();
  dev::flush(b + 60, 8);
  EXPECT_EQ((snap() - c0).clwb, 2u) << "8 B straddling a line boundary touches two lines";

  c0 = snap();
  dev::flush(b, 4096);
  auto d = snap() - c0;
  EXPECT_EQ(d.clwb, 64u);
  EXPECT_EQ(d.nvm_write_bytes, 4096u);
  EXPECT_EQ(d.sfence, 0u) << "flush alone does not fence";

  c0 = snap();
  dev::flush(b, 0);
  EXPECT_EQ((snap() - c0).clwb, 0u) << "empty flush";
}

TEST(DeviceCounters, FenceCountsOneSfence) {
  TempPath p("fence");
  dev::NvmImage img(device_options(p.str(), kImage));
  char* b = img.region("r", 1 << 20, dev::RegionKind::Persistent).base;
  auto c0 = snap();
  dev::fence();
  auto d = snap() - c0;
  EXPECT_EQ(d.sfence, 1u);
  EXPECT_EQ(d.clwb, 0u);

  c0 = snap();
  dev::persist(b, 64);
  d = snap() - c0;
  EXPECT_EQ(d.sfence, 1u);
  EXPECT_EQ(d.clwb, 1u);
}

TEST(DeviceCounters, NvmReadsCountIn256ByteUnits) {
  TempPath p("read");
  dev::NvmImage img(device_options(p.str(), kImage));
  char* b = img.region("r", 1 << 20, dev::RegionKind::Persistent).base;
  ASSERT_TRUE(dev::is_nvm(b));

  auto c0 = snap();
  dev::read(b, 64);
  auto d = snap() - c0;
  EXPECT_EQ(d.nvm_read_bytes, 256u);
  EXPECT_EQ(d.dram_bytes, 0u);

  c0 = snap();
  dev::read(b + 256, 300);  // 256-aligned, 300 B: two units
  EXPECT_EQ((snap() - c0).nvm_read_bytes, 512u);

  c0 = snap();
  dev::read(b + 250, 12);  // crosses a unit boundary
  EXPECT_EQ((snap() - c0).nvm_read_bytes, 512u);

  c0 = snap();
  dev::read(b, 256);
  EXPECT_EQ((snap() - c0).nvm_read_bytes, 256u);
}

TEST(DeviceCounters, DramAccessesCountDramBytesOnly) {
  TempPath p("dramacc");
  dev::NvmImage img(device_options(p.str(), kImage));
  std::vector<char> local(1000);
  ASSERT_FALSE(dev::is_nvm(local.data()));
  auto c0 = snap();
  dev::read(local.data(), 1000);
  dev::write(local.data(), 24);
  auto d = snap() - c0;
  EXPECT_EQ(d.dram_bytes, 1024u);
  EXPECT_EQ(d.nvm_read_bytes, 0u);
  EXPECT_EQ(d.nvm_write_bytes, 0u);
  EXPECT_EQ(d.clwb, 0u);
}

TEST(DeviceCounters, WritesAndNtCopyCountNvmWriteBytes) {
  TempPath p("write");
  dev::NvmImage img(device_options(p.str(), kImage));
  char* b = img.region("r", 1 << 20, dev::RegionKind::Volatile).base;
  auto c0 = snap();
  dev::write(b, 8);
  EXPECT_EQ((snap() - c0).nvm_write_bytes, 256u);

  std::vector<char> src(1024, 'z');
  c0 = snap();
  dev::nt_copy(b + 4096, src.data(), 1024);
  auto d = snap() - c0;
  EXPECT_EQ(d.nvm_write_bytes, 1024u);
  EXPECT_EQ(d.clwb, 0u);
  EXPECT_EQ(memcmp(b + 4096, src.data(), 1024), 0);
}

TEST(DeviceCounters, EadrFlushNeedsNoClwbButStillWrites) {
  TempPath p("eadr");
  auto opt = device_options(p.str(), kImage);
  opt.profile.domain = dev::PersistDomain::EADR;
  dev::NvmImage img(opt);
  char* b = img.region("r", 1 << 20, dev::RegionKind::Persistent).base;
  auto c0 = snap();
  dev::flush(b, 128);
  dev::fence();
  auto d = snap() - c0;
  EXPECT_EQ(d.clwb, 0u);
  EXPECT_EQ(d.nvm_write_bytes, 256u);
  EXPECT_EQ(d.sfence, 1u);
}

// ---------------------------------------------------------------------------------------------
// Costs

TEST(DeviceCosts, DramProfileChargesNothing) {
  TempPath p("dramcost");
  dev::NvmImage img(device_options(p.str(), kImage, "dram"));
  char* b = img.region("r", 1 << 20, dev::RegionKind::Persistent).base;
  EXPECT_FALSE(dev::g_model.charges);
  auto c0 = snap();
  dev::read(b, 4096);
  dev::write(b, 4096);
  dev::update(b, 8);
  dev::flush(b, 1 << 20);
  dev::fence();
  auto d = snap() - c0;
  EXPECT_EQ(d.charged_cycles, 0u);
  EXPECT_GT(d.nvm_read_bytes, 0u) << "still counted";
  EXPECT_GT(d.clwb, 0u) << "still counted";
}

TEST(DeviceCosts, OptaneChargesNvmAccessesNotDram) {
  TempPath p("optcost");
  dev::NvmImage img(device_options(p.str(), kImage, "optane-100"));
  char* b = img.region("r", 1 << 20, dev::RegionKind::Persistent).base;
  EXPECT_TRUE(dev::g_model.charges);

  auto& slow = img.host().slower_than_target;
  bool host_reads_slower =
      std::find(slow.begin(), slow.end(), "read latency") != slow.end();
  auto c0 = snap();
  dev::read(b, 64);
  if (!host_reads_slower) {
    EXPECT_GT((snap() - c0).charged_cycles, 0u) << "a random NVM read costs more than DRAM";
  }

  c0 = snap();
  dev::read(b, 4096);  // further units are charged at the sequential bandwidth regardless
  EXPECT_GT((snap() - c0).charged_cycles, 0u);

  c0 = snap();
  dev::write(b, 256);
  EXPECT_GT((snap() - c0).charged_cycles, 0u);

  std::vector<char> local(4096);
  c0 = snap();
  dev::read(local.data(), local.size());
  dev::write(local.data(), local.size());
  EXPECT_EQ((snap() - c0).charged_cycles, 0u) << "DRAM is never charged";
  dev::pay_debt();
}

namespace {

// Best wall time (ns) of flushing and fencing 1 MB of freshly written NVM.
double best_flush_ns(const std::string& profile, double* expected_extra_ns) {
  TempPath p("flushtime-" + profile);
  dev::NvmImage img(device_options(p.str(), kImage, profile));
  const size_t mb = 1 << 20;
  char* b = img.region("r", mb, dev::RegionKind::Persistent).base;
  double best = 1e18;
  uint64_t charged = 0;
  const int reps = 7;
  for (int i = 0; i < reps; i++) {
    memset(b, i, mb);
    dev::pay_debt();
    auto c0 = snap();
    auto t0 = std::chrono::steady_clock::now();
    dev::flush(b, mb);
    dev::fence();
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    charged = (snap() - c0).charged_cycles;
    best = std::min(best, ns);
  }
  *expected_extra_ns = double(charged) / img.host().tsc_ghz;
  return best;
}

}  // namespace

TEST(DeviceCosts, OptaneFlushTakesLongerThanDram) {
  double extra_dram = 0, extra_optane = 0;
  double t_dram = best_flush_ns("dram", &extra_dram);
  double t_optane = best_flush_ns("optane-100", &extra_optane);
  EXPECT_EQ(extra_dram, 0.0);
  // 4096 units at 2.2 GB/s for one writer: ~475 us per MB.
  EXPECT_GT(extra_optane, 200e3) << "charged ns for 1 MB written back";
  EXPECT_GT(t_optane - t_dram, 0.5 * extra_optane)
      << "dram " << t_dram << " ns, optane " << t_optane << " ns, charged " << extra_optane;
}

// Calibration measures what the host already pays, to subtract it from the target's costs: a
// dependent random read over 64 MB of DRAM takes tens of nanoseconds on any machine, and
// store+clwb+sfence is never free.
TEST(DeviceCosts, HostCalibrationIsPlausible) {
  TempPath p("calib");
  dev::NvmImage img(device_options(p.str(), kImage, "optane-100"));
  const dev::HostCosts& h = img.host();
  EXPECT_GT(h.tsc_ghz, 0.3);
  EXPECT_LT(h.tsc_ghz, 10.0);
  EXPECT_GT(h.dram_read_ns, 5.0) << "the pointer chase did not run (optimized away?)";
  EXPECT_LT(h.dram_read_ns, 2000.0);
  EXPECT_GT(h.persist_ns, 1.0);
  // The read charge is the target's latency minus the host's.
  double charged_ns = double(dev::g_model.read_unit_cycles) / h.tsc_ghz;
  EXPECT_LT(charged_ns, img.profile().read_ns - 5.0 + 1.0)
      << "the host's own DRAM latency is not subtracted";
}

// ---------------------------------------------------------------------------------------------
// Image header and regions

TEST(NvmImage, ReopenWithAnotherLayoutNamesBoth) {
  TempPath p("layout");
  create_image(p.str(), "engine=mmdb ycsb rows=20000");
  auto d = device_options(p.str(), 0, "dram", "engine=mmdb ycsb rows=30000");
  d.reopen = true;
  std::string msg = open_error(d);
  EXPECT_NE(msg.find("another layout"), std::string::npos) << msg;
  EXPECT_NE(msg.find("engine=mmdb ycsb rows=20000"), std::string::npos) << msg;
  EXPECT_NE(msg.find("engine=mmdb ycsb rows=30000"), std::string::npos) << msg;
}

// The flags that shape an image are in its header, for --recover to read (options.cpp); an
// image of the previous layout version (no settings) gives none, and its reopen names the version.
TEST(NvmImage, HeaderKeepsTheRunsSettings) {
  TempPath p("settings");
  {
    auto d = device_options(p.str(), kImage);
    d.settings = R"({"rows":20000,"workload":"ycsb"})";
    dev::NvmImage img(d);
    img.publish();
  }
  EXPECT_EQ(dev::read_image_settings(p.str()), R"({"rows":20000,"workload":"ycsb"})");
  TempPath missing("settings-missing");
  EXPECT_EQ(dev::read_image_settings(missing.str()), "");
  {  // an older image: layout version 1 (right after the 8-byte magic)
    int fd = open(p.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    uint32_t v1 = 1;
    ASSERT_EQ(pwrite(fd, &v1, sizeof v1, 8), ssize_t(sizeof v1));
    close(fd);
  }
  EXPECT_EQ(dev::read_image_settings(p.str()), "");
  auto d = device_options(p.str(), 0);
  d.reopen = true;
  std::string msg = open_error(d);
  EXPECT_NE(msg.find("has layout version 1, this build reads version 2"), std::string::npos) << msg;
}

TEST(NvmImage, TruncatedImageIsRejected) {
  TempPath p("trunc");
  create_image(p.str());
  ASSERT_EQ(truncate(p.c_str(), kImage / 2), 0);
  auto d = device_options(p.str(), 0);
  d.reopen = true;
  std::string msg = open_error(d);
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  EXPECT_NE(msg.find(p.str()), std::string::npos) << msg;

  ASSERT_EQ(truncate(p.c_str(), 1000), 0);  // not even a header
  msg = open_error(d);
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST(NvmImage, MissingPathIsNamed) {
  TempPath p("missing");
  auto d = device_options(p.str(), 0);
  d.reopen = true;
  std::string msg = open_error(d);
  EXPECT_NE(msg.find(p.str()), std::string::npos) << msg;
}

TEST(NvmImage, NonImageFileIsRejected) {
  TempPath p("notimage");
  {
    std::ofstream f(p.str(), std::ios::binary);
    std::string junk(256 * 1024, 'x');
    f << junk;
  }
  auto d = device_options(p.str(), 0);
  d.reopen = true;
  std::string msg = open_error(d);
  EXPECT_NE(msg.find("not an nvtestbed NVM image"), std::string::npos) << msg;
}

TEST(NvmImage, RegionsPersistAcrossReopen) {
  TempPath p("regions");
  uint64_t off_a, off_b, used;
  {
    dev::NvmImage img(device_options(p.str(), kImage));
    EXPECT_FALSE(img.reopened());
    dev::Region a = img.region("alpha", 1 << 20, dev::RegionKind::Persistent);
    dev::Region b = img.region("beta", 3 << 20, dev::RegionKind::Volatile);
    EXPECT_FALSE(a.existed);
    EXPECT_FALSE(b.existed);
    EXPECT_NE(a.base, b.base);
    EXPECT_TRUE(a.base + a.size <= b.base || b.base + b.size <= a.base) << "regions overlap";
    off_a = uint64_t(a.base - dev::g_model.base);
    off_b = uint64_t(b.base - dev::g_model.base);
    strcpy(a.base, "persistent hello");
    dev::persist(a.base, 32);
    // Asking again in the same run returns the same region.
    dev::Region a2 = img.region("alpha", 1 << 20, dev::RegionKind::Persistent);
    EXPECT_EQ(a2.base, a.base);
    EXPECT_TRUE(a2.existed);
    used = img.used();
    EXPECT_EQ(img.used(dev::RegionKind::Volatile), 3u << 20);
    img.publish();
  }
  auto d = device_options(p.str(), 0);
  d.reopen = true;
  dev::NvmImage img(d);
  EXPECT_TRUE(img.reopened());
  EXPECT_EQ(img.size(), kImage);
  EXPECT_TRUE(img.has_region("alpha"));
  EXPECT_TRUE(img.has_region("beta"));
  EXPECT_FALSE(img.has_region("gamma"));
  EXPECT_EQ(img.used(), used);
  dev::Region a = img.region("alpha", 1 << 20, dev::RegionKind::Persistent);
  dev::Region b = img.region("beta", 3 << 20, dev::RegionKind::Volatile);
  EXPECT_TRUE(a.existed);
  EXPECT_TRUE(b.existed);
  EXPECT_EQ(uint64_t(a.base - dev::g_model.base), off_a);
  EXPECT_EQ(uint64_t(b.base - dev::g_model.base), off_b);
  EXPECT_STREQ(a.base, "persistent hello");
  // A region asked for with another kind or a larger size than recorded does not match.
  EXPECT_THROW(img.region("alpha", 1 << 20, dev::RegionKind::Volatile), dev::DeviceError);
  EXPECT_THROW(img.region("alpha", 2 << 20, dev::RegionKind::Persistent), dev::DeviceError);
}

// A new image replaces the file at its path only when published (after the engine set it up):
// a run that fails before that leaves the old image intact.
TEST(NvmImage, NewImageReplacesOldOnlyOncePublished) {
  TempPath p("publish");
  {
    dev::NvmImage img(device_options(p.str(), kImage));
    strcpy(img.region("data", 1 << 20, dev::RegionKind::Persistent).base, "old image");
    img.publish();
  }
  auto reopen = device_options(p.str(), 0);
  reopen.reopen = true;
  {
    dev::NvmImage img(device_options(p.str(), kImage));  // set up, then abandoned
    strcpy(img.region("data", 1 << 20, dev::RegionKind::Persistent).base, "new image");
  }
  struct stat st {};
  EXPECT_NE(stat((p.str() + ".new").c_str(), &st), 0) << "the abandoned image is removed";
  {
    dev::NvmImage img(reopen);
    EXPECT_STREQ(img.region("data", 1 << 20, dev::RegionKind::Persistent).base, "old image");
  }
  {
    dev::NvmImage img(device_options(p.str(), kImage));
    strcpy(img.region("data", 1 << 20, dev::RegionKind::Persistent).base, "new image");
    img.publish();
  }
  dev::NvmImage img(reopen);
  EXPECT_STREQ(img.region("data", 1 << 20, dev::RegionKind::Persistent).base, "new image");
}

TEST(NvmImage, FullImageNamesTheRegion) {
  TempPath p("full");
  dev::NvmImage img(device_options(p.str(), kImage));
  img.region("small", 2 << 20, dev::RegionKind::Persistent);
  try {
    img.region("too-big-for-it", 6 << 20, dev::RegionKind::Persistent);
    FAIL() << "a region larger than what is left must throw";
  } catch (const dev::DeviceError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("too-big-for-it"), std::string::npos) << msg;
    EXPECT_NE(msg.find("full"), std::string::npos) << msg;
  }
  // What still fits is still handed out.
  dev::Region r = img.region("fits", 1 << 20, dev::RegionKind::Persistent);
  EXPECT_LE(r.base + r.size, dev::g_model.end);
}

TEST(NvmImage, TooSmallImageIsRejected) {
  TempPath p("tiny");
  auto d = device_options(p.str(), 4096);
  EXPECT_THROW(dev::NvmImage img(d), dev::DeviceError);
}

TEST(NvmImage, ProfilesByName) {
  EXPECT_FALSE(dev::profile_by_name("dram").charges);
  EXPECT_TRUE(dev::profile_by_name("optane-100").charges);
  EXPECT_GT(dev::profile_by_name("optane-200").write_gbps_total,
            dev::profile_by_name("optane-100").write_gbps_total);
  EXPECT_THROW(dev::profile_by_name("optane-900"), std::invalid_argument);
  // Bandwidth per writer is shared beyond the peak and falls towards the floor.
  auto o = dev::profile_by_name("optane-100");
  EXPECT_DOUBLE_EQ(o.write_gbps_per_thread(1), o.write_gbps_thread);
  EXPECT_LT(o.write_gbps_per_thread(24) * 24, o.write_gbps_total);
  EXPECT_NEAR(o.write_gbps_per_thread(24) * 24, o.write_gbps_floor, 1e-9);
}

// ---------------------------------------------------------------------------------------------
// Sizes

TEST(ParseSize, AcceptsSuffixes) {
  EXPECT_EQ(dev::parse_size("512M"), 512ull << 20);
  EXPECT_EQ(dev::parse_size("2G"), 2ull << 30);
  EXPECT_EQ(dev::parse_size("4096"), 4096u);
  EXPECT_EQ(dev::parse_size("64K"), 64ull << 10);
  EXPECT_EQ(dev::parse_size("1T"), 1ull << 40);
}

TEST(ParseSize, RejectsBadText) {
  EXPECT_THROW(dev::parse_size("12X"), std::invalid_argument);
  EXPECT_THROW(dev::parse_size("-1"), std::invalid_argument);
  EXPECT_THROW(dev::parse_size(""), std::invalid_argument);
  EXPECT_THROW(dev::parse_size("0"), std::invalid_argument);
  EXPECT_THROW(dev::parse_size("M"), std::invalid_argument);
  try {
    dev::parse_size("12X");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("12X"), std::string::npos) << e.what();
  }
}

// A thread outside the workers publishes its counters; published() shows its traffic.
TEST(CountersPublished, BackgroundThreadTrafficIsVisible) {
  alignas(256) static char buf[1024];
  dev::Counters p0 = dev::published();
  std::thread t([] {
    dev::flush(buf, 256);
    dev::fence();
    dev::publish();
  });
  t.join();
  dev::Counters d = dev::published() - p0;
  EXPECT_EQ(d.clwb, 4u);
  EXPECT_EQ(d.sfence, 1u);
  EXPECT_EQ(d.nvm_write_bytes, dev::kUnit);
}

// The NVM image lock (issue 18 item 2): an image open in one NvmImage cannot be opened,
// replaced or reopened by another until the first is closed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "tests/unit/test_util.h"

using namespace nvt;
using nvt::test::device_options;
using nvt::test::TempPath;

namespace {

constexpr uint64_t kImage = 8ull << 20;

std::string second_open_error(const dev::DeviceOptions& d) {
  try {
    dev::NvmImage img(d);
  } catch (const dev::DeviceError& e) {
    return e.what();
  }
  ADD_FAILURE() << "a second open of " << d.path << " was not refused";
  return "";
}

}  // namespace

TEST(ImageLock, SecondOpenIsRefusedNamingPathAndHolderAndLeavesImageIntact) {
  TempPath p("lock");
  auto reopen = device_options(p.str(), 0);
  reopen.reopen = true;
  {
    dev::NvmImage img(device_options(p.str(), kImage));
    strcpy(img.region("data", 1 << 20, dev::RegionKind::Persistent).base, "first");
    img.publish();
    struct stat before {}, after {};
    ASSERT_EQ(stat(p.c_str(), &before), 0);
    // A new image (what a second rundb without --recover builds) and a --recover alike.
    for (const auto& d : {device_options(p.str(), kImage), reopen}) {
      std::string msg = second_open_error(d);
      EXPECT_NE(msg.find(p.str()), std::string::npos) << msg;
      EXPECT_NE(msg.find("in use"), std::string::npos) << msg;
      EXPECT_NE(msg.find("pid " + std::to_string(getpid())), std::string::npos) << msg;
    }
    ASSERT_EQ(stat(p.c_str(), &after), 0);
    EXPECT_EQ(before.st_ino, after.st_ino) << "the image under the holder was replaced";
    struct stat st {};
    EXPECT_NE(stat((p.str() + ".new").c_str(), &st), 0) << "the refused open built an image";
    EXPECT_STREQ(img.region("data", 1 << 20, dev::RegionKind::Persistent).base, "first");
  }
  // Closed: the lock is gone (and its file with it), so the image reopens.
  struct stat st {};
  EXPECT_NE(stat((p.str() + ".lock").c_str(), &st), 0) << "lock file left behind";
  dev::NvmImage img(reopen);
  EXPECT_STREQ(img.region("data", 1 << 20, dev::RegionKind::Persistent).base, "first");
}

TEST(ImageLock, StaleLockFileDoesNotBlock) {
  TempPath p("stale");
  {  // what a killed holder leaves: the file with its pid, but no kernel lock
    FILE* f = fopen((p.str() + ".lock").c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs("999999\n", f);
    fclose(f);
  }
  dev::NvmImage img(device_options(p.str(), kImage));
  img.publish();
}

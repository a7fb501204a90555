//===- FilesTest.cpp - readFile, writeFile, isExecutable, TempDir ---------===//

#include "tessera/Support/Files.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace tessera;

namespace {

TEST(Files, TempDirHoldsFilesAndIsRemovedWithThem) {
  std::string path;
  {
    StatusOr<TempDir> dir = TempDir::create("tessera-files-test");
    ASSERT_TRUE(dir.ok()) << dir.status().toString();
    path = dir->path();
    EXPECT_TRUE(std::filesystem::is_directory(path));
    std::string f = dir->file("a.bin");
    ASSERT_TRUE(writeFile(f, std::string("x\0y", 3)).ok());
    std::filesystem::create_directories(path + "/sub");
    ASSERT_TRUE(writeFile(dir->file("sub/b.txt"), "b").ok());
    StatusOr<std::string> back = readFile(f);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, std::string("x\0y", 3));
    EXPECT_FALSE(isExecutable(f));
    EXPECT_FALSE(isExecutable(path)); // a folder is not an executable file
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Files, ErrorsNameTheFile) {
  StatusOr<std::string> missing = readFile("/nonexistent/tessera/file");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/tessera/file"),
            std::string::npos);
  EXPECT_FALSE(writeFile("/nonexistent/tessera/file", "x").ok());
  EXPECT_TRUE(isExecutable("/bin/sh"));
}

} // namespace

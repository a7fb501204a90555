//===- DynamicLibraryTest.cpp - dlopen search and symbol binding ----------===//

#include "tessera/Target/CUDA/DynamicLibrary.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace tessera;
using namespace tessera::cuda;

namespace {

TEST(DynamicLibrary, MissingLibraryIsUnavailableAndNamesIt) {
  LibrarySearch search;
  search.displayName = "Imaginary";
  search.sonames = {"libtessera-imaginary.so.7"};
  search.directories = {"/nonexistent/lib64"};
  auto lib = DynamicLibrary::open(search);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kUnavailable);
  const std::string &message = lib.status().message();
  EXPECT_NE(message.find("Imaginary"), std::string::npos) << message;
  EXPECT_NE(message.find("libtessera-imaginary.so.7"), std::string::npos);
  EXPECT_NE(message.find("/nonexistent/lib64/libtessera-imaginary.so.7"),
            std::string::npos)
      << message;
}

TEST(DynamicLibrary, EnvironmentOverrideIsExclusive) {
  ::setenv("TESSERA_TEST_LIBRARY_PATH", "/nonexistent/libm.so.6", 1);
  LibrarySearch search;
  search.displayName = "libm";
  search.envVar = "TESSERA_TEST_LIBRARY_PATH";
  search.sonames = {"libm.so.6"};
  auto lib = DynamicLibrary::open(search);
  ::unsetenv("TESSERA_TEST_LIBRARY_PATH");
  ASSERT_FALSE(lib.ok());
  EXPECT_NE(lib.status().message().find("TESSERA_TEST_LIBRARY_PATH"),
            std::string::npos)
      << lib.status().message();
}

TEST(DynamicLibrary, BindsSymbolsAndNamesMissingOnes) {
  LibrarySearch search;
  search.displayName = "libm";
  search.sonames = {"libm.so.6"};
  auto lib = DynamicLibrary::open(search);
  ASSERT_TRUE(lib.ok()) << lib.status().toString();
  double (*cosFn)(double) = nullptr;
  ASSERT_TRUE(lib->bind("cos", cosFn).ok());
  EXPECT_DOUBLE_EQ(cosFn(0.0), 1.0);
  void (*missing)() = nullptr;
  Status status = lib->bind("tesseraNoSuchSymbol", missing);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("tesseraNoSuchSymbol"), std::string::npos);
  EXPECT_EQ(missing, nullptr);
}

} // namespace

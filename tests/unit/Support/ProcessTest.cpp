//===- ProcessTest.cpp - Running a child process
//---------------------------===//

#include "tessera/Support/Process.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace tessera;

namespace {
std::string tempFile(const char *name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("tessera-process-") + std::to_string(getpid()) + "-" +
           name))
      .string();
}
} // namespace

TEST(Process, ExitCodeAndOutputToAFile) {
  std::string log = tempFile("log");
  ProcessOptions o;
  o.output = ProcessOptions::Output::File;
  o.outputPath = log;
  auto st = runProcess({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, o);
  ASSERT_TRUE(st.ok()) << st.status().toString();
  EXPECT_EQ(st->code, 3);
  EXPECT_EQ(st->signal, 0);
  EXPECT_FALSE(st->success());
  EXPECT_EQ(st->describe(), "exit status 3");
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "out\nerr\n");
  std::filesystem::remove(log);
}

TEST(Process, ArgumentsReachTheChildUnchanged) {
  // No shell between us and the child: '$(false)' and ';' are plain text.
  auto st = runProcess(
      {"/bin/sh", "-c", "test \"$1\" = 'a; $(false)'", "sh", "a; $(false)"});
  ASSERT_TRUE(st.ok()) << st.status().toString();
  EXPECT_TRUE(st->success()) << st->describe();
}

TEST(Process, StdinIsEmpty) {
  ProcessOptions quiet;
  quiet.output = ProcessOptions::Output::Discard;
  // `read` fails at end of input: stdin is /dev/null, not ours.
  auto st = runProcess({"/bin/sh", "-c", "read x"}, quiet);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->code, 1);
}

TEST(Process, SignalsAndPathSearch) {
  auto killed = runProcess({"/bin/sh", "-c", "kill -9 $$"});
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->signal, SIGKILL);
  EXPECT_NE(killed->describe().find("signal 9"), std::string::npos);
  // "sh" without a slash: found only with searchPath.
  ProcessOptions search;
  search.searchPath = true;
  auto found = runProcess({"sh", "-c", "exit 0"}, search);
  ASSERT_TRUE(found.ok()) << found.status().toString();
  EXPECT_TRUE(found->success());
  auto notSearched = runProcess({"sh", "-c", "exit 0"});
  EXPECT_FALSE(notSearched.ok());
  EXPECT_EQ(notSearched.status().code(), StatusCode::kUnavailable);
}

TEST(Process, MissingProgramIsUnavailable) {
  auto st = runProcess({"/nonexistent/tessera-no-such-tool"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(st.status().message().find("tessera-no-such-tool"),
            std::string::npos);
  EXPECT_FALSE(runProcess({}).ok());
}

// Data files for the reader tests: written into the test's isolated home, and the one-line
// usage error a reader must give for a bad one.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "engine/core/error.h"
#include "tests/support/isolated_home.h"

namespace dlbench::testing {

// Writes `text` byte for byte as `name` in the isolated home; returns its path.
inline std::string write_data_file(const std::string& name, const std::string& text) {
  const std::string path = isolated_home() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The message of the error `read(path)` throws for a file holding `text`, checked to be a
// one-line usage error naming the file; empty (and a test failure) when the file is accepted.
template <class Read>
std::string usage_refusal(const std::string& name, const std::string& text, Read&& read) {
  const std::string path = write_data_file(name, text);
  try {
    read(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return {};
}

}  // namespace dlbench::testing

#include "cli/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "engine/core/error.h"

namespace dlbench::cli {
namespace {

[[noreturn]] void cannot_write(const std::string& path) {
  throw Error(ErrorKind::kResource, "cannot write " + path,
              "check that the folder exists and is writable");
}

}  // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (path_.empty() || path_ == "-") return;
  struct stat st {};
  if (stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) cannot_write(path_ + " (a folder)");
    // Renaming over /dev/null or a pipe would replace it: write such targets in place.
    direct_ = true;
    file_.open(path_);
    if (!file_) cannot_write(path_);
    return;
  }
  std::filesystem::path target(path_);
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on the one-expression form.
  std::string pattern = target.parent_path().string();
  if (!pattern.empty()) pattern += '/';
  pattern += '.';
  pattern += target.filename().string();
  pattern += ".dlbench-XXXXXX";
  int fd = mkstemp(pattern.data());
  if (fd < 0) cannot_write(path_);
  // mkstemp makes the file 0600; an output file gets the permissions a plain open would give.
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  close(fd);
  temp_ = pattern;
  file_.open(temp_, std::ios::trunc);
  if (!file_) cannot_write(path_);
}

OutputFile::~OutputFile() {
  if (!temp_.empty()) std::remove(temp_.c_str());
}

std::ostream& OutputFile::stream() {
  return is_file() ? static_cast<std::ostream&>(file_) : std::cout;
}

void OutputFile::commit() {
  if (!is_file()) {
    std::cout.flush();
    return;
  }
  if (!file_.is_open()) return;  // committed already
  file_.close();
  if (file_.fail()) cannot_write(path_);
  if (direct_) return;
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) cannot_write(path_);
  temp_.clear();
}

}  // namespace dlbench::cli

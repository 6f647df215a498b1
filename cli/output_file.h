// Output files of the commands (--json FILE, --out FILE). The folder is checked when the
// command starts, so a mistyped path fails before minutes of measuring; the content goes to a
// temporary file beside the target and replaces it only when the command succeeds, so a
// refused or failed command leaves an existing file exactly as it was.
#pragma once

#include <fstream>
#include <ostream>
#include <string>

namespace dlbench::cli {

class OutputFile {
 public:
  // "" or "-": standard output. Error(kResource) when the folder cannot be written.
  explicit OutputFile(std::string path);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  bool is_file() const { return !path_.empty() && path_ != "-"; }
  // Where to write: the temporary file, or std::cout for "" and "-".
  std::ostream& stream();
  // Puts the written content in place (rename over the target); Error(kResource) on failure.
  void commit();

 private:
  std::string path_;
  std::string temp_;     // the temporary file beside path_, until commit()
  bool direct_ = false;  // a device or pipe (/dev/null, /dev/stdout): written in place
  std::ofstream file_;
};

}  // namespace dlbench::cli

#include "bench/telemetry/process_tree.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <string>
#include <unordered_set>

#include "bench/telemetry/proc_file.h"

namespace dlbench::telemetry {
namespace {

// Guards against pid cycles (pid reuse in a race) and absurd trees.
constexpr std::size_t kMaxProcesses = 100000;
// How many snapshots a reaped child's credit waits for its parent's cutime to show it.
constexpr int kCreditSnapshots = 3;

template <class Int>
bool parse_int(std::string_view text, Int& value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::optional<ProcStat> read_stat(pid_t pid, std::string& buffer) {
  if (!read_small_file("/proc/" + std::to_string(pid) + "/stat", buffer)) return std::nullopt;
  return parse_proc_stat(buffer);
}

// Numeric entries of a /proc directory (pids or tids).
std::vector<pid_t> numeric_entries(const std::string& dir) {
  std::vector<pid_t> ids;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return ids;
  while (dirent* entry = readdir(d)) {
    pid_t id = 0;
    if (parse_int(std::string_view(entry->d_name), id)) ids.push_back(id);
  }
  closedir(d);
  return ids;
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  // "pid (comm) state ppid ...": comm may contain ") ", so split at the last ')'.
  std::size_t open = text.find('('), close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return std::nullopt;
  ProcStat stat;
  if (!parse_int(text.substr(0, open > 0 ? open - 1 : 0), stat.pid)) return std::nullopt;
  // Fields after comm, numbered from 3 (state) as in proc(5).
  std::vector<std::string_view> fields;
  std::size_t at = close + 1;
  while (at < text.size() && fields.size() < 22) {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\n')) ++at;
    std::size_t end = text.find_first_of(" \n", at);
    if (end == std::string_view::npos) end = text.size();
    if (end > at) fields.push_back(text.substr(at, end - at));
    at = end;
  }
  if (fields.size() < 22) return std::nullopt;
  auto field = [&](int number) { return fields[static_cast<std::size_t>(number - 3)]; };
  std::uint64_t utime = 0, stime = 0, rss = 0;
  std::int64_t cutime = 0, cstime = 0, rss_signed = 0;
  stat.state = field(3).empty() ? '?' : field(3)[0];
  if (!parse_int(field(4), stat.ppid) || !parse_int(field(14), utime) ||
      !parse_int(field(15), stime) || !parse_int(field(16), cutime) ||
      !parse_int(field(17), cstime) || !parse_int(field(24), rss_signed))
    return std::nullopt;
  rss = rss_signed > 0 ? static_cast<std::uint64_t>(rss_signed) : 0;
  stat.own_ticks = utime + stime;
  stat.children_ticks = static_cast<std::uint64_t>(cutime > 0 ? cutime : 0) +
                        static_cast<std::uint64_t>(cstime > 0 ? cstime : 0);
  stat.rss_pages = rss;
  return stat;
}

std::uint64_t TreeCpuAccount::update(const std::vector<ProcStat>& live) {
  std::unordered_map<pid_t, Seen> now;
  for (const ProcStat& p : live) now[p.pid] = {p.own_ticks, p.children_ticks, p.ppid};
  if (!started_) {
    seen_ = std::move(now);
    started_ = true;
    return 0;
  }
  // A child that vanished was reaped; its parent's children ticks include (or soon will) all
  // of it, part of which we counted while it was alive.
  for (const auto& [pid, seen] : seen_) {
    if (now.count(pid)) continue;
    Credit& credit = credits_[seen.ppid];
    credit.ticks += seen.own + seen.children;
    credit.age = 0;
    vanished_[pid] = {seen, 0};
  }
  for (const ProcStat& p : live) {
    std::uint64_t own = p.own_ticks, children = p.children_ticks;
    auto before = seen_.find(p.pid);
    if (before == seen_.end()) {
      auto back = vanished_.find(p.pid);
      if (back != vanished_.end()) {
        // Missed by one snapshot, not reaped: take back its credit and continue from it.
        auto credit = credits_.find(back->second.seen.ppid);
        if (credit != credits_.end())
          credit->second.ticks -=
              std::min(credit->second.ticks, back->second.seen.own + back->second.seen.children);
        before = seen_.emplace(p.pid, back->second.seen).first;
        vanished_.erase(back);
      }
    }
    if (before != seen_.end()) {
      own = own >= before->second.own ? own - before->second.own : 0;
      children = children >= before->second.children ? children - before->second.children : 0;
    }
    auto credit = credits_.find(p.pid);
    if (credit != credits_.end()) {
      std::uint64_t used = std::min(children, credit->second.ticks);
      children -= used;
      credit->second.ticks -= used;
    }
    total_ += own + children;
  }
  for (auto it = credits_.begin(); it != credits_.end();) {
    bool spent = it->second.ticks == 0 || ++it->second.age >= kCreditSnapshots;
    it = spent || !now.count(it->first) ? credits_.erase(it) : std::next(it);
  }
  for (auto it = vanished_.begin(); it != vanished_.end();)
    it = ++it->second.age >= kCreditSnapshots ? vanished_.erase(it) : std::next(it);
  seen_ = std::move(now);
  return total_;
}

ProcessTree::ProcessTree(pid_t root) : root_(root) {
  std::string probe = "/proc/" + std::to_string(root) + "/task/" + std::to_string(root);
  children_files_ = access((probe + "/children").c_str(), R_OK) == 0;
}

const std::vector<ProcStat>& ProcessTree::at(const Tick& tick) {
  if (tick.monotonic_ns == read_at_ns_) return processes_;
  read_at_ns_ = tick.monotonic_ns;
  processes_.clear();
  if (children_files_)
    collect_from_children_files();
  else
    collect_by_scanning_proc();
  return processes_;
}

void ProcessTree::collect_from_children_files() {
  std::string buffer;
  std::vector<pid_t> pending{root_};
  std::unordered_set<pid_t> visited;
  while (!pending.empty() && visited.size() < kMaxProcesses) {
    pid_t pid = pending.back();
    pending.pop_back();
    if (!visited.insert(pid).second) continue;
    std::optional<ProcStat> stat = read_stat(pid, buffer);
    if (!stat) continue;  // exited between the parent's listing and now
    processes_.push_back(*stat);
    // A process's children are listed under the thread that forked them.
    std::string tasks = "/proc/" + std::to_string(pid) + "/task/";
    for (pid_t tid : numeric_entries(tasks)) {
      if (!read_small_file(tasks + std::to_string(tid) + "/children", buffer)) continue;
      std::size_t at = 0;
      while (at < buffer.size()) {
        std::size_t end = buffer.find(' ', at);
        if (end == std::string::npos) end = buffer.size();
        pid_t child = 0;
        if (parse_int(std::string_view(buffer).substr(at, end - at), child))
          pending.push_back(child);
        at = end + 1;
      }
    }
  }
}

void ProcessTree::collect_by_scanning_proc() {
  std::string buffer;
  std::unordered_map<pid_t, std::vector<ProcStat>> by_parent;
  std::optional<ProcStat> root;
  for (pid_t pid : numeric_entries("/proc")) {
    std::optional<ProcStat> stat = read_stat(pid, buffer);
    if (!stat) continue;
    if (pid == root_) root = stat;
    by_parent[stat->ppid].push_back(*stat);
  }
  if (!root) return;
  processes_.push_back(*root);
  std::unordered_set<pid_t> visited{root_};
  for (std::size_t i = 0; i < processes_.size() && processes_.size() < kMaxProcesses; ++i) {
    auto children = by_parent.find(processes_[i].pid);
    if (children == by_parent.end()) continue;
    for (const ProcStat& child : children->second)
      if (visited.insert(child.pid).second) processes_.push_back(child);
  }
}

}  // namespace dlbench::telemetry

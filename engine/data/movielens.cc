#include "engine/data/movielens.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "engine/core/error.h"

namespace dlbench::data {
namespace {

constexpr std::string_view kFormat = "UserID::MovieID::Rating::Timestamp";
constexpr std::size_t kExcerpt = 48;  // characters of a bad line quoted in the error

// What a user sees of a bad line: its start, with anything unprintable as '?'.
std::string excerpt(std::string_view line) {
  std::string out;
  for (char c : line.substr(0, kExcerpt)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (line.size() > kExcerpt) out += "...";
  return out;
}

[[noreturn]] void bad_line(const std::string& path, std::int64_t number, std::string_view line,
                           const std::string& problem) {
  throw Error(ErrorKind::kUsage,
              path + ":" + std::to_string(number) + ": " + problem + " in '" + excerpt(line) + "'",
              "each line of a MovieLens ratings file is " + std::string(kFormat) +
                  ", as in MovieLens-1M's ratings.dat");
}

struct Row {
  std::int64_t user, item, timestamp;
};

template <class T>
bool parse_whole(std::string_view field, T& value) {
  if (field.empty()) return false;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  return ec == std::errc() && end == field.data() + field.size();
}

Row parse_line(const std::string& path, std::int64_t number, std::string_view line) {
  std::string_view fields[4];
  std::size_t start = 0;
  for (int f = 0; f < 4; ++f) {
    const std::size_t sep = f < 3 ? line.find("::", start) : std::string_view::npos;
    if (f < 3 && sep == std::string_view::npos)
      bad_line(path, number, line,
               "expected 4 fields separated by '::', found " + std::to_string(f + 1));
    fields[f] = line.substr(start, sep == std::string_view::npos ? sep : sep - start);
    start = sep + 2;
  }
  if (fields[3].find("::") != std::string_view::npos)
    bad_line(path, number, line, "more than 4 fields");
  Row row{};
  constexpr std::int64_t kMaxId = std::numeric_limits<std::int32_t>::max();
  if (!parse_whole(fields[0], row.user) || row.user < 1 || row.user > kMaxId)
    bad_line(path, number, line, "UserID '" + excerpt(fields[0]) + "' is not an id from 1");
  if (!parse_whole(fields[1], row.item) || row.item < 1 || row.item > kMaxId)
    bad_line(path, number, line, "MovieID '" + excerpt(fields[1]) + "' is not an id from 1");
  double stars = 0;
  if (!parse_whole(fields[2], stars) || !std::isfinite(stars) || stars < 0)
    bad_line(path, number, line, "Rating '" + excerpt(fields[2]) + "' is not a number from 0");
  if (!parse_whole(fields[3], row.timestamp) || row.timestamp < 0)
    bad_line(path, number, line,
             "Timestamp '" + excerpt(fields[3]) + "' is not whole seconds from 0");
  return row;
}

// Sorted distinct ids -> dense indices.
std::unordered_map<std::int64_t, std::int32_t> dense(std::vector<std::int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::unordered_map<std::int64_t, std::int32_t> index;
  index.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) index.emplace(ids[i], static_cast<std::int32_t>(i));
  return index;
}

}  // namespace

bool Ratings::rated(std::int32_t user, std::int32_t item) const {
  const auto u = static_cast<std::size_t>(user);
  const auto first = rated_items.begin() + rated_offsets[u];
  const auto last = rated_items.begin() + rated_offsets[u + 1];
  return std::binary_search(first, last, item);
}

Ratings read_movielens(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorKind::kUsage, "cannot read the ratings file " + path,
                "give the path of a MovieLens ratings file (" + std::string(kFormat) + ")");
  std::vector<Row> rows;
  std::string text;
  std::int64_t number = 0;
  while (std::getline(in, text)) {
    ++number;
    std::string_view line = text;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // written on Windows
    if (line.empty()) continue;
    rows.push_back(parse_line(path, number, line));
  }
  if (in.bad())
    throw Error(ErrorKind::kUsage,
                "reading " + path + " failed at line " + std::to_string(number + 1));
  if (rows.empty())
    throw Error(ErrorKind::kUsage, path + " holds no ratings",
                "each line of a MovieLens ratings file is " + std::string(kFormat));

  Ratings r;
  r.path = path;
  r.ratings = static_cast<std::int64_t>(rows.size());
  std::vector<std::int64_t> user_ids, item_ids;
  for (const Row& row : rows) user_ids.push_back(row.user), item_ids.push_back(row.item);
  const auto user_index = dense(std::move(user_ids));
  const auto item_index = dense(std::move(item_ids));
  r.users = static_cast<std::int64_t>(user_index.size());
  r.items = static_cast<std::int64_t>(item_index.size());

  // The latest rating of each user (the later line on a tie) and how many each has.
  const auto users = static_cast<std::size_t>(r.users);
  std::vector<std::int64_t> latest(users, -1), count(users, 0);
  std::vector<std::int32_t> user_of(rows.size()), item_of(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::int32_t u = user_of[i] = user_index.at(rows[i].user);
    item_of[i] = item_index.at(rows[i].item);
    const auto su = static_cast<std::size_t>(u);
    ++count[su];
    if (latest[su] < 0 || rows[i].timestamp >= rows[static_cast<std::size_t>(latest[su])].timestamp)
      latest[su] = static_cast<std::int64_t>(i);
  }
  r.test_items.assign(users, -1);
  std::vector<std::vector<std::int32_t>> rated(users);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto su = static_cast<std::size_t>(user_of[i]);
    rated[su].push_back(item_of[i]);
    if (count[su] > 1 && latest[su] == static_cast<std::int64_t>(i)) {
      r.test_items[su] = item_of[i];
    } else {
      r.train_users.push_back(user_of[i]);
      r.train_items.push_back(item_of[i]);
    }
  }
  r.rated_offsets.push_back(0);
  for (std::vector<std::int32_t>& items : rated) {
    std::sort(items.begin(), items.end());
    items.erase(std::unique(items.begin(), items.end()), items.end());
    r.rated_items.insert(r.rated_items.end(), items.begin(), items.end());
    r.rated_offsets.push_back(static_cast<std::int64_t>(r.rated_items.size()));
  }
  return r;
}

}  // namespace dlbench::data

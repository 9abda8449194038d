// Lesson progress on disk. See progress.h.
#include "lessons/progress.h"

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/atomic_file.h"
#include "engine/error.h"
#include "engine/user_dirs.h"
#include "engine/nesting.h"
#include "engine/read_file.h"

namespace fs = std::filesystem;

namespace attnsim::lessons {

// A learner's progress is a few KB; a file far past that is not ours.
constexpr int64_t kMaxProgressBytes = int64_t{16} << 20;

double Progress::fraction(const std::string& id, size_t steps) const {
  const auto it = lessons.find(id);
  if (it == lessons.end() || steps == 0) return 0.0;
  return std::min(1.0, static_cast<double>(it->second.seen.size()) / static_cast<double>(steps));
}

std::string default_progress_path() { return (fs::path(user_dir(UserDir::Data)) / "progress.json").string(); }

Progress load_progress(const std::string& path, std::string* warning) {
  Progress p;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return p;
  try {
    const nlohmann::json j = parse_json(read_text_file(path, kMaxProgressBytes), path);
    p.last_lesson = j.value("last_lesson", "");
    if (j.contains("lessons") && j["lessons"].is_object())
      for (const auto& [id, l] : j["lessons"].items()) {
        LessonProgress lp;
        lp.step = l.value("step", 0);
        for (const auto& s : l.value("seen", std::vector<std::string>())) lp.seen.insert(s);
        for (const auto& s : l.value("quizzes_right", std::vector<std::string>())) lp.quizzes_right.insert(s);
        for (const auto& s : l.value("tasks_done", std::vector<std::string>())) lp.tasks_done.insert(s);
        p.lessons[id] = lp;
      }
  } catch (const std::exception& e) {
    if (warning) *warning = "ignoring unreadable progress file " + path + ": " + e.what();
    return Progress{};
  }
  return p;
}

bool save_progress(const Progress& p, const std::string& path, std::string* error) {
  nlohmann::json j;
  j["last_lesson"] = p.last_lesson;
  j["lessons"] = nlohmann::json::object();
  for (const auto& [id, l] : p.lessons) {
    j["lessons"][id] = {{"step", l.step},
                        {"seen", std::vector<std::string>(l.seen.begin(), l.seen.end())},
                        {"quizzes_right", std::vector<std::string>(l.quizzes_right.begin(), l.quizzes_right.end())},
                        {"tasks_done", std::vector<std::string>(l.tasks_done.begin(), l.tasks_done.end())}};
  }
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  try {
    write_file_atomically(path, j.dump(2) + "\n");  // every write and the close checked
  } catch (const Error& e) {
    if (error) *error = e.what();
    return false;
  }
  return true;
}

}  // namespace attnsim::lessons

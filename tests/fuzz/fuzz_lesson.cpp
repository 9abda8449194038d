// libFuzzer target: the lesson loader (TOML syntax, keys, types, ids, settings). Any text
// gives a lesson or diagnostics, never a crash; every step's settings resolve to a config
// the engine accepts or to an attnsim::Error (sizes checked and memory predicted, nothing
// allocated).
#include <cstdint>
#include <string>

#include "engine/error.h"
#include "lessons/lesson.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto r = attnsim::lessons::load_lesson_text(text, "fuzz.toml");
  for (const auto& d : r.diagnostics) (void)d.str();
  if (!r.lesson) return 0;
  for (size_t i = 0; i < r.lesson->steps.size(); ++i) {
    try {
      (void)attnsim::lessons::resolve(r.lesson->settings_at(i));
    } catch (const attnsim::Error&) {
    }
    for (const auto& c : r.lesson->steps[i].claims) {
      try {
        (void)attnsim::lessons::resolve_cost(c.cost);
      } catch (const attnsim::Error&) {
      }
    }
  }
  return 0;
}

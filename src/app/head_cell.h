// One cell of a layers × heads grid (the Hugging Face head grid, the logit attribution grid):
// its fill, its value written inside (or a head's short name over its score), and the
// knocked-out mark when the head is ablated.
#pragma once

#include <imgui.h>

#include <cstdio>

namespace attnsim::app {

inline constexpr ImU32 kKnocked = IM_COL32(0xD5, 0x5E, 0x00, 255);  // the slides' vermillion (model_slides.cpp)

inline void draw_knocked_mark(ImDrawList* list, ImVec2 a, ImVec2 b) {  // a vermillion frame and cross
  list->AddRect(a, b, kKnocked, 0, 0, 3);
  list->AddLine(a, b, kKnocked, 2);
  list->AddLine({b.x, a.y}, {a.x, b.y}, kKnocked, 2);
}

inline void draw_head_cell(ImDrawList* list, ImVec2 a, ImVec2 b, ImU32 fill, ImU32 ink, double value, bool knocked) {
  list->AddRectFilled(a, b, fill);
  char num[16];
  std::snprintf(num, sizeof num, "%.2f", value);
  list->AddText({a.x + 4, (a.y + b.y) * 0.5f - ImGui::GetTextLineHeight() * 0.5f}, ink, num);
  if (knocked) draw_knocked_mark(list, a, b);
}

// `word` (a head's short name, head_names.h pattern_short) over its score, and under them
// `chance` (head_chance_text: what even spreading scores) where the cell holds a third line.
// The caller sizes the cell to hold the first two (named_cell_size).
inline void draw_named_cell(ImDrawList* list, ImVec2 a, ImVec2 b, ImU32 fill, ImU32 ink, const char* word, double value,
                            const char* chance, bool knocked) {
  list->AddRectFilled(a, b, fill);
  char num[16];
  std::snprintf(num, sizeof num, "%.2f", value);
  const float line = ImGui::GetTextLineHeight();
  const bool third = b.y - a.y >= 3 * line + 4 && ImGui::CalcTextSize(chance).x <= b.x - a.x - 8;
  const float top = (a.y + b.y) * 0.5f - line * (third ? 1.5f : 1.0f);
  list->AddText({a.x + 4, top}, ink, word);
  list->AddText({a.x + 4, top + line}, ink, num);
  if (third) list->AddText({a.x + 4, top + 2 * line}, (ink & 0x00FFFFFF) | 0xB0000000, chance);
  if (knocked) draw_knocked_mark(list, a, b);
}

}  // namespace attnsim::app

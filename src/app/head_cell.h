// One cell of a layers × heads grid (the Hugging Face head grid, the logit attribution grid):
// its fill, its value written inside, and the knocked-out mark when the head is ablated.
#pragma once

#include <imgui.h>

#include <cstdio>

namespace attnsim::app {

inline constexpr ImU32 kKnocked = IM_COL32(0xD5, 0x5E, 0x00, 255);  // the slides' vermillion (model_slides.cpp)

inline void draw_head_cell(ImDrawList* list, ImVec2 a, ImVec2 b, ImU32 fill, ImU32 ink, double value, bool knocked) {
  list->AddRectFilled(a, b, fill);
  char num[16];
  std::snprintf(num, sizeof num, "%.2f", value);
  list->AddText({a.x + 4, (a.y + b.y) * 0.5f - ImGui::GetTextLineHeight() * 0.5f}, ink, num);
  if (knocked) {  // a vermillion frame and cross
    list->AddRect(a, b, kKnocked, 0, 0, 3);
    list->AddLine(a, b, kKnocked, 2);
    list->AddLine({b.x, a.y}, {a.x, b.y}, kKnocked, 2);
  }
}

}  // namespace attnsim::app

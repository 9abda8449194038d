// UI text table. See i18n.h.
#include "app/i18n.h"

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_map>

namespace attnsim::app {

namespace {

// English -> Korean. Keep sorted by panel so a translator can read it top to bottom.
const std::pair<const char*, const char*> kTable[] = {
    // window and menus
    {"File", "파일"},
    {"View", "보기"},
    {"Language", "언어"},
    {"Export window PNG", "창 전체 PNG 내보내기"},
    {"Export panel PNG", "현재 패널 PNG 내보내기"},
    {"Export scale", "내보내기 배율"},
    {"Transparent background", "투명 배경"},
    {"Quit", "종료"},
    {"Saved", "저장함"},
    {"Export failed", "내보내기 실패"},
    {"Computing", "계산 중"},
    {"Reduced motion", "움직임 줄이기"},
    {"Export slide", "슬라이드 내보내기"},
    {"Slide", "슬라이드"},
    {"Slide view", "슬라이드 보기"},
    {"Slide theme", "슬라이드 테마"},
    {"Print (light)", "인쇄용 (밝게)"},
    {"Projector (dark)", "프로젝터용 (어둡게)"},
    {"Scenario", "시나리오"},
    // pipeline
    {"Pipeline", "파이프라인"},
    {"view", "뷰"},
    {"copy", "복사"},
    {"compute", "계산"},
    {"input", "입력"},
    {"skipped", "건너뜀"},
    {"Play", "재생"},
    {"Pause", "일시정지"},
    {"Speed", "속도"},
    {"Duration (s)", "전환 시간 (초)"},
    {"Transition", "전환"},
    {"shape", "모양"},
    {"strides", "스트라이드"},
    {"bytes", "바이트"},
    {"storage", "저장소"},
    {"held by the trace", "트레이스가 들고 있는 메모리"},
    // tensor view
    {"Tensor", "텐서"},
    {"head", "헤드"},
    {"Batch", "배치"},
    {"Colour scale", "색 범위"},
    {"shared", "공통"},
    {"per head", "헤드별"},
    {"Fit", "맞추기"},
    {"index", "인덱스"},
    {"value", "값"},
    {"storage offset", "저장소 오프셋"},
    {"row sum", "행 합"},
    {"hidden", "가려짐"},
    {"visible", "보임"},
    {"mask (broadcast over heads)", "마스크 (헤드 방향으로 브로드캐스트)"},
    {"Legend", "범례"},
    {"skipped in this configuration", "이 설정에서는 건너뛰는 단계"},
    {"wheel: zoom, drag: pan", "휠: 확대, 끌기: 이동"},
    // memory view
    {"Memory", "메모리"},
    {"storage strip", "저장소 띠"},
    {"new storage", "새 저장소"},
    {"copied", "복사함"},
    {"same storage, new strides", "같은 저장소, 새 스트라이드"},
    {"contiguous", "연속"},
    {"not contiguous", "비연속"},
    {"Try view(B, T, d) without contiguous()", "contiguous() 없이 view(B, T, d) 해 보기"},
    {"engine says", "엔진의 답"},
    {"view succeeded", "view 성공"},
    // bug lab
    {"Bug lab", "버그 실험실"},
    {"correct", "올바른 실행"},
    {"with the bug", "버그 있는 실행"},
    {"difference", "차이"},
    {"cells differ", "칸이 다름"},
    {"identical", "완전히 같음"},
    {"Check hidden weights are exactly 0", "가려진 위치의 가중치가 정확히 0인지 검사"},
    {"Run to first NaN", "첫 NaN까지 실행"},
    {"no NaN anywhere", "어디에도 NaN 없음"},
    {"pass", "통과"},
    {"fail", "실패"},
    {"NaN per step", "단계별 NaN 개수"},
    {"positions checked", "검사한 위치"},
    {"no reference run for this scenario", "이 시나리오에는 비교할 올바른 실행이 없음"},
    // controls
    {"Controls", "설정"},
    {"Sentence", "문장"},
    {"Second sentence (keys, cross-attention)", "둘째 문장 (키, 크로스 어텐션)"},
    {"Cross-attention", "크로스 어텐션"},
    {"Heads", "헤드 수"},
    {"Seed", "시드"},
    {"Dropout (train mode)", "드롭아웃 (학습 모드)"},
    {"W_O = identity", "W_O = 항등 행렬"},
    {"Bias", "편향"},
    {"Causal mask", "인과 마스크"},
    {"Key lengths", "키 길이"},
    {"Query lengths", "질의 길이"},
    {"Apply", "적용"},
    {"Edit input cell", "입력 칸 편집"},
    {"Set", "설정"},
    {"Clear edits", "편집 지우기"},
    {"English sentence", "영어 문장"},
    {"Korean sentence", "한국어 문장"},
    {"Reset scenario", "시나리오 초기화"},
    {"Backend", "백엔드"},
};

}  // namespace

Lang lang_from_env() {
  for (const char* var : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* v = std::getenv(var);
    if (v && *v) return std::strncmp(v, "ko", 2) == 0 ? Lang::Ko : Lang::En;
  }
  return Lang::En;
}

Lang& ui_lang() {
  static Lang lang = lang_from_env();
  return lang;
}

const char* tr(const char* english) {
  if (ui_lang() == Lang::En) return english;
  static const std::unordered_map<std::string_view, const char*> table = [] {
    std::unordered_map<std::string_view, const char*> m;
    for (const auto& [en, ko] : kTable) m.emplace(en, ko);
    return m;
  }();
  const auto it = table.find(english);
  return it == table.end() ? english : it->second;
}

std::vector<std::string> all_korean_strings() {
  std::vector<std::string> out;
  for (const auto& entry : kTable) out.emplace_back(entry.second);
  return out;
}

}  // namespace attnsim::app

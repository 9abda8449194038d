// UI text table. See i18n.h.
#include "views/i18n.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "model/experiments/experiments.h"

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
    {"PDF export needs Cairo: use the desktop app", "PDF 내보내기는 Cairo가 필요합니다: 데스크톱 앱을 쓰세요"},
    // where an export went, the lesson deck (export_status.cpp)
    {"Open folder", "폴더 열기"},
    {"Copy path", "경로 복사"},
    {"Export lesson as PDF deck…", "강의를 PDF 슬라이드로 내보내기…"},
    {"Open a lesson first (Lessons menu)", "먼저 강의를 여세요 (강의 메뉴)"},
    {"A deck is being made already", "슬라이드를 이미 만드는 중입니다"},
    {"PDF needs Cairo, which only the desktop app has: attnsim --lesson FILE --export-slides DIR --format pdf",
     "PDF는 데스크톱 앱에만 있는 Cairo가 필요합니다: attnsim --lesson FILE --export-slides DIR --format pdf"},
    {"Making the PDF deck of %s", "%s의 PDF 슬라이드를 만드는 중"},
    {"computing the lesson's figures", "강의의 수치를 계산하는 중"},
    {"step %d of %d", "단계 %d / %d"},
    {"Opened", "열었음"},
    {"Open file…", "파일 열기…"},
    {"Open folder…", "폴더 열기…"},
    // start view, text size, About (panel_start.cpp, panel_menu.cpp, panel_about.cpp)
    {"Start view", "시작 화면"},
    {"How does a language model read your sentence?", "언어 모델은 문장을 어떻게 읽을까요?"},
    {"A model attnsim trained itself on English dictionary glosses: %lld layers x %lld heads, width %lld. Every number below is computed now, on this computer.",
     "attnsim이 영어 사전 풀이로 직접 학습한 모델입니다: 층 %lld개 x 헤드 %lld개, 폭 %lld. 아래의 모든 숫자는 지금 이 컴퓨터에서 계산한 값입니다."},
    {"Type a sentence (Enter runs the model):", "문장을 입력하세요 (Enter를 누르면 모델이 읽습니다):"},
    {"What it expects next", "다음에 올 토큰의 확률"},
    {"Its heads, named by what they do (click one to look inside)", "헤드마다 하는 일을 이름으로 붙였습니다 (누르면 안을 봅니다)"},
    {"Head %lld.%lld: %s. Click to see its layer's every step: the pipeline, the tensors and the memory they share.",
     "헤드 %lld.%lld: %s. 누르면 이 층의 모든 단계를 봅니다: 파이프라인, 텐서, 텐서들이 함께 쓰는 메모리."},
    {"The clearest heads on this sentence", "이 문장에서 가장 뚜렷한 헤드"},
    {"chance: the score of a head that spread its weight evenly over the same tokens",
     "우연: 같은 토큰에 가중치를 고르게 나눈 헤드가 받을 점수"},
    {"Step through attention", "어텐션 한 단계씩"},
    {"The article's example, one step at a time: shapes, views and copies.", "글의 예제를 한 단계씩: 모양, 뷰, 복사."},
    {"Heads in a language model", "언어 모델 속 헤드"},
    {"This model with every control: knock heads out, sample, read the lens.",
     "이 모델을 모든 조작과 함께: 헤드 끄기, 샘플링, 로짓 렌즈."},
    {"Lessons", "강의"},
    {"18 lessons, in Korean and English, each number checked by the engine.",
     "한국어와 영어로 된 강의 18개. 모든 숫자를 엔진이 확인합니다."},
    {"Text size", "글자 크기"},
    {"Ctrl + larger, Ctrl - smaller", "Ctrl + 크게, Ctrl - 작게"},
    {"Help", "도움말"},
    {"About attnsim", "attnsim 정보"},
    {"slow BLAS kernels", "느린 BLAS 커널"},
    {"Matrix products run slower than this CPU allows. Click for the advice.",
     "행렬 곱이 이 CPU가 낼 수 있는 속도보다 느리게 돕니다. 누르면 조언을 봅니다."},
    {"A step-through simulator of multi-head attention: every number it shows is computed by its own engine.",
     "멀티헤드 어텐션을 한 단계씩 따라가는 시뮬레이터입니다. 보여 주는 모든 숫자는 자체 엔진이 계산합니다."},
    {"Matrix products", "행렬 곱"},
    {"These kernels are weaker than this CPU: every matrix product runs slower than it could. The library's own advice:",
     "이 커널은 이 CPU보다 약합니다: 모든 행렬 곱이 낼 수 있는 속도보다 느리게 돕니다. 라이브러리의 조언:"},
    {"Close", "닫기"},
    {"not measured yet", "아직 재지 않음"},
    {"This scenario has no step '%s'; showing '%s' instead.", "이 시나리오에는 '%s' 단계가 없어서 '%s' 단계를 보여 줍니다."},
    {"The link asks for step %s, but this lesson has steps 1 to %d; showing step 1.",
     "링크가 %s단계를 가리키지만 이 레슨의 단계는 1부터 %d까지라서 1단계를 보여 줍니다."},
    {"--at %d: this lesson has steps 1 to %d; showing step 1.",
     "--at %d: 이 레슨의 단계는 1부터 %d까지라서 1단계를 보여 줍니다."},
    {"Computing this step's figures with the engine… (%d texts left)", "이 단계의 수치를 엔진으로 계산하는 중… (남은 글 %d개)"},
    {"The lesson's figures are still being computed: export the slides when they are in.",
     "강의의 수치를 아직 계산하고 있다: 다 나온 뒤에 슬라이드를 내보내자."},
    {"The trained model: its head grid", "학습된 모델: 헤드 격자"},
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
    {"NaN ok", "NaN 정상"},
    {"NaN bug", "NaN 버그"},
    {"-inf ok", "-inf 정상"},
    {"-inf bug", "-inf 버그"},
    {"%zu edited", "%zu개 편집함"},
    {"offset", "오프셋"},
    {"strides", "스트라이드"},
    {"storage", "저장소"},
    {"held by the trace", "트레이스 메모리"},
    {"Measure on this machine", "이 컴퓨터에서 재 보기"},
    {"Measure standard vs tiled", "표준 경로와 타일 경로 재기"},
    {"%lld of %lld passes", "%lld / %lld 회"},
    {"standard ms", "표준 ms"},
    {"tiled ms", "타일 ms"},
    {"std / tiled", "표준 / 타일"},
    {"IO bytes, standard", "IO 바이트, 표준"},
    {"IO bytes, tiled", "IO 바이트, 타일"},
    {"IO ratio", "IO 비율"},
    {"S, P held", "S, P 보유"},
    {"cells show:", "칸에 그리는 것:"},
    {"weight alpha", "가중치 alpha"},
    {"contribution ||alpha W_O v||", "기여 ||alpha W_O v||"},
    {"this core's L2 cache, %s (sysconf)", "이 코어의 L2 캐시 %s (sysconf)"},
    {"an L2 cache of 1 MiB (the size is unknown here)", "L2 캐시 1 MiB (여기서는 크기를 알 수 없음)"},
    {"No mask, medians of %d runs of each path, interleaved. The tiles were sized for %s: on a CPU the fast memory is the L1/L2 cache and the slow memory is RAM, not a GPU's SRAM and HBM, and the standard path's products run in a tuned BLAS, so the time ratio here need not follow the IO model's ratio of bytes.",
     "마스크 없음, 두 경로를 번갈아 %d번씩 돌린 중앙값. 타일은 %s에 맞췄다: CPU에서 빠른 메모리는 L1/L2 캐시, 느린 메모리는 RAM이지 GPU의 SRAM과 HBM이 아니다. 표준 경로의 행렬 곱은 잘 다듬은 BLAS가 하므로, 여기서 잰 시간 비율이 IO 모델의 바이트 비율을 따를 까닭은 없다."},
    // flash panel (the figure's own words are flash_words in flash_slides.cpp)
    {"memory", "메모리"},
    {"tiled", "타일"},
    {"standard", "표준"},
    {"query block >>", "질의 블록 >>"},
    {"skipped: every score is hidden", "건너뜀: 모든 점수가 가려짐"},
    {"not reached yet", "아직 닿지 않음"},
    {"query", "질의"},
    {"key", "키"},
    {"tile", "타일"},
    {"exact", "정확한 값"},
    {"event %d", "이벤트 %d"},
    {"Br (query block)", "Br (질의 블록)"},
    {"Bc (key block)", "Bc (키 블록)"},
    {"Same multiplications as the standard path; the (Tq, Tk) matrices S and P are never stored: each tile's scores live in fast memory only. The tiled sum adds exp(s - m) in tile order and divides once at the end, so it matches the standard output to rounding, not bit for bit; a fully hidden row ends with l = 0 and gives NaN, as softmax does.",
     "표준 경로와 같은 곱셈을 한다. (Tq, Tk) 행렬 S와 P는 저장되지 않는다: 각 타일의 점수는 빠른 메모리에만 있다. 타일 합은 exp(s - m)을 타일 순서로 더하고 끝에서 한 번 나누므로, 표준 출력과 비트 단위로 같지는 않고 반올림 오차 안에서 같다. 모두 가려진 행은 l = 0으로 끝나 softmax처럼 NaN이 된다."},
    // decode panel
    {"Decode", "디코딩"},
    {"Not a decode scenario", "디코딩 시나리오가 아님"},
    {"step %d", "걸음 %d"},
    {"layer %d", "층 %d"},
    {"step", "걸음"},
    {"position", "위치"},
    {" rows: prefill", "행: 프리필"},
    {"cache", "캐시"},
    {"used ", "사용 "},
    {"Decode: the trained model's weights (settings come from the checkpoint)", "디코딩: 학습된 모델의 가중치 (설정은 체크포인트에서 온다)"},
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
    {"contiguous", "연속"},
    {"not contiguous", "비연속"},
    {"Try view(B, T, d) without contiguous()", "contiguous() 없이 view(B, T, d) 해 보기"},
    {"engine says", "엔진의 답"},
    {"logical element", "논리 원소"},
    // bug lab
    {"Bug lab", "버그 실험실"},
    {"correct", "올바른 실행"},
    {"with the bug", "버그 있는 실행"},
    {"difference", "차이"},
    {"cells differ", "칸이 다름"},
    {"identical", "완전히 같음"},
    {"nothing to compare at this step", "이 단계에는 비교할 것이 없음"},
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
    {"padding on the left (side=left)", "왼쪽에 패딩 (side=left)"},
    {"bug", "버그"},
    // engine step notes shown in the pipeline list (engine/forward_steps.cpp, decode.cpp)
    {"no rotary embedding", "회전 위치 임베딩 없음"},
    {"eval mode: dropout is the identity", "평가 모드: 드롭아웃은 항등"},
    {"no mask", "마스크 없음"},
    {"greedy: temperature 0", "그리디: 온도 0"},
    {"one new row sees every cached key", "새 행 하나가 캐시의 모든 키를 본다"},
    {"causal among the new rows", "새 행끼리는 인과 마스크"},
    {"Set", "설정"},
    {"Clear edits", "편집 지우기"},
    {"English sentence", "영어 문장"},
    {"Korean sentence", "한국어 문장"},
    {"Reset scenario", "시나리오 초기화"},
    {"Backend", "백엔드"},
    {"CUDA is not available here: ", "여기서는 CUDA를 쓸 수 없음: "},
    // model panel: header, numbers, head grid, guesses (panel_model.cpp)
    {"Model", "모델"},
    {"%s  (step %lld)", "%s  (스텝 %lld)"},
    {"%lld layers x %lld heads, d_model %lld, vocab %lld, up to %lld tokens",
     "레이어 %lld개 x 헤드 %lld개, d_model %lld, 어휘 %lld개, 최대 토큰 %lld개"},
    {"final (step %lld)", "최종 (스텝 %lld)"},
    {"checkpoint", "체크포인트"},
    {"sequence", "시퀀스"},
    {"repeated random", "무작위 반복"},
    {"sequence generators, knock-out, decode###model-tools", "시퀀스 생성, 헤드 끄기, 디코딩###model-tools"},
    {"task example", "학습 과제 예시"},
    {"sentence", "문장"},
    {"knock out:", "헤드 끄기:"},
    {"zero", "0으로"},
    {"mean", "평균으로"},
    {"induction heads", "인덕션 헤드"},
    {"none", "모두 복원"},
    {"positions", "위치"},
    {"loss", "손실"},
    {"accuracy", "정확도"},
    {"loss, ablated", "손실 (헤드 끈 뒤)"},
    {"accuracy, ablated", "정확도 (헤드 끈 뒤)"},
    {"first occurrence", "첫 등장"},
    {"repeated", "반복"},
    {"all", "전체"},
    {"head %lld.%lld: %s", "헤드 %lld.%lld: %s"},
    {"Of what it writes, %.0f %% comes from the first token.", "이 헤드가 쓰는 것 가운데 %.0f %%가 첫 토큰에서 온다."},
    {"click: layer %lld's 25 steps in the other views", "클릭: 레이어 %lld의 25단계를 다른 보기에서"},
    {"No head is knocked out: there is nothing to restore.", "끈 헤드가 없어 되살릴 것이 없다."},
    {"This model has no head scored as induction (best %.2f, head %lld.%lld; needs %.2f).",
     "이 모델에는 인덕션으로 채점된 헤드가 없다 (가장 높은 점수 %.2f, 헤드 %lld.%lld; 기준 %.2f)."},
    {"The sequence already fills the model's %lld positions: shorten it to continue.",
     "시퀀스가 이미 모델의 위치 %lld개를 다 채웠다. 이어 쓰려면 줄여야 한다."},
    {"scores on the scoring batch (BOS + r + r, 64 sequences)", "채점용 배치의 점수 (BOS + r + r, 시퀀스 64개)"},
    {"on the sequence on screen", "화면의 시퀀스에서"},
    {"held-out line", "검증 문장"},
    {"--layer %lld: this model has layers 0 to %lld", "--layer %lld: 이 모델의 층은 0부터 %lld까지다"},
    {"continue:", "이어 쓰기:"},
    {"tokens##decode", "토큰 수##decode"},
    {"temperature (0 = greedy)", "온도 (0 = 탐욕)"},
    {"seed##decode", "시드##decode"},
    {"decode", "생성"},
    {"no held-out loss: %s", "검증 손실 없음: %s"},
    {"measuring the loss on held-out text…", "검증 텍스트의 손실을 재는 중…"},
    {"held-out text (%lld tokens): loss %.3f nats/token", "검증 텍스트(토큰 %lld개): 손실 %.3f nats/토큰"},
    {"knocked out %.3f (%+.3f)", "헤드를 끄면 %.3f (%+.3f)"},
    {"scores on held-out lines repeated (EOS + r + r, 16 lines)", "검증 문장을 반복한 입력의 점수 (EOS + r + r, 16문장)"},
    {"next token, top 5:", "다음 토큰 상위 5개:"},
    {"no held-out text is loaded", "검증 텍스트를 읽지 못했다"},
    {"the sequence already has %lld tokens, all this model reads", "시퀀스가 이미 %lld 토큰으로, 이 모델이 읽는 최대 길이다"},
    {"knock out", "끄기"},
    {"head %lld.%lld knocked out: recomputed in %d ms", "헤드 %lld.%lld 끔: %d ms 만에 다시 계산"},
    {"head %lld.%lld restored: recomputed in %d ms", "헤드 %lld.%lld 복원: %d ms 만에 다시 계산"},
    {"under each token: the model's guess for it (green right, red wrong)",
     "각 토큰 아래: 그 토큰에 대한 모델의 예측 (초록 맞음, 빨강 틀림)"},
    {"token", "토큰"},
    {"guess", "예측"},
    {"ablated", "헤드 끈 뒤"},
    {"position %d predicts '%s' (%s)", "위치 %d에서 '%s' 예측 (%s)"},
    {"not scored", "채점 안 함"},
    {"as trained", "학습된 그대로"},
    {"Heads###model-heads", "헤드###model-heads"},
    {"Training###model-training", "학습###model-training"},
    {"Experiments###model-experiments", "실험###model-experiments"},
    {"Sampling###model-sampling", "샘플링###model-sampling"},
    {"Lens###model-lens", "렌즈###model-lens"},
    // the whole pass's tabs (panel_whole.cpp, views/sampling_figure.cpp, whole_run.cpp)
    {"Heads###hf-heads", "헤드###hf-heads"},
    {"Sampling###hf-sampling", "샘플링###hf-sampling"},
    {"Lens###hf-lens", "렌즈###hf-lens"},
    {"top-k", "상위 k"},
    {"top-p", "상위 p"},
    {"off", "끔"},
    {"sampling steps recomputed in %.2f ms (the whole pass took %.1f ms)",
     "샘플링 단계만 %.2f ms 만에 다시 계산 (전체 패스는 %.1f ms 걸림)"},
    {"next-token probabilities", "다음 토큰 확률"},
    {"greedy: the most likely token, every time", "그리디: 언제나 가장 확률이 높은 토큰"},
    {"kept: %lld of %lld tokens, %.1f%% of the probability", "남긴 토큰: %lld개 / 전체 %lld개, 확률의 %.1f%%"},
    {"greedy (temperature 0)", "그리디 (온도 0)"},
    {"temperature %.2f", "온도 %.2f"},
    {"top-k %lld", "상위 k %lld"},
    {"top-k off", "상위 k 끔"},
    {"top-p %.2f", "상위 p %.2f"},
    {"top-p off", "상위 p 끔"},
    {"seed %llu", "시드 %llu"},
    {"← chosen", "← 선택"},
    {"Only the kept tokens can be drawn; the frame marks the one chosen.",
     "남긴 토큰만 뽑힐 수 있고, 테두리가 선택된 토큰입니다."},
    {"logit lens at the last position: the stream after each stage, read through the final norm and the unembedding; the final answer is '%s'",
     "마지막 위치의 로짓 렌즈: 각 단계 뒤의 잔차 스트림을 마지막 정규화와 언임베딩으로 읽은 것. 최종 답은 '%s'"},
    {"stream after", "지난 단계"},
    {"top token", "1위 토큰"},
    {"its probability", "그 확률"},
    {"final answer's probability", "최종 답의 확률"},
    {"direct logit attribution of '%s': logit %.3f, the parts sum to %.3f",
     "'%s'의 직접 로짓 기여: 로짓 %.3f, 부분들의 합 %.3f"},
    {"attribute the word", "나눠 볼 단어"},
    {"or type a token", "또는 토큰 입력"},
    {"no token of this model reads '%s' (the likeliest are in the list)",
     "이 모델에는 '%s'(으)로 읽히는 토큰이 없다 (가장 그럴듯한 토큰은 목록에 있다)"},
    {"each head's direct contribution (click: knock it out or back in; the grid shows the pass as trained)",
     "헤드마다 직접 기여 (클릭: 그 헤드를 끄거나 다시 켜기. 격자는 학습된 그대로의 패스)"},
    {"head %lld.%lld writes %+.4f into this logit (click: knock it out or back in)",
     "헤드 %lld.%lld이(가) 이 로짓에 %+.4f을(를) 씀 (클릭: 끄거나 다시 켜기)"},
    {"the direct paths: what no head writes", "직접 경로: 어느 헤드도 쓰지 않는 부분"},
    {"the logit lens: the final answer '%s' read after each stage", "로짓 렌즈: 최종 답 '%s'을(를) 단계마다 미리 읽기"},
    {"direct logit attribution of '%s': each head's part", "'%s'의 직접 로짓 기여: 헤드마다의 몫"},
    {"logit %.3f = the parts' sum %.3f", "로짓 %.3f = 부분들의 합 %.3f"},
    {"what each layer and head adds to the answer", "층과 헤드가 답에 보태는 것"},
    {"Left: the answer read early, after each stage. Right: its logit split by the head that wrote each part; orange adds, purple takes away.",
     "왼쪽: 단계마다 미리 읽은 답. 오른쪽: 그 로짓을 쓴 헤드별로 나눈 것. 주황은 보태고 보라는 뺀다."},
    {"logit part", "로짓 몫"},
    {"Overview###model-overview", "전체 모습###model-overview"},
    {"Overview###hf-overview", "전체 모습###hf-overview"},
    {"tokens", "토큰"},
    {"block %zu: click for its steps", "블록 %zu: 클릭하면 그 단계들"},
    {"embedding", "임베딩"},
    {"attention", "어텐션"},
    {"unembedding", "언임베딩"},
    {"the whole model", "모델 전체"},
    {"‖x‖ of the residual stream after each stage, per position", "각 단계를 지난 뒤 위치별 잔차 스트림의 ‖x‖"},
    {"Every block reads the residual stream and adds what it writes back into it; the last stream becomes the logits.",
     "블록마다 잔차 스트림을 읽고 쓴 것을 다시 더한다. 마지막 스트림이 로짓이 된다."},
    {"click a block: its steps here and in the pipeline, tensor and memory views",
     "블록을 클릭하면 그 단계들을 여기와 파이프라인, 텐서, 메모리 보기에서 엽니다"},
    {"click a step: it in the pipeline, tensor and memory views", "단계를 클릭하면 파이프라인, 텐서, 메모리 보기에서 그 단계를 엽니다"},
    {"%s (%s): the pipeline lists the block's attention steps; attnsim-cli trace --whole dumps this one",
     "%s (%s): 파이프라인에는 블록의 어텐션 단계만 있습니다. 이 단계는 attnsim-cli trace --whole이 저장합니다"},
    {"%s (%s): click to select it in the pipeline, tensor and memory views",
     "%s (%s): 클릭하면 파이프라인, 텐서, 메모리 보기에서 이 단계를 고릅니다"},
    {"%s: its attention weights on this sequence (rows: queries, columns: keys)",
     "%s: 이 시퀀스에서의 어텐션 가중치 (행: 질의, 열: 키)"},
    {"close this block", "이 블록 닫기"},
    {"click here to close", "여기를 클릭하면 닫힘"},
    {"norm", "정규화"},
    {"each small map: one head's attention weights on this sequence (rows: queries, columns: keys; 0 to 1)",
     "작은 지도 하나: 이 시퀀스에서 헤드 하나의 어텐션 가중치 (행: 질의, 열: 키. 0에서 1)"},
    {"what a step computes is added back into the residual stream", "단계가 계산한 것을 잔차 스트림에 다시 더한다"},
    {"norm: each position's vector normalised before the step reads it", "정규화: 단계가 읽기 전에 위치마다 벡터를 정규화한다"},
    {"token %d is outside the vocabulary (0..%lld)", "토큰 %d은(는) 어휘(0..%lld) 밖에 있습니다"},
    // role badges (model::role_label, translated where shown)
    {"induction", "인덕션"},
    {"previous-token", "앞 토큰"},
    {"duplicate-token", "중복 토큰"},
    {"first-token", "첫 토큰"},
    {"diagonal", "대각선"},
    {"mixed", "혼합"},
    // head names (views/head_names.cpp): the strongest pattern, its score, the chance
    {"first token", "첫 토큰"},
    {"previous token", "앞 토큰"},
    {"earlier copy", "앞선 같은 토큰"},
    {"current token", "현재 토큰"},
    {"first", "첫"},
    {"prev.", "앞"},
    {"ind.", "인덕"},
    {"dup.", "같은"},
    {"self", "자신"},
    {"chance", "우연"},
    {"This head puts %.0f %% of its weight on the first token; a head that spread evenly would put %.0f %% there.",
     "이 헤드는 가중치의 %.0f %%를 첫 토큰에 둔다. 고르게 나누는 헤드라면 %.0f %%를 둘 것이다."},
    {"This head puts %.0f %% of its weight on the previous token; a head that spread evenly would put %.0f %% there.",
     "이 헤드는 가중치의 %.0f %%를 바로 앞 토큰에 둔다. 고르게 나누는 헤드라면 %.0f %%를 둘 것이다."},
    {"This head puts %.0f %% of its weight on the token after an earlier copy of the current one (induction); a head that spread evenly would put %.0f %% there.",
     "이 헤드는 가중치의 %.0f %%를 현재 토큰이 앞서 나온 자리의 바로 다음 토큰에 둔다(인덕션). 고르게 나누는 헤드라면 %.0f %%를 둘 것이다."},
    {"This head puts %.0f %% of its weight on earlier copies of the current token; a head that spread evenly would put %.0f %% there.",
     "이 헤드는 가중치의 %.0f %%를 현재 토큰과 같은 앞선 토큰에 둔다. 고르게 나누는 헤드라면 %.0f %%를 둘 것이다."},
    {"This head puts %.0f %% of its weight on the current token itself; a head that spread evenly would put %.0f %% there.",
     "이 헤드는 가중치의 %.0f %%를 현재 토큰 자신에 둔다. 고르게 나누는 헤드라면 %.0f %%를 둘 것이다."},
    // step display names (views/step_names.cpp): the pass's steps in words
    {"token embedding", "토큰 임베딩"},
    {"position embedding", "위치 임베딩"},
    {"final norm", "마지막 정규화"},
    {"logits", "로짓"},
    {"probabilities", "확률"},
    {"top-k filter", "top-k 거르기"},
    {"top-p filter", "top-p 거르기"},
    {"norm before attention", "어텐션 앞 정규화"},
    {"stream + attention", "스트림 + 어텐션"},
    {"norm before MLP", "MLP 앞 정규화"},
    {"MLP gate", "MLP 게이트"},
    {"MLP up-projection", "MLP 올림 투영"},
    {"MLP activation", "MLP 활성화"},
    {"MLP down-projection", "MLP 내림 투영"},
    {"stream + MLP (block output)", "스트림 + MLP (블록 출력)"},
    {"attention output bias", "어텐션 출력 편향"},
    {"output bias", "출력 편향"},
    {"query input", "질의 입력"},
    {"key input", "키 입력"},
    {"value input", "값 입력"},
    {"query projection", "질의 투영"},
    {"key projection", "키 투영"},
    {"value projection", "값 투영"},
    {"queries split by head", "헤드별로 나눈 질의"},
    {"keys split by head", "헤드별로 나눈 키"},
    {"values split by head", "헤드별로 나눈 값"},
    {"queries per head", "헤드마다의 질의"},
    {"keys per head", "헤드마다의 키"},
    {"values per head", "헤드마다의 값"},
    {"rotated queries (RoPE)", "회전한 질의 (RoPE)"},
    {"rotated keys (RoPE)", "회전한 키 (RoPE)"},
    {"keys written to the cache", "캐시에 쓴 키"},
    {"values written to the cache", "캐시에 쓴 값"},
    {"cached keys", "캐시된 키"},
    {"cached values", "캐시된 값"},
    {"keys shared by a group", "그룹이 함께 쓰는 키"},
    {"values shared by a group", "그룹이 함께 쓰는 값"},
    {"scores q·k", "점수 q·k"},
    {"scores / √dk", "점수 / √dk"},
    {"mask", "마스크"},
    {"masked scores", "가린 점수"},
    {"attention weights", "어텐션 가중치"},
    {"weights after dropout", "드롭아웃 뒤 가중치"},
    {"weighted values per head", "헤드마다의 가중 합"},
    {"heads moved next to each other", "헤드를 나란히 옮김"},
    {"heads copied side by side", "헤드를 나란히 복사"},
    {"heads concatenated", "헤드를 이어 붙임"},
    {"output projection", "출력 투영"},
    {"block %ld", "블록 %ld"},
    {"head %ld.%s", "헤드 %ld.%s"},
    // model: the sequence (model_view.cpp, shown in the banner)
    {"no model is loaded", "불러온 모델이 없습니다"},
    {"the sequence needs at least one token after BOS", "시퀀스에는 BOS 뒤에 토큰이 하나 이상 있어야 합니다"},
    {"the sequence has %lld tokens (BOS included); this model reads at most %lld",
     "시퀀스의 토큰이 %lld개입니다 (BOS 포함). 이 모델은 최대 %lld개까지 읽습니다"},
    {"token %d is outside the vocabulary of %lld", "토큰 %d은(는) 어휘 %lld개 밖에 있습니다"},
    // Hugging Face panel (panel_hf.cpp) and its view (hf_view.cpp, shown in the banner)
    {"Hugging Face model", "Hugging Face 모델"},
    {"%s: %lld layers x %lld heads (%lld K/V heads), d_model %lld, vocab %lld, %lld positions",
     "%s: 레이어 %lld개 x 헤드 %lld개 (K/V 헤드 %lld개), d_model %lld, 어휘 %lld, 위치 %lld개"},
    {"memory predicted from the headers: %s", "헤더로 예측한 메모리: %s"},
    {"layer", "레이어"},
    {"computing…", "계산 중…"},
    {"text", "텍스트"},
    {"this folder has no tokenizer (tokenizer.json, or vocab.json + merges.txt): the input is token ids",
     "이 폴더에는 토크나이저(tokenizer.json, 또는 vocab.json + merges.txt)가 없습니다: 입력은 토큰 id입니다"},
    {"%zu tokens (hover a box: its id and bytes)", "토큰 %zu개 (상자에 마우스를 올리면 id와 바이트)"},
    {"token %zu: id %d", "토큰 %zu: id %d"},
    {"bytes %zu to %zu of the text", "텍스트의 %zu번째부터 %zu번째 바이트"},
    {"next-token loss: needs 2 tokens", "다음 토큰 손실: 토큰이 2개 이상 필요합니다"},
    {"next-token loss %.4f nats; with the heads knocked out (%zu): %.4f (%+.4f)",
     "다음 토큰 손실 %.4f nats, 헤드 %zu개를 끄면 %.4f (%+.4f)"},
    {"next-token loss %.4f nats (mean over %zu predicted tokens)", "다음 토큰 손실 %.4f nats (예측한 토큰 %zu개의 평균)"},
    {"rank", "순위"},
    {"next token", "다음 토큰"},
    {"next token, ablated", "다음 토큰, 헤드 끈 뒤"},
    {"on your text", "입력한 텍스트에서"},
    {"on repeated random sequences", "반복된 무작위 시퀀스에서"},
    {"restore all", "모두 되돌리기"},
    {"click: knock it out or back in", "클릭: 끄거나 다시 켜기"},
    {"strongest pattern", "가장 뚜렷한 패턴"},
    {"The input already fills the model's %lld positions: shorten it to continue.",
     "입력이 이미 모델의 위치 %lld개를 다 채웠다. 이어 쓰려면 줄여야 한다."},
    {"steps", "스텝"},
    {"temperature", "온도"},
    {"greedy", "그리디"},
    {"%zu tokens at temperature %.2f (seed %llu), %.0f ms", "토큰 %zu개, 온도 %.2f (시드 %llu), %.0f ms"},
    {"%zu tokens, greedy, %.0f ms", "토큰 %zu개, 그리디, %.0f ms"},
    {"%s in the app (the weights and two passes)", "앱에서 %s (가중치와 두 번의 패스)"},
    {"type some text first", "먼저 텍스트를 입력하세요"},
    {"this text's two passes", "이 텍스트의 두 패스"},
    {"a shorter text", "더 짧은 텍스트"},
    {"fewer tokens", "더 적은 토큰"},
    {"layer %lld: this model has %lld layers (0 to %lld)", "레이어 %lld: 이 모델의 레이어는 %lld개입니다 (0부터 %lld까지)"},
    {"head %lld.%lld is not in this model (%lld layers x %lld heads)",
     "헤드 %lld.%lld은(는) 이 모델에 없습니다 (레이어 %lld개 x 헤드 %lld개)"},
    {"the temperature is 0 (greedy) or a positive number", "온도는 0(그리디)이거나 양수입니다"},
    {"decode 1 to %lld tokens: the model reads %lld positions and the input has %lld",
     "1에서 %lld개까지 디코딩하세요: 모델은 위치 %lld개를 읽고 입력은 %lld개입니다"},
    // Open from Hugging Face (panel_hub.cpp, hub_download_*.cpp)
    {"Open from Hugging Face…", "Hugging Face에서 열기…"},
    {"Open from Hugging Face", "Hugging Face에서 열기"},
    {"Open", "열기"},
    {"access token (gated or private models)", "액세스 토큰 (승인이 필요하거나 비공개인 모델)"},
    {"The token is kept for this session only; it is never shown or written to a file.",
     "토큰은 이번 세션에만 쓰고, 화면에 보이거나 파일에 기록되지 않습니다."},
    {"Remember the token in this browser", "이 브라우저에 토큰 기억하기"},
    {"Asking the Hub…", "Hub에 묻는 중…"},
    {"Opening…", "여는 중…"},
    {"%s: checking its hash…", "%s: 해시 확인 중…"},
    {"%s left", "%s 남음"},
    {"Cancel", "취소"},
    {"Stored models", "저장된 모델"},
    {"none yet", "아직 없음"},
    {"Commit", "커밋"},
    {"Size", "크기"},
    {"Delete", "삭제"},
    {"Keep", "두기"},
    {"Delete a stored model", "저장된 모델 삭제"},
    {"Delete %s, every revision of it?", "%s의 모든 리비전을 삭제할까요?"},
    {"opened from what is stored, no network", "저장된 것에서 열었음, 네트워크 없이"},
    {"downloaded %s in %.1f s", "%s 내려받음, %.1f초"},
    {"the Hugging Face cache, shared with Python: %s", "Python과 함께 쓰는 Hugging Face 캐시: %s"},
    {"this browser's storage (IndexedDB)", "이 브라우저의 저장소 (IndexedDB)"},
    // model: Training tab (panel_timeline.cpp)
    {"step %.0f", "스텝 %.0f"},
    {"layers heads d_model steps", "레이어 헤드 d_model 스텝"},
    {"lr", "학습률"},
    {"seed", "시드"},
    {"about %.0f s here; checkpoints every %lld steps", "이 컴퓨터에서 약 %.0f초, 체크포인트는 %lld 스텝마다"},
    {"Start", "시작"},
    {"Stop", "중지"},
    {"Reset", "초기화"},
    {"open this run's checkpoints", "이 실행의 체크포인트 열기"},
    {"no training log: press Start, or open a run with train_log.jsonl",
     "학습 로그 없음: 시작을 누르거나 train_log.jsonl이 있는 실행을 여세요"},
    {"step %lld, loss %.3f, %.0f s", "스텝 %lld, 손실 %.3f, %.0f초"},
    {"phase change", "상전이"},
    {"no step finished for %.0f s: every core is busy (the run takes only what the window leaves)",
     "%.0f초 동안 끝난 스텝이 없다: 모든 코어가 바쁘다 (학습은 창이 남긴 CPU만 쓴다)"},
    {"starting…", "시작하는 중…"},
    {"step %lld of %lld · loss %.3f · about %.0f s left", "스텝 %lld / %lld · 손실 %.3f · 약 %.0f초 남음"},
    {"Start trains a new model from random weights on the induction task (random tokens, then the same tokens again: %lld token types, %lld positions): %lld layers x %lld heads, d_model %lld.",
     "시작을 누르면 무작위 가중치에서 새 모델을 인덕션 과제(무작위 토큰 뒤에 같은 토큰을 한 번 더: 토큰 %lld종, "
     "위치 %lld개)로 학습한다: 레이어 %lld개 x 헤드 %lld개, d_model %lld."},
    {"The language model on screen (%lld layers, d_model %lld, trained on text) stays as it is: it took far longer to train than a run here, so the new model is smaller.",
     "화면의 언어 모델(레이어 %lld개, d_model %lld, 텍스트로 학습)은 그대로 둔다: 여기서 돌리는 학습보다 훨씬 오래 "
     "학습했기에 새 모델은 더 작다."},
    {"The model on screen keeps its weights; the run starts from its shape.",
     "화면의 모델은 가중치를 그대로 두고, 새 학습은 같은 모양에서 시작한다."},
    {"the new run", "새 학습"},
    {"the run of the model on screen (step %lld, loss %.3f), dimmed while the new run trains",
     "화면의 모델을 학습한 기록 (스텝 %lld, 손실 %.3f): 새 학습이 도는 동안 흐리게"},
    {"shown", "표시 중"},
    {"loss, first copy", "손실, 첫 사본"},
    {"loss, repeated part", "손실, 반복 구간"},
    {"loss per part (nats)", "부분별 손실 (nats)"},
    {"loss (nats)", "손실 (nats)"},
    {"loss over %d seeds (nats)", "시드 %d개의 손실 (nats)"},
    {"loss: min-max of %d seeds", "손실: 시드 %d개의 최소-최대"},
    {"loss: median", "손실: 중앙값"},
    {"induction score per head", "헤드별 인덕션 점수"},
    {"previous-token score per head", "헤드별 앞 토큰 점수"},
    {"first-token share per head", "헤드별 첫 토큰 비중"},
    // model: Training tab, a recipe trained with several seeds (run_group.h)
    {"loss per part over %d seeds (nats)", "시드 %d개의 부분별 손실 (nats)"},
    {"best induction score (any head) over %d seeds", "시드 %d개의 최고 인덕션 점수 (헤드 중 최대)"},
    {"repeated part: min-max of %d seeds", "반복 구간: 시드 %d개의 최소-최대"},
    {"repeated part: median", "반복 구간: 중앙값"},
    {"first copy: median", "첫 사본: 중앙값"},
    {"min-max of %d seeds", "시드 %d개의 최소-최대"},
    {"median", "중앙값"},
    {"other seeds", "다른 시드"},
    {"this run (seed %llu)", "이 실행 (시드 %llu)"},
    {"uniform guess: ln %lld = %.2f", "균등 추측: ln %lld = %.2f"},
    {"%lld of %lld seeds learned (repeat accuracy >= %.0f%%)", "%lld개 시드가 학습됨 (전체 %lld개, 반복 구간 정확도 %.0f%% 이상)"},
    // model: Experiments tab (panel_experiments.cpp)
    {"repeat accuracy change when the head is knocked out (points)",
     "헤드를 하나씩 껐을 때 반복 구간 정확도 변화 (퍼센트포인트)"},
    {"Δ accuracy", "정확도 변화"},
    {"mean attention row entropy (nats)", "어텐션 행 엔트로피 평균 (nats)"},
    {"entropy", "엔트로피"},
    {"final loss", "최종 손실"},
    {"%d head", "헤드 %d개"},
    {"%d heads", "헤드 %d개"},
    {"repeat accuracy", "반복 구간 정확도"},
    {"prune after training 8", "헤드 8개로 학습 후 가지치기"},
    {"train with few", "처음부터 적은 헤드로 학습"},
    {"repeat loss", "반복 구간 손실"},
    {"before training", "학습 전"},
    {"after", "학습 후"},
    {"first-token share", "첫 토큰 비중"},
    {"training steps per model", "모델당 학습 스텝"},
    {"roles", "역할"},
    {"ablation", "헤드 끄기"},
    {"prune", "가지치기"},
    {"dk-sweep", "d_k 스윕"},
    {"one-vs-many", "헤드 1개 대 여러 개"},
    {"sink", "어텐션 싱크"},
    {"streaming", "스트리밍"},
    {"starting", "시작 중"},
    {"roles, ablation and sink use the loaded checkpoint; the others train their own models",
     "역할, 헤드 끄기, 어텐션 싱크는 불러온 체크포인트를 쓰고, 나머지는 각자 모델을 새로 학습합니다"},
    {"table", "표"},
    {"experiment", "실험"},
    {"next-token loss by position (nats)", "위치별 다음 토큰 손실 (nats)"},
    {"This experiment measures the checkpoint on the induction task (BOS, then random tokens repeated); the language model on screen was trained on text, so its numbers would say nothing about it. Open a toy checkpoint (assets/models/induction) to run it.",
     "이 실험은 체크포인트를 인덕션 과제(BOS 뒤에 무작위 토큰을 반복)로 잰다. 화면의 언어 모델은 텍스트로 학습했기에 그 수치는 이 모델에 대해 아무것도 말해 주지 않는다. 실행하려면 작은 체크포인트(assets/models/induction)를 연다."},
    // model: the experiments' conclusions (model::conclusion_formats(), filled by tr_filled)
    {"%s of %s heads took a role during training that they did not have at initialisation; the loss only asked "
     "for the next token",
     "헤드 %s개가 초기화 때 없던 역할을 학습 중에 얻었다 (전체 %s개). 손실은 다음 토큰만 요구했을 뿐이다"},
    {"%s of %s heads are nearly free to remove, critical: %s (zero ablation, one at a time; base repeat "
     "accuracy %s%%)",
     "헤드 %s개는 지워도 거의 손해가 없고 (전체 %s개), %s개는 결정적이다 (0으로 절제, 하나씩; 기본 반복 구간 "
     "정확도 %s%%)"},
    {"pruning a trained 8-head model beat training the few heads from scratch in %s of %s sizes (repeat loss, same "
     "d_model and steps)",
     "학습된 8헤드 모델을 가지치기한 쪽이 적은 헤드로 처음부터 학습한 쪽을 %s번 이겼다 (크기 %s가지 중; 반복 "
     "구간 손실, 같은 d_model과 스텝)"},
    {"mean row entropy goes from %s nats at d_k=%s to %s at d_k=%s: smaller heads spread their weights more",
     "행 엔트로피 평균이 %s nats (d_k=%s)에서 %s (d_k=%s)로 바뀐다: 작은 헤드일수록 가중치를 더 넓게 편다"},
    {"mean row entropy goes from %s nats at d_k=%s to %s at d_k=%s: smaller heads are not flatter here",
     "행 엔트로피 평균이 %s nats (d_k=%s)에서 %s (d_k=%s)로 바뀐다: 여기서는 작은 헤드가 더 고르게 퍼지지 않는다"},
    {"8 heads beat 1 head at the same parameter count (repeat loss %s vs %s)",
     "같은 매개변수 수에서 헤드 8개가 1개를 이겼다 (반복 구간 손실 %s 대 %s)"},
    {"1 head matched or beat 8 heads at the same parameter count (repeat loss %s vs %s)",
     "같은 매개변수 수에서 헤드 1개가 8개만큼 또는 더 잘했다 (반복 구간 손실 %s 대 %s)"},
    {"%s of %s heads put at least half their weight on BOS",
     "헤드 %s개가 가중치의 절반 이상을 BOS에 둔다 (전체 %s개)"},
    {"at positions %s-%s the loss is %s nats with the full cache, %s once BOS is evicted (%s) and %s when it is "
     "kept (%s); repeat accuracy %s%% / %s%% / %s%%",
     "위치 %s-%s의 손실은 캐시 전체일 때 %s nats, BOS를 내보내면 %s (%s), BOS를 붙잡아 두면 %s (%s). 반복 구간 "
     "정확도 %s%% / %s%% / %s%%"},
    {"%s of %s heads take a role on repeated random tokens: %s induction, %s previous-token, %s first-token",
     "반복된 무작위 토큰에서 헤드 %s개가 역할을 맡는다 (전체 %s개): 인덕션 헤드 %s개, 앞 토큰 헤드 %s개, 첫 토큰 헤드 %s개"},
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

const char* tr(const char* english) { return tr_in(ui_lang(), english); }

const char* tr_in(Lang lang, const char* english) {
  if (lang == Lang::En) return english;
  static const std::unordered_map<std::string_view, const char*> table = [] {
    std::unordered_map<std::string_view, const char*> m;
    for (const auto& [en, ko] : kTable)
      if (placeholders(en) == placeholders(ko)) m.emplace(en, ko);  // else English: see trf()
    return m;
  }();
  const auto it = table.find(english);
  return it == table.end() ? english : it->second;
}

std::string tr_filled(const std::string& english_pattern, const std::vector<std::string>& values) {
  return model::fill_format(tr(english_pattern.c_str()), values);
}

namespace {

std::string vformat(const char* format, std::va_list args) {
  std::va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  std::string out;
  if (n > 0) {
    out.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data(), out.size(), format, again);
    out.resize(static_cast<size_t>(n));
  }
  va_end(again);
  return out;
}

}  // namespace

std::string trf(const char* english_format, ...) {
  std::va_list args;
  va_start(args, english_format);
  std::string out = vformat(tr(english_format), args);
  va_end(args);
  return out;
}

std::string trf_in(Lang lang, const char* english_format, ...) {
  std::va_list args;
  va_start(args, english_format);
  std::string out = vformat(tr_in(lang, english_format), args);
  va_end(args);
  return out;
}

std::vector<std::string> placeholders(std::string_view format) {
  std::vector<std::string> out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') continue;
    if (i + 1 < format.size() && format[i + 1] == '%') {
      ++i;
      continue;
    }
    // %[flags][width][.precision][length]conversion
    size_t j = i + 1;
    while (j < format.size() && std::strchr("-+ #0123456789.*hlLqjzt", format[j])) ++j;
    out.emplace_back(format.substr(i, j + 1 - i));
    i = j;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> translations() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [en, ko] : kTable) out.emplace_back(en, ko);
  return out;
}

std::vector<std::string> all_korean_strings() {
  std::vector<std::string> out;
  for (const auto& entry : kTable) out.emplace_back(entry.second);
  return out;
}

}  // namespace attnsim::app

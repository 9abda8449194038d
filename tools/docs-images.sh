#!/usr/bin/env bash
# Remakes every picture in docs/img/ from the build, so the README and docs/ show what the app
# shows today. Run it after a change to what a picture shows, then look at the pictures and
# commit them:
#   tools/docs-images.sh [BUILD_DIR]          (default build/: attnsim and attnsim-cli)
# Window pictures come from `attnsim --export` under Xvfb on a 1280x800 screen (a projector's
# size, and small files); slides and animations need no window. Each PNG is rewritten as a
# palette PNG (tools/shrink_png.py) and must stay under 300 KB, the GIF under 2 MB: the README
# is read over slow links too.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build}
app=$build/attnsim
[[ -x $app ]] || { echo "docs-images.sh: no $app; build it first (tools/setup.sh)" >&2; exit 1; }
out=docs/img
tmp=$(mktemp -d /tmp/attnsim-docs-images.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

window() {  # window NAME ARGS...: the whole window as docs/img/NAME.png
  local name=$1
  shift
  xvfb-run -a -s "-screen 0 1280x800x24" "$app" --export "$tmp/$name.png" "$@" >/dev/null
  /usr/bin/python3 tools/shrink_png.py "$tmp/$name.png" "$out/$name.png"
}

# The README's first picture: the start view (what `build/attnsim` opens on) on a 720p projector.
start() {  # start NAME ARGS...: the start view at 1280x720
  local name=$1
  shift
  xvfb-run -a -s "-screen 0 1280x720x24" "$app" --export "$tmp/$name.png" --scenario start --window 1280x720 "$@" >/dev/null
  /usr/bin/python3 tools/shrink_png.py "$tmp/$name.png" "$out/$name.png"
}
start start-view --lang en
start start-view-ko --lang ko
# The model view: the language model's heads on a sentence. A relative --model, so
# the panel shows no path of this machine.
window model-view --scenario model --model assets/models/wordnet-lm-s1 --lang en
window model-view-ko --scenario model --model assets/models/wordnet-lm-s1 --lang ko
# A lesson's first step beside the view it talks about.
window lesson-step --lesson lessons/02-split-heads.toml --lang en
# Decode with GQA: the cache strips and the stride-0 broadcast.
window decode-gqa --scenario decode-gqa --lang en

# The README's animation: the article's example through view and transpose.
xvfb-run -a -s "-screen 0 1280x800x24" "$app" --export-gif "$out/view-transpose.gif" \
  --scenario default --lang en --from q_proj --to q_heads --fps 12 --seconds 3 >/dev/null

# docs/lessons.md's slide: the masks lesson's step that compares one OR-ed fill with two fills.
xvfb-run -a -s "-screen 0 1280x800x24" "$app" --lesson lessons/05-masks.toml \
  --export-slides "$tmp/masks" --lang en >/dev/null
/usr/bin/python3 tools/shrink_png.py "$tmp/masks/04-or-vs-two-fills.png" "$out/lesson-masks-or-vs-two-fills.png"

status=0
for f in "$out"/*.png "$out"/*.gif; do
  size=$(stat -c %s "$f")
  limit=$((300 * 1000))
  [[ $f == *.gif ]] && limit=$((2 * 1000 * 1000))
  if ((size > limit)); then
    echo "docs-images.sh: $f is $size bytes, over $limit" >&2
    status=1
  fi
  echo "$f  $size bytes"
done
exit $status

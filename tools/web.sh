#!/usr/bin/env bash
# Builds build-web/attnsim.html: the app compiled to WebAssembly + WebGL 2 from the same
# sources as the desktop (engine, model, figure, lessons, views, the ImGui panels), with the
# wasm, the fonts, the lessons and the shipped checkpoints inside one file that opens from
# file:// with no server and no network.
#   tools/web.sh            install what is missing (Debian packages), fetch Dear ImGui's
#                           sources, build
#   ATTNSIM_WEB_OUT=DIR     builds into DIR instead (a second tree beside build-web/)
#   tools/web.sh --threads  the variant with wasm threads in build-web-threads/: attnsim.html,
#                           .js, .wasm and .worker.js side by side, for a host that sends the
#                           cross-origin isolation headers (tools/serve-isolated.py does);
#                           training and recomputes then run on threads, as on the desktop
# Dear ImGui 1.86's sources come from Debian's imgui source package (its binary package is a
# native libimgui.a only), fetched into build-web/ through a private apt configuration whose
# deb-src entry has the URIs and suites of the machine's own Debian entry; never committed.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${ATTNSIM_WEB_OUT:-build-web} threads=OFF
if [[ ${1:-} == --threads ]]; then
  out=build-web-threads threads=ON
elif [[ -n ${1:-} ]]; then
  echo "usage: tools/web.sh [--threads]" >&2
  exit 2
fi

packages=(emscripten binaryen libeigen3-dev libstb-dev nlohmann-json3-dev libtomlplusplus-dev
          fonts-nanum fonts-dejavu-core dpkg-dev cmake make
          g++ pkg-config libopenblas-dev libcli11-dev libcairo2-dev libgif-dev)  # the native attnsim-cli (below)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "the web build needs these Debian packages; run as root:" >&2
    echo "  apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# [SECTION] Dear ImGui's sources
imgui=build-web/imgui  # both variants compile the same copy
if [[ ! -f $imgui/imgui.cpp ]]; then
  apt_dir=$PWD/build-web/apt
  rm -rf "$apt_dir" && mkdir -p "$apt_dir"/{sources.list.d,lists/partial,archives/partial,src}
  sources=/etc/apt/sources.list.d/debian.sources
  [[ -f $sources ]] || { echo "web.sh: no $sources to take the Debian mirror from" >&2; exit 1; }
  sed 's/^Types: .*/Types: deb-src/' "$sources" >"$apt_dir/sources.list.d/debian-src.sources"
  : >"$apt_dir/sources.list"
  cat >"$apt_dir/apt.conf" <<CONF
Dir::Etc::SourceList "$apt_dir/sources.list";
Dir::Etc::SourceParts "$apt_dir/sources.list.d";
Dir::State::Lists "$apt_dir/lists";
Dir::Cache::Archives "$apt_dir/archives";
CONF
  APT_CONFIG=$apt_dir/apt.conf apt-get update -qq
  (cd "$apt_dir/src" && APT_CONFIG=$apt_dir/apt.conf apt-get source -qq imgui 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
  src_dir=$(find "$apt_dir/src" -maxdepth 1 -type d -name 'imgui-1.86*' | head -1)
  [[ -f $src_dir/imgui.cpp ]] || { echo "web.sh: apt-get source imgui gave no imgui.cpp" >&2; exit 1; }
  rm -rf "$imgui" && mkdir -p build-web && mv "$src_dir" "$imgui"
fi

# [SECTION] build
# emcc's JS optimizer loads acorn from Debian's node-acorn; the machine's node may not be
# Debian's, so point it there.
export NODE_PATH=/usr/share/nodejs
# The lessons' trained-model values (forward passes over the shipped checkpoints: seconds
# natively, about twenty in the page, where opening any lesson fills them all), computed by
# the native attnsim-cli from the same sources into the file the app's value cache reads
# (lessons/model_quantity.h). build/ when it is configured, else a CLI-only build here.
native=build
if [[ ! -f build/CMakeCache.txt ]]; then
  native=$out/native
  cmake -S . -B "$native" -DCMAKE_BUILD_TYPE=Release -DATTNSIM_GUI=OFF -DATTNSIM_CUDA=OFF -DBUILD_TESTING=OFF >/dev/null
fi
cmake --build "$native" -j"$(nproc)" --target attnsim-cli
mkdir -p "$out"
# tools/test.sh's lessons stage has just written them (ATTNSIM_MODEL_VALUES names the file):
# taken as they are rather than computed twice.
if [[ -n ${ATTNSIM_MODEL_VALUES:-} ]]; then
  [[ $ATTNSIM_MODEL_VALUES -ef $out/model-values.json ]] || cp "$ATTNSIM_MODEL_VALUES" "$out/model-values.json"
else
  "$native/attnsim-cli" lesson check --quiet --value-cache "$out/model-values.json" lessons
fi
# The page's files (lessons, checkpoints, fonts, those values) at the paths the app reads
# them from, as zips written into the page as text: the first view's, and the rest unpacked after it
# (tools/web_files.py says how and why).
nanum=/usr/share/fonts/truetype/nanum/NanumGothic.ttf dejavu=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
/usr/bin/python3 tools/web_files.py "$out/attnsim-files.part" "$nanum" "$dejavu" \
  "$out/model-values.json@/home/web_user/.cache/attnsim/model-values.json"
emcmake cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=Release -DATTNSIM_IMGUI_SRC="$PWD/$imgui" \
  -DATTNSIM_WEB_THREADS=$threads >/dev/null
cmake --build "$out" -j"$(nproc)" --target attnsim

# [SECTION] the page: Debian's HTML minifier crashes, so the shell is ours; the page's files
# go in as text, then the script (with the wasm inside, base64) whole; the threaded variant
# links its script files instead.
js=$out/attnsim.js
for f in "$js" src/app/hub_web.js; do
  grep -q '</script' "$f" && { echo "web.sh: $f contains '</script'" >&2; exit 1; }
done
tmp=$out/attnsim.html.tmp
{
  sed -n '1,/<!-- ATTNSIM_SCRIPT -->/p' src/app/shell.html | sed '$d'
  cat "$out/attnsim-files.part"
  printf '<script>\n'  # models by name: fetch and IndexedDB (src/app/hub_web.js), as written
  cat src/app/hub_web.js
  printf '</script>\n'
  if [[ $threads == ON ]]; then
    printf '<script src="attnsim.js"></script>\n'  # its workers load it again by this URL
  else
    printf '<script>\n'
    cat "$js"
    printf '\n</script>\n'
  fi
  sed -n '/<!-- ATTNSIM_SCRIPT -->/,$p' src/app/shell.html | sed '1d'
} >"$tmp"
mv "$tmp" "$out/attnsim.html"
echo "built $out/attnsim.html ($(du -h "$out/attnsim.html" | cut -f1))"

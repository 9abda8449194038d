#!/usr/bin/env bash
# Installs what attnsim needs from Debian 12 (apt-get, only what is missing) and builds it
# into build/. Run as root on a fresh machine; without root it prints the apt-get line.
#   tools/setup.sh            install + configure + build (Release)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make pkg-config
          libopenblas-dev libtomlplusplus-dev nlohmann-json3-dev libcli11-dev catch2
          libdnnl-dev  # oneDNN: a model's weights packed once (src/engine/packed_weights_dnnl.cpp)
          libimgui-dev libglfw3-dev libgl-dev libgl1-mesa-dri libstb-dev fonts-nanum fonts-dejavu-core
          libcurl4-openssl-dev libssl-dev  # the Hugging Face Hub downloads (src/hub)
          wordnet-base  # the language model's corpus (tools/corpus.py): its retraining check and tokenizer test
          bible-kjv bible-kjv-text jargon-text debian-handbook gnu-standards  # the mixed corpus (tools/corpus.py --mix)
          xvfb xauth libcairo2-dev libgif-dev poppler-utils libxml2-utils
          clang-14 libfuzzer-14-dev libclang-rt-14-dev time  # fuzzing (tools/fuzz.sh); peak RSS in tools/hostile.sh
          chromium chromium-driver python3-selenium firefox-esr)  # the browser test of the web build (tests/web)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "attnsim needs these Debian packages; run as root:" >&2
    echo "  apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${ATTNSIM_CMAKE_ARGS:-} >/dev/null
cmake --build build -j"$(nproc)"

#!/usr/bin/python3
"""The page's SIMD128 packed weight product, run as the page runs it: tests/web/
packed_simd128_check.cpp compiled with the web build's flags, linked against that tree's engine
library (packed_weights_simd128.cpp and all it needs), run by node, must print the plain loop's
bits for every shape (tests/test_packed_tile.cpp checks the same tiles natively with plain
floats; this checks the SIMD128 lanes). A tree built with wasm threads (tools/web.sh --threads)
gets the check with threads too, so a product's panels are split between them as in that page.
Usage: tests/web/test_packed_simd128.py BUILD_WEB_DIR     (after tools/web.sh)"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WEB = os.path.abspath(sys.argv[1])
engine = os.path.join(WEB, "src", "engine", "libattnsim_engine.a")
if not os.path.isfile(engine):
    sys.exit("no %s: run tools/web.sh first" % engine)
with open(os.path.join(WEB, "CMakeCache.txt")) as f:
    threads = "ATTNSIM_WEB_THREADS:BOOL=ON" in f.read()
out = os.path.join(tempfile.mkdtemp(prefix="attnsim-packed-simd128-"), "check.js")
env = dict(os.environ, NODE_PATH="/usr/share/nodejs")  # emcc's JS optimizer reads Debian's acorn (tools/web.sh)
subprocess.run(["em++", "-std=c++20", "-O2", "-msimd128", "-fwasm-exceptions", "-ffp-contract=off",
                "-I" + os.path.join(ROOT, "src"), os.path.join(ROOT, "tests", "web", "packed_simd128_check.cpp"), engine,
                "-sENVIRONMENT=node", "-sSINGLE_FILE=1", "-sALLOW_MEMORY_GROWTH=1", "-o", out] +
               (["-pthread", "-sPTHREAD_POOL_SIZE=4", "-sEXIT_RUNTIME=1"] if threads else []), check=True, env=env)
run = subprocess.run(["node", out], capture_output=True, text=True, timeout=300)
print(run.stdout + run.stderr, end="")
lines = run.stdout.splitlines()
split = not threads or "threads 1" not in lines  # with threads, more than one took part
sys.exit(0 if run.returncode == 0 and split and not any(l.startswith("FAIL") for l in lines) and
         sum(l.startswith("ok") for l in lines) == 14 else 1)

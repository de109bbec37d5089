#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what attnsel needs from Debian 12 packages; idempotent (apt runs only when something is missing).
set -euo pipefail

packages=(cmake ninja-build g++ clang libclang-rt-14-dev libfmt-dev nlohmann-json3-dev catch2 libcli11-dev
          libbenchmark-dev git
          # tests/consumers/pkg_config: an engine built without CMake
          pkg-config
          # guardrails: tools/check_format.sh (clang-format 14) and the tidy checks
          clang-format clang-tidy
          # the Python module (python/): Debian's interpreter headers, pybind11, pytest; pip/setuptools/wheel/venv
          # for `pip install --no-build-isolation .`
          python3-dev pybind11-dev python3-pytest python3-pip python3-setuptools python3-wheel python3-venv
          # tests/python/test_schema.py: docs/catalog.schema.json and the loader judge one corpus
          python3-jsonschema)
if [[ "${1:-}" == "--with-tools" ]]; then
  packages+=(valgrind)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"

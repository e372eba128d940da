#!/usr/bin/env bash
# Makes a container runtime usable for the tests, idempotently: Debian's podman with runc (crun
# fails on this kind of machine's hybrid cgroups), ulimits the machine allows, and small images
# built from Debian packages (no registry is reachable): localhost/hangar-busybox.
# Prints the CONTAINERS_CONF to export. Usage: containers.sh [STATE_DIR]
set -euo pipefail
state=${1:-${HANGAR_TEST_STATE:-/var/tmp/hangar-test}}
mkdir -p "$state"
conf="$state/containers.conf"

need_pkgs=()
command -v podman >/dev/null || need_pkgs+=(podman)
command -v runc >/dev/null || need_pkgs+=(runc)
[[ -x /bin/busybox || -x /usr/bin/busybox ]] || need_pkgs+=(busybox-static)
if ((${#need_pkgs[@]})); then
  if [[ $(id -u) != 0 ]]; then echo "containers.sh: need root to install ${need_pkgs[*]}" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

cat > "$conf.tmp" <<CONF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
mv "$conf.tmp" "$conf"
export CONTAINERS_CONF=$conf

if ! podman image exists localhost/hangar-busybox:latest; then
  root=$(mktemp -d)
  mkdir -p "$root/bin" "$root/tmp" "$root/etc"
  bb=$(command -v busybox)
  cp "$bb" "$root/bin/busybox"
  for c in $("$bb" --list); do [[ $c == busybox ]] || ln -sf busybox "$root/bin/$c"; done
  echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
  tar -C "$root" -cf "$root.tar" .
  podman import -q "$root.tar" localhost/hangar-busybox:latest >/dev/null
  rm -rf "$root" "$root.tar"
fi
# A Python image made of Debian's own python3 files (interpreter, standard library, the wheels
# venv needs, the shared libraries they link) and bash (job commands run in bash, as in Azure's
# images) on top of busybox: enough to build and run a managed environment inside an image. An
# image from before bash was added is rebuilt.
if podman image exists localhost/hangar-python:latest &&
  ! podman run --rm localhost/hangar-python:latest /bin/bash -c 'exec -a x sleep 0' >/dev/null 2>&1; then
  podman rmi -f localhost/hangar-python:latest >/dev/null
fi
if ! podman image exists localhost/hangar-python:latest; then
  py=$(readlink -f /usr/bin/python3); ver=$(basename "$py")        # python3.11
  root=$(mktemp -d)
  mkdir -p "$root/bin" "$root/usr/bin" "$root/usr/lib" "$root/usr/share" "$root/tmp" "$root/etc"
  cp "$(command -v busybox)" "$root/bin/busybox"
  for c in $("$root/bin/busybox" --list); do [[ $c == busybox ]] || ln -sf busybox "$root/bin/$c"; done
  cp "$py" "$root/usr/bin/$ver"; ln -s "$ver" "$root/usr/bin/python3"
  cp -a "/usr/lib/$ver" "$root/usr/lib/"; rm -rf "$root/usr/lib/$ver/test"
  [[ -d /usr/share/python-wheels ]] && cp -a /usr/share/python-wheels "$root/usr/share/"
  # Debian's own sleep too: busybox picks its applet by argv[0], which `exec -a NAME sleep`
  # (how tests mark a run's processes) changes.
  rm -f "$root/bin/bash" "$root/bin/sleep"; cp /bin/bash /bin/sleep "$root/bin/"
  for f in $(ldd "$py" /bin/bash /usr/lib/"$ver"/lib-dynload/*.so 2>/dev/null | awk '/=>/ {print $3} /ld-linux/ {print $1}' | sort -u); do
    mkdir -p "$root$(dirname "$f")"; cp -L "$f" "$root$f"
  done
  echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
  tar -C "$root" -cf - . | podman import -q - localhost/hangar-python:latest >/dev/null
  rm -rf "$root"
fi
podman run --rm localhost/hangar-busybox:latest true
podman run --rm localhost/hangar-python:latest python3 -c 'import venv'
podman run --rm localhost/hangar-python:latest bash -c 'exec -a x sleep 0'
echo "$conf"

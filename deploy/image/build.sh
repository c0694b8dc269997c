#!/usr/bin/env bash
# Build signoff's container image from Debian's packages, with no registry pull (docs/operations.md,
# "A container image"):
#   1. the wheel is built from this checkout, and every dependency the server lock file pins is
#      downloaded beside it, checked against the lock's hashes;
#   2. mmdebstrap makes a Debian root (Essential packages, python3, git, node, CA certificates) from the
#      Debian mirror, with apt's own signature checks; the wheels go into a virtual environment
#      /opt/signoff in that root (offline, hashes required; pip stays in it, since the verifier
#      installs each project's test environment with it), and an unprivileged user `signoff`
#      (uid 10001) owns the one writable folder, /var/lib/signoff;
#   3. podman imports the root as an image that runs `signoff serve` as that user.
# Usage (as root, with mmdebstrap and podman installed): deploy/image/build.sh [TAG]
# Environment: PYTHON (a CPython 3.11 with `build`, default .venv/bin/python), SUITE (default bookworm:
# its python3 is 3.11, the Python the lock files are resolved for), MIRROR (default Debian's), KEEP
# (a folder to keep the root's tarball in).
set -euo pipefail
cd "$(dirname "$0")/../.."

python=${PYTHON:-.venv/bin/python}
suite=${SUITE:-bookworm}
mirror=${MIRROR:-http://deb.debian.org/debian}
for tool in mmdebstrap podman; do
  command -v "$tool" >/dev/null || { echo "error: $tool is not installed" >&2
    echo "fix: apt-get install -y --no-install-recommends mmdebstrap podman runc" >&2; exit 2; }
done
# The wheels are chosen by this Python; the image runs Debian's python3, so both must be 3.11.
"$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || {
  echo "error: $python is not CPython 3.11, the Python of the image and of the lock files" >&2
  echo "fix: PYTHON=/path/to/python3.11 $0" >&2; exit 2; }
version=$("$python" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
tag=${1:-localhost/signoff:$version}

work=$(mktemp -d "${TMPDIR:-/tmp}/signoff-image-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/wheels"
"$python" -m build --wheel --no-isolation --outdir "$work/wheels" . >"$work/build.log" 2>&1 || {
  cat "$work/build.log" >&2; exit 1; }
"$python" -m pip download --quiet --require-hashes --only-binary=:all: --dest "$work/wheels" \
  -r requirements/server.lock
cp requirements/server.lock "$work/wheels/"

# The hooks run on the host with the root's path as $1; `chroot "$1"` runs the root's own programs.
# libstdc++6: google-re2's wheel links it (manylinux wheels expect the system's C++ runtime). nodejs:
# the incident's fixture has a JavaScript side (ShopCo), which `signoff demo` runs.
mmdebstrap --variant=essential --include=python3,python3-venv,libstdc++6,git,ca-certificates,nodejs \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --customize-hook="mkdir \"\$1/tmp/wheels\" && cp -a \"$work/wheels/.\" \"\$1/tmp/wheels/\"" \
  --customize-hook='chroot "$1" python3 -m venv /opt/signoff' \
  --customize-hook='chroot "$1" /opt/signoff/bin/pip install --quiet --no-cache-dir --no-index --find-links /tmp/wheels --require-hashes -r /tmp/wheels/server.lock' \
  --customize-hook='chroot "$1" sh -c "/opt/signoff/bin/pip install --quiet --no-cache-dir --no-index --no-deps /tmp/wheels/signoff-*.whl"' \
  --customize-hook='rm -rf "$1/tmp/wheels" "$1/root/.cache"' \
  --customize-hook='echo "signoff:x:10001:10001:signoff:/var/lib/signoff:/usr/sbin/nologin" >>"$1/etc/passwd"' \
  --customize-hook='echo "signoff:x:10001:" >>"$1/etc/group"' \
  --customize-hook='install -d -o 10001 -g 10001 -m 0750 "$1/var/lib/signoff"' \
  "$suite" "$work/root.tar" "$mirror"
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$work/root.tar" "$KEEP/signoff-root.tar"; fi

# No spaces inside a --change value: podman splits it on them.
podman import --quiet \
  --change 'USER=10001:10001' \
  --change 'WORKDIR=/var/lib/signoff' \
  --change 'ENV=PATH=/opt/signoff/bin:/usr/local/bin:/usr/bin:/bin' \
  --change 'ENV=PYTHONDONTWRITEBYTECODE=1' \
  --change 'VOLUME=/var/lib/signoff' \
  --change 'EXPOSE=8787' \
  --change 'ENTRYPOINT=["/opt/signoff/bin/signoff"]' \
  --change 'CMD=["serve","--host","0.0.0.0","--port","8787"]' \
  "$work/root.tar" "$tag" >/dev/null
echo "$tag"

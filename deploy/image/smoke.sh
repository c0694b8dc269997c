#!/usr/bin/env bash
# Smoke-test signoff's container image (docs/operations.md, "A container image"): run as the image's
# unprivileged user with a read-only root and no capabilities, it runs `signoff demo` (the real
# sandbox, and test environments installed from the package index, included), then `signoff serve
# --demo` on a Unix socket in its data volume, with no network, answers /health and /ready, and its
# printed sign-in link opens the demo's bug board.
# Usage (as root, with podman): deploy/image/smoke.sh TAG
set -euo pipefail
tag=${1:?usage: $0 TAG}
fail() { echo "error: image smoke test: $*" >&2; exit 1; }

data=$(mktemp -d "${TMPDIR:-/tmp}/signoff-image-data-XXXXXX")
name="signoff-smoke-$$"
trap 'podman rm --force --time 0 "$name" >/dev/null 2>&1 || true; rm -rf "$data" "$data.seccomp.json"' EXIT
chown 10001:10001 "$data"

# How the image is meant to be run: its own uid, nothing writable but the data volume (and the /tmp
# and /run tmpfs podman gives a read-only container), no capabilities, no privilege gain, explicit
# resource limits. unmask=/proc/*: the sandbox (bubblewrap, in a user namespace) mounts a fresh /proc
# for each run, which the kernel refuses while parts of the container's /proc are masked; the user is
# not root and holds no capability, so the unmasked files stay closed to it.
flags=(--read-only --user 10001:10001 --cap-drop all --security-opt no-new-privileges
       --security-opt 'unmask=/proc/*' --ulimit nofile=16384:16384 --ulimit nproc=16384:16384)
# seccomp: podman's default profile, but the sandbox may name its own UTS namespace (seccomp.sh says why).
"$(dirname "$0")/seccomp.sh" >"$data.seccomp.json"
flags+=(--security-opt "seccomp=$data.seccomp.json")
# crun cannot run on a hybrid cgroups v1/v2 host (Debian 12's podman): use runc there.
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then flags+=(--runtime runc); fi
run=(podman run "${flags[@]}" --volume "$data:/var/lib/signoff")

[ "$(podman image inspect --format '{{.Config.User}}' "$tag")" = 10001:10001 ] || fail "the image's user is not 10001"
"${run[@]}" --network none --rm --entrypoint /bin/sh "$tag" -c '
  [ "$(id -u)" = 10001 ] || { echo "runs as uid $(id -u)"; exit 1; }
  touch /opt/signoff/probe 2>/dev/null && { echo "the root is writable"; exit 1; }
  touch /var/lib/signoff/probe && rm /var/lib/signoff/probe' || fail "user or read-only root"
"${run[@]}" --network none --rm "$tag" --version

# The verifier installs each project's test environment (pytest and its requirements) with pip from
# the package index: the demo needs to reach it. (The host's network: Debian 12's podman has no
# container network plugin installed here; the tests themselves run without any network.) Where the
# index is reached through a proxy with its own certificate authority, the host names its bundle in
# PIP_CERT: the container gets that file, read-only, for pip.
index=(--network host)
if [ -n "${PIP_CERT:-}" ]; then index+=(--volume "$PIP_CERT:/etc/signoff-index-ca.crt:ro" --env PIP_CERT=/etc/signoff-index-ca.crt); fi
"${run[@]}" --rm "${index[@]}" "$tag" demo --json >"$data/demo.json" || fail "signoff demo failed: $(tail -c 2000 "$data/demo.json")"
echo "signoff demo: ok"

"${run[@]}" --network none --detach --name "$name" "$tag" serve --demo --unix-socket /var/lib/signoff/signoff.sock >/dev/null
get() { curl --silent --show-error --unix-socket "$data/signoff.sock" "$@"; }
for _ in $(seq 120); do  # a fresh container imports the app (seconds); give up after a minute
  get --fail --output /dev/null http://signoff/health 2>/dev/null && break
  podman container exists "$name" && [ "$(podman inspect --format '{{.State.Running}}' "$name")" = true ] ||
    fail "signoff serve exited: $(podman logs "$name" 2>&1 | tail -20)"
  sleep 0.5
done
health=$(get http://signoff/health) && [ "$(jq -r .ok <<<"$health")" = true ] || fail "/health said $health"
ready=$(get http://signoff/ready) && [ "$(jq -r .ready <<<"$ready")" = true ] || fail "/ready said $ready"
echo "health: $health"
echo "ready: $ready"

code=$(podman logs "$name" 2>/dev/null | sed -n 's|.*/signin/link#\(sol_[^ ]*\)$|\1|p' | head -1)
[ -n "$code" ] || fail "no sign-in link printed: $(podman logs "$name" 2>&1 | tail -20)"
jar="$data/cookies"
csrf=$(get -c "$jar" http://signoff/signin/link | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -1)
status=$(get -b "$jar" -c "$jar" -o /dev/null -w '%{http_code}' --data-urlencode "csrf=$csrf" \
  --data-urlencode "code=$code" http://signoff/signin/link)
[ "$status" = 303 ] || fail "signing in with the printed link answered $status"
board=$(get -b "$jar" --fail http://signoff/bugs) || fail "/bugs did not answer 200"
grep -q "Coupon larger than the cart gives a negative total" <<<"$board" || fail "/bugs does not show the demo's bug"
echo "signed in with the printed link; /bugs shows the demo's bugs"
podman rm --force --time 0 "$name" >/dev/null

# The image's own command (`serve --host 0.0.0.0 --port 8787`) on a fresh volume, asked from inside
# the container (no network: its loopback only).
fresh="$data/fresh"
install -d -o 10001 -g 10001 "$fresh"
podman run "${flags[@]}" --volume "$fresh:/var/lib/signoff" --network none --detach --name "$name" "$tag" >/dev/null
probe='import json, sys, urllib.request
try:
    print(json.load(urllib.request.urlopen("http://127.0.0.1:8787/health", timeout=5))["ok"])
except OSError:
    sys.exit(1)'
for _ in $(seq 120); do
  answer=$(podman exec "$name" /opt/signoff/bin/python3 -c "$probe" 2>/dev/null) && break
  [ "$(podman inspect --format '{{.State.Running}}' "$name")" = true ] ||
    fail "the image's command exited: $(podman logs "$name" 2>&1 | tail -20)"
  sleep 0.5
done
[ "${answer:-}" = True ] || fail "the image's command did not answer /health on port 8787"
echo "the image's own command answers /health on port 8787"
echo "image smoke test: ok ($tag)"

#!/usr/bin/env bash
# Print the seccomp profile signoff's container runs with: podman's default profile (containers-common,
# read from this host), with one change: sethostname is allowed without CAP_SYS_ADMIN. The sandbox
# (bubblewrap) names the host "sandbox" in the UTS namespace it creates for each run; the default profile
# refuses that call to a container without CAP_SYS_ADMIN, and the run fails ("Can't set hostname").
# In the container's own namespace the call still fails: the process holds no capability there.
# Usage: deploy/image/seccomp.sh > seccomp.json; podman run --security-opt seccomp=seccomp.json ...
set -euo pipefail
default=${1:-/usr/share/containers/seccomp.json}
python3 - "$default" <<'PY'
import json
import sys

profile = json.load(open(sys.argv[1]))
rules = []
for rule in profile["syscalls"]:
    names = [n for n in rule["names"] if n != "sethostname"]
    if names:
        rules.append({**rule, "names": names})
rules.append({"names": ["sethostname"], "action": "SCMP_ACT_ALLOW"})
profile["syscalls"] = rules
json.dump(profile, sys.stdout, indent=1)
print()
PY

#!/usr/bin/env bash
# Checks the shipped systemd unit for elasticd without starting it (this machine's PID 1 is not
# systemd): `systemd-analyze verify` accepts it with the built binary, every path elasticd writes
# by default (etc/elasticd.toml) is writable under ProtectSystem=strict, and the capabilities are
# the three cleanup needs (W6). Usage: check_systemd_unit.sh UNIT ELASTICD ELASTICD_TOML.
# Exit 77 (skipped) without systemd-analyze.
set -euo pipefail
unit=$1 elasticd=$2 toml=$3
fail() { echo "FAIL: $*"; exit 1; }
value() { sed -n "s/^$1=//p" "$unit" | tail -n1; }
toml_value() { sed -n "s/^$1 *= *\"\([^\"]*\)\".*/\1/p" "$toml" | head -n1; }

# 1. systemd's own parser: no unknown key or bad value, and the commands resolve.
if command -v systemd-analyze >/dev/null; then
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  sbin=$(sed -n 's|^ExecStart=\([^ ]*\)/elasticd .*|\1|p' "$unit")
  [[ -n $sbin ]] || fail "no ExecStart=.../elasticd line"
  sed "s|$sbin/elasticd|$elasticd|g" "$unit" >"$work/elasticd.service"
  out=$(systemd-analyze verify "$work/elasticd.service" 2>&1) || fail "systemd-analyze verify: $out"
  [[ -z $out ]] || fail "systemd-analyze verify warns: $out"
  echo "systemd-analyze verify: clean"
else
  echo "systemd-analyze not installed: unit syntax not verified"; skip=1
fi

# 2. ProtectSystem=strict makes everything read-only but ReadWritePaths, RuntimeDirectory
# (/run/NAME) and StateDirectory (/var/lib/NAME): every default path elasticd writes is there.
[[ $(value ProtectSystem) == strict ]] || fail "ProtectSystem is not strict"
writable=" $(value ReadWritePaths | sed 's/\(^\| \)-/\1/g') /run/$(value RuntimeDirectory) /var/lib/$(value StateDirectory) "
covered() {
  local p=$1 w
  for w in $writable; do [[ $p == "$w" || $p == "$w"/* ]] && return 0; done
  return 1
}
socket=$(toml_value socket) state=$(toml_value state_dir) base=$(toml_value checkpoint_base)
log=$(toml_value log_file) munge=$(toml_value munge_socket)
[[ -n $socket && -n $state && -n $base ]] || fail "cannot read defaults from $toml"
covered "$(dirname "$socket")" || fail "socket directory $(dirname "$socket") not writable"
covered "$state" || fail "state_dir $state not writable"
covered "$base" || fail "checkpoint_base $base not writable: cleanup would fail (W6)"
[[ -z $log ]] || covered "$(dirname "$log")" || fail "log_file $log not writable"
covered "$(dirname "${munge:-/run/munge/munge.socket.2}")" || fail "munge socket not reachable"
[[ $(value StateDirectoryMode) == 0700 ]] || fail "StateDirectoryMode is not 0700"
[[ $(value RuntimeDirectoryMode) == 0755 ]] || fail "RuntimeDirectoryMode is not 0755"
[[ $(value UMask) == 0027 ]] || fail "UMask is not 0027"
echo "writable: $writable covers socket, state_dir, checkpoint_base, log_file, munge"

# 3. Capabilities: exactly what removing users' 0700 trees needs (W6), nothing else.
caps=$(value CapabilityBoundingSet | tr ' ' '\n' | sort | tr '\n' ' ')
[[ $caps == "CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER " ]] || fail "capabilities: $caps"
echo "capabilities: $caps"
[[ -z ${skip:-} ]] || exit 77

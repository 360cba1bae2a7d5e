#!/usr/bin/env bash
# Checks that spank_elastic.so exports exactly Slurm's plugin symbols and is hardened.
set -euo pipefail
so=$1
exports=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
unexpected=$(grep -vE '^(plugin_(name|type|version)|spank_plugin_version|slurm_spank_[a-z_]+)$' <<<"$exports" || true)
if [[ -n $unexpected ]]; then
  echo "unexpected exported symbols:"; echo "$unexpected"; exit 1
fi
for sym in plugin_name plugin_type plugin_version slurm_spank_init slurm_spank_init_post_opt \
           slurm_spank_user_init; do
  grep -qx "$sym" <<<"$exports" || { echo "missing export: $sym"; exit 1; }
done
readelf -d "$so" | grep -q 'BIND_NOW' || { echo "not linked with -z now"; exit 1; }
readelf -lW "$so" | grep -q 'GNU_RELRO' || { echo "no RELRO segment"; exit 1; }
if readelf -sW "$so" | grep -q '__stack_chk_fail'; then :; else echo "note: no stack protector calls"; fi
echo "exports ok: $(wc -l <<<"$exports") symbols"

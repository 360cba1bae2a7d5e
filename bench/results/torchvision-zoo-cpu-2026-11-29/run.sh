#!/bin/bash
# For each scripted model: W = 1, 2, 3 (E = 4) -> params_sha256 each; report equal or not.
# Usage: run.sh AGENT DIR [MODEL...]   (DIR as written by make.py)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
agent=$(realpath "${1:?agent binary}")
cd "${2:?directory make.py wrote}"
shift 2
for m in ${@:-mobilenet_v2 shufflenet squeezenet efficientnet_b0 mnasnet regnet densenet vgg11_bn vit_tiny}; do
  hashes=()
  for w in 1 2 3; do
    out=$(timeout 600 mpirun --oversubscribe -np $w $agent train --config $m.toml 2>&1)
    h=$(grep -o 'params_sha256=[0-9a-f]*' <<<"$out" | tail -1)
    [[ -z $h ]] && { echo "$m W=$w: no hash"; tail -5 <<<"$out"; }
    hashes+=("${h:14:12}")
  done
  echo "$m: ${hashes[*]}"
done

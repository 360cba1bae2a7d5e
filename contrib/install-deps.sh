#!/usr/bin/env bash
# Installs every Debian 12 package slurm-elastic needs to build, test and run (--demo: to build
# and run it, without the tests' and benchmarks' packages). Idempotent.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps.sh: must run as root (it calls apt-get install); try: sudo $0" >&2
  exit 1
fi

# What building and running the plugin, elasticd and elastic-agent needs (the demo's list).
packages=(
  # build
  build-essential cmake pkg-config git ca-certificates
  # libraries
  libtorch-dev libtomlplusplus-dev libboost-program-options-dev libboost-dev
  zlib1g-dev libmunge-dev libslurm-dev nlohmann-json3-dev libssl-dev libnlopt-dev
  # Slurm cluster with accounting (repeated resizes need slurmdbd)
  slurmctld slurmd slurm-client slurmdbd slurm-wlm-mysql-plugin mariadb-server munge
  # MPI with PMIx
  openmpi-bin libopenmpi-dev libpmix-dev
  # data: Fashion-MNIST (fmnist_cnn) and the fortune files (the gpt model's text corpus)
  dataset-fashion-mnist fortunes-min
  # tools used by scripts and tests
  procps iproute2 python3
)
# What the tests and benchmarks need on top (all but --demo).
test_packages=(
  # the test suites and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # the libFuzzer targets (tests/fuzz, built and run by the test suite)
  clang libclang-rt-14-dev
  # "bring your own model": Debian's PyTorch 1.13 (the LibTorch of libtorch-dev) scripts the
  # modules and writes the shards the tests, the example (contrib/export-example.py) and
  # bench/vs_pytorch.sh use; torchrun is its DDP baseline
  python3-torch python3-torchvision
  # security tests: strace (registry saves), systemd-analyze (the shipped unit file)
  strace systemd
)

case ${1:-} in
  --demo) ;;  # contrib/quickstart.sh: it builds without tests and benchmarks
  "") packages+=("${test_packages[@]}") ;;
  *) echo "usage: $0 [--demo]  (--demo: only what the demo builds and runs)" >&2; exit 1 ;;
esac

export DEBIAN_FRONTEND=noninteractive
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps.sh: all ${#packages[@]} packages already installed"
  exit 0
fi
echo "install-deps.sh: installing ${#missing[@]} packages: ${missing[*]}"
apt-get update -qq
# policy-rc.d keeps Debian's postinst from starting system-wide slurmctld/munge/mariadb:
# the local cluster runs its own private daemons and must not collide with them.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && created_policy=1
fi
trap '[[ $created_policy -eq 1 ]] && rm -f "$policy"' EXIT
apt-get install -y -q --no-install-recommends \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"
echo "install-deps.sh: done"

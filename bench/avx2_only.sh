#!/usr/bin/env bash
# Run a command with the kernels an AVX2-only CPU gets (no AVX-512, VNNI or AMX), on a CPU
# that has more and lists cpuid_fault: see bench/avx2_only.c.
#   bash bench/avx2_only.sh python bench/levers.py --repo JELLYFIN --texts 300
set -euo pipefail
grep -qw cpuid_fault /proc/cpuinfo || { echo "avx2_only: no cpuid_fault in /proc/cpuinfo" >&2; exit 3; }
shim="${TMPDIR:-/tmp}/avx2_only.so"
gcc -O2 -shared -fPIC -o "$shim" "$(dirname "$0")/avx2_only.c"
# glibc picks its string functions before the shim loads: tell it too
export GLIBC_TUNABLES="glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD"
LD_PRELOAD="$shim${LD_PRELOAD:+:$LD_PRELOAD}" exec "$@"

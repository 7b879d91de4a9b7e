#!/bin/sh
# check-sim.sh SIMDIR - every base name in sim_api.def resolves through cuGetProcAddress_v2 and
# its implementation symbol is exported by libcuda.so.1 (make check-sim).
dir=${1:-build/sim}
rc=0
exports=$(nm -D --defined-only "$dir/libcuda.so.1" | awk '{print $3}')
for fn in $(sed -n 's/^SIM_FN([^,]*, *[0-9]*, *\([A-Za-z0-9_]*\))/\1/p' "$(dirname "$0")"/sim_api*.def); do
    case $fn in sim_getproc_v1) fn=cuGetProcAddress ;; esac
    printf '%s\n' "$exports" | grep -qx "$fn" || { echo "not exported: $fn"; rc=1; }
done
[ $rc -eq 0 ] && echo "check-sim: table and exports agree"
exit $rc

#!/bin/sh
# Usage: run-check.sh BUILD_DIR CLASS KERNEL...
# Runs each kernel binary in turn (one at a time), keeps its output in
# BUILD_DIR/logs/KERNEL.log and prints one summary line per kernel.
# Exits 1 if any kernel is not SUCCESSFUL (or exits non-zero).
# If BENCH_NAS_LAUNCH is set (e.g. "mpirun -np 2"), each binary is run under it.
build=$1; class=$2; shift 2
mkdir -p "$build/logs"
fail=0
printf '%-6s %-5s %-8s %-13s %10s %10s\n' kernel class lang verification seconds wall_s
for k in "$@"; do
    log="$build/logs/$k.log"
    case $k in *_f) lang=Fortran ;; *_mpi) lang=C+MPI ;; *) lang=C ;; esac
    t0=$(date +%s%N 2>/dev/null)
    $BENCH_NAS_LAUNCH "$build/$k" > "$log" 2>&1
    rc=$?
    t1=$(date +%s%N 2>/dev/null)
    case "$t0$t1" in
        *[!0-9]*|'') wall='?' ;;
        *) wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') ;;
    esac
    t=$(sed -n 's/^ *Time in seconds *= *//p' "$log" | head -n 1)
    if grep -q '^ *Verification *= *SUCCESSFUL' "$log" && [ "$rc" -eq 0 ]; then
        v=SUCCESSFUL
    else
        v=UNSUCCESSFUL
        fail=1
    fi
    printf '%-6s %-5s %-8s %-13s %10s %10s\n' "$(echo "${k%_f}" | sed 's/_mpi$//' | tr a-z A-Z)" "$class" "$lang" "$v" "${t:-?}" "$wall"
    [ "$v" = SUCCESSFUL ] || echo "       (exit code $rc, see $log)"
done
exit $fail

#!/bin/sh
# tg/dist.h across processes (tests/test_dist.c), under mpirun:
#  1. the suite on 2 ranks (--oversubscribe: CI machines may have one
#     core) and alone (a job of one, no mpirun);
#  2. a rank that never joins: the other fails after TG_DIST_TIMEOUT
#     with a message, its finalize refuses to wait, and the job ends;
#  3. a rank that dies: mpirun stops the job and says which rank.
# Skips (77) when mpirun is missing.
set -u
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$log"; exit 1; }
mpirun=${MPIRUN:-mpirun}
command -v "$mpirun" >/dev/null 2>&1 ||
	{ echo "SKIP: no mpirun (apt install openmpi-bin)"; exit 77; }
bin=tests/test_dist
log="$TG_TEST_TMP/dist.$$.log"
trap 'rm -f "$log"' EXIT
# CI runs as root, which Open MPI refuses unless told; containers often
# forbid the cross-memory attach its shared-memory transport tries.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
# Under LeakSanitizer: Open MPI unloads the components it does not use
# (at init) and the rest at finalize, so what they keep has no names
# that tests/lsan.supp could match; the leak check is off here (ASan's
# other checks stay on).  libtgcore-dist's own leaks: run test_dist
# alone under valgrind, which names them (HACKING.md).
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}leak_check_at_exit=0"
export LSAN_OPTIONS
# CPU:1 for the test of another device; a failed assertion on one rank
# must not leave the other waiting for minutes
export TG_CPU_DEVICES=2 TG_DIST_TIMEOUT=60
run() { # seconds, then the command; prints the exit status
	start=$(date +%s)
	timeout "$@" >"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
}

run 300 "$mpirun" -np 2 --oversubscribe "$bin"
[ $rc -eq 0 ] || fail "suite on 2 ranks (exit $rc)"
grep -q '100%: Checks: 9, Failures: 0, Errors: 0' "$log" ||
	fail "suite on 2 ranks: not every check ran and passed"
echo "2 ranks: $(grep -c '100%: Checks: 9' "$log") ranks passed"

run 300 "$bin"
[ $rc -eq 0 ] || fail "suite alone (exit $rc)"
grep -q '100%: Checks: 9, Failures: 0, Errors: 0' "$log" ||
	fail "suite alone"
echo "1 rank: passed"

TG_DIST_TIMEOUT=2 run 120 "$mpirun" -np 2 --oversubscribe "$bin" --stuck
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "stuck rank: exit $rc"
grep -q 'rank 0: all-reduce: TG_ETIMEOUT: dist all-reduce: not every rank took part within 2 s' "$log" ||
	fail "stuck rank: no timeout message"
grep -q 'rank 0: barrier: TG_ECOMM: dist barrier: the job broke earlier' "$log" ||
	fail "stuck rank: a later call did not fail at once"
grep -q 'rank 0: finalize: TG_ECOMM: dist finalize: MPI_Finalize skipped' "$log" ||
	fail "stuck rank: finalize"
[ "$took" -lt 60 ] || fail "stuck rank: took $took s"
echo "stuck rank: rank 0 timed out, the job ended after $took s"

TG_DIST_TIMEOUT=600 run 120 "$mpirun" -np 2 --oversubscribe "$bin" --die
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "dead rank: exit $rc"
grep -q 'rank 1' "$log" && grep -qi 'signal 9' "$log" ||
	fail "dead rank: mpirun did not say which rank died"
[ "$took" -lt 60 ] || fail "dead rank: took $took s"
echo "dead rank: mpirun stopped the job after $took s"
echo "dist: OK"

#!/usr/bin/env bash
# Times the stages of `make test`. `stage.sh --start` begins the table
# (target/test-stages.txt); `stage.sh NAME [VAR=VALUE…] COMMAND…` runs one stage (through
# env, so that it may begin with variables) and adds its line; `stage.sh --report` prints
# the table and the total. A failing stage prints the table so far, then exits with the
# command's status.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
table=target/test-stages.txt

report() {
    local start
    start=$(sed -n 's/^start //p' "$table")
    echo "---- make test: time per stage (wall, and CPU of its processes) ----"
    grep -v '^start ' "$table"
    awk -v wall=$(($(date +%s) - ${start:-$(date +%s)})) '$1 != "start" { cpu += $4 }
        END { printf "%-14s %6ss  cpu %6ss\n", "total", wall, cpu }' "$table"
}

case ${1:-} in
    --start)
        mkdir -p target
        echo "start $(date +%s)" >"$table"
        ;;
    --report) report ;;
    '') echo "usage: $0 --start | --report | NAME COMMAND…" >&2; exit 2 ;;
    *)
        name=$1
        shift
        [ -f "$table" ] || { mkdir -p target; echo "start $(date +%s)" >"$table"; }
        t0=$(date +%s)
        env "$@"
        rc=$?
        # CPU seconds (user + system) of the stage's processes: on a shared machine the
        # wall time depends on the load, the CPU time much less.
        times >"$table.times" # the builtin, in this shell: its second line is the children's
        cpu=$(awk 'NR == 2 {
            for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += 60 * t[1] + t[2] }
            printf "%.0f", s }' "$table.times")
        rm -f "$table.times"
        printf '%-14s %6ss  cpu %6ss%s\n' "$name" $(($(date +%s) - t0)) "$cpu" \
            "$([ $rc = 0 ] || echo "  FAILED ($rc)")" >>"$table"
        if [ $rc != 0 ]; then report; fi
        exit $rc
        ;;
esac

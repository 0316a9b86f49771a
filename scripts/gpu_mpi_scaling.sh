#!/usr/bin/env bash
# Strong scaling of the MPI examples over the GPUs of one host, against one GPU in the same
# run: run on the device machine from the repository root, after scripts/gpu_stage.sh
# staged the library (.gpu/lib). The examples are built here with the machine's mpicc
# against include/ and the staged library (the staging machine need not have MPI's headers).
#
#   CASES=xcorr674,xcorr2000 bash scripts/gpu_mpi_scaling.sh      # a 2- or 4-GPU machine
#   CASES=wavepacket RANKS="1 4" bash scripts/gpu_mpi_scaling.sh   # a 4-GPU machine
#
# Cases (CASES, comma-separated; default all three):
#   xcorr674    a day of 674 synthetic stations at 1 Hz (86,400 samples, NoisePy's
#               settings: the xcorr benchmark's day), xcorr_network with each rank making
#               the spectra its blocks need (EXCHANGE=1: --exchange, each group made once
#               and its spectra sent through the host to the ranks that need them)
#   xcorr2000   the same for 2,000 stations
#   xcorrN      the same for N stations (N ≥ 2; the files of one rank hold N(N−1)/2 pairs of
#               1.6 kB each: 12.8 GB for 4,000)
#   wavepacket  a 512 × 512 × 256 volume in 128³ tiles (32 tiles), f32, the layout's
#               defaults, wavepacket_volume --no-output (VOLUME and TILE change the sizes;
#               the wave-packet paper's 1024 × 1024 × 512 in 256³ tiles is refused at the
#               volume's creation: a 256³ tile's windows hold 5.2 G lattice points, more
#               than one USFFT plan takes)
# Ranks (RANKS, default "1 2 4", those above the GPU count dropped): one rank per GPU,
# device = the rank's index on the node. Each step has a time limit (STEP_TIMEOUT, 540 s),
# cut to what is left of BUDGET (570 s from the start; a step with under 30 s left is
# skipped), since one device call may run 600 s.
#
# Prints and writes to $OUT (default out/gpu_mpi) a table per case: ranks, plan seconds
# (the plan's creation: the correlation plan, or the volume's tile plan and its
# correction filter; NVRTC is warmed up first), transform seconds (preprocessing, exchange
# and correlation; the tiles' forward), write seconds, total wall seconds, and the
# speed-ups of the transform and of the whole run over one rank. Targets: ≥ 1.8 on 2
# GPUs, ≥ 3.4 on 4. Every step's log is in $OUT/logs.tgz.
#
# SMOKE=1 runs the same steps on the CPU with tiny cases, oversubscribed ranks and the
# library of target/release: a check of the script itself on a machine without GPUs.
set -uo pipefail
OUT=${OUT:-out/gpu_mpi}
CASES=${CASES:-xcorr674,xcorr2000,wavepacket}
RANKS=${RANKS:-1 2 4}
exchange=()
[ "${EXCHANGE:-0}" = 1 ] && exchange=(--exchange)
STEP_TIMEOUT=${STEP_TIMEOUT:-540}
BUDGET=${BUDGET:-570}
mkdir -p "$OUT"
: >"$OUT/summary.txt"
: >"$OUT/table.md"
LOGS=$(mktemp -d)
WORK=${WORK:-$(mktemp -d)}
trap 'tar czf "$OUT/logs.tgz" -C "$LOGS" . 2>/dev/null; rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
say() { echo "gpu_mpi_scaling: $*" | tee -a "$OUT/summary.txt"; }
if [ "${SMOKE:-0}" = 1 ]; then
    lib=$PWD/target/release backend=cpu gpus=4
    xcorr_day=(--samples 21600) xcorr_size=(12 24)
    volume=(--volume 64x64x32 --tile 32x32x32 --directions 6 --levels 1 --cutoff 0.2)
    warm=("${volume[@]}")
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
else
    [ -d .gpu ] || tar xJf .gpu-pack/gpu.tar.xz
    lib=$PWD/.gpu/lib backend=cuda
    xcorr_day=(--samples 86400) xcorr_size=(674 2000)
    volume=(--volume "${VOLUME:-512x512x256}" --tile "${TILE:-128x128x128}")
    warm=(--volume 64x64x64 --tile 32x32x32)
    export SEISGPU_REQUIRE_CUDA=1
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    nvidia-smi --query-gpu=index,name,memory.total --format=csv >"$OUT/device.txt" 2>&1
fi
export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"
say "$gpus GPUs; $(mpirun --version 2>&1 | head -n 1)"

# ---- build ---------------------------------------------------------------------------------
bin=$WORK/bin
mkdir -p "$bin"
build() { # build NAME SOURCES…
    local name=$1; shift
    ${MPICC:-mpicc} -std=c11 -O2 -Wall -Iinclude "${@/#/examples/mpi/}" -o "$bin/$name" \
        -L"$lib" -lseisgpu -Wl,-rpath,"$lib" -lm >"$LOGS/build_$name.log" 2>&1 ||
        { say "could not build $name:"; cat "$LOGS/build_$name.log"; exit 1; }
}
build xcorr_network xcorr_network.c xcorr_args.c xcorr_exchange.c xcorr_input.c \
    xcorr_layout.c xcorr_output.c xcorr_stages.c xcorr_write.c mpi_common.c
build wavepacket_volume wavepacket_volume.c wavepacket_args.c wavepacket_write.c \
    wavepacket_check.c mpi_common.c

mpi=(mpirun)
if mpirun --version 2>&1 | grep -q "Open MPI"; then
    mpi+=(--bind-to none -x LD_LIBRARY_PATH)
    [ "${SMOKE:-0}" = 1 ] && mpi+=(--oversubscribe) || mpi+=(-x SEISGPU_REQUIRE_CUDA)
fi

# ---- steps ---------------------------------------------------------------------------------
left() { echo $((BUDGET - SECONDS)); }
step() { # step NAME RANKS PROGRAM ARGS…: runs under the time limit; 0 if it finished
    local name=$1 n=$2; shift 2
    local limit=$STEP_TIMEOUT
    [ "$(left)" -lt "$limit" ] && limit=$(($(left) - 10))
    if [ "$limit" -lt 30 ]; then
        say "$name: skipped (${limit}s left of BUDGET)"
        return 1
    fi
    local t0=$SECONDS
    timeout -k 10 "$limit" "${mpi[@]}" -np "$n" "$@" >"$LOGS/$name.log" 2>&1
    local rc=$?
    echo "wall $((SECONDS - t0))" >>"$LOGS/$name.log"
    [ $rc = 0 ] || say "$name: FAILED (status $rc$([ $rc = 124 ] && echo ", over ${limit}s")): $(tail -n 3 "$LOGS/$name.log" | tr '\n' ' ')"
    return $rc
}

# Seconds from a finished step's log: "plan transform write total".
xcorr_times() { # the max row: max days pairs read prepro exchange correlate write total
    awk '$1 == "max" { printf "%s %.3f %s %s\n", "-", $5 + $6 + $7, $8, $9 }' "$1"
}
wavepacket_times() {
    sed -n 's/^times (s, max over ranks): plan \([0-9.]*\) forward \([0-9.]*\) write \([0-9.]*\) check [0-9.]* total \([0-9.]*\)$/\1 \2 \3 \4/p' "$1"
}

table() { # table CASE KIND: the case's rows, with speed-ups over its 1-rank row
    local c=$1 kind=$2 base_t="" base_w=""
    {
        echo
        echo "### $c"
        echo
        echo "| ranks (GPUs) | plan s | transform s | write s | total s | speed-up transform | speed-up total |"
        echo "| --- | --- | --- | --- | --- | --- | --- |"
        for n in $RANKS; do
            local log="$LOGS/${c}_$n.log" plan tr wr tot
            [ -f "$log" ] || continue
            read -r plan tr wr tot < <("${kind}_times" "$log")
            if [ -z "${tr:-}" ]; then echo "| $n | failed or stopped | | | | | |"; continue; fi
            [ "$n" = 1 ] && base_t=$tr base_w=$tot
            local st="–" sw="–"
            [ -n "$base_t" ] && st=$(awk -v a="$base_t" -v b="$tr" 'BEGIN { printf "%.2f", a / b }')
            [ -n "$base_w" ] && sw=$(awk -v a="$base_w" -v b="$tot" 'BEGIN { printf "%.2f", a / b }')
            echo "| $n | $plan | $tr | $wr | $tot | $st | $sw |"
        done
    } | tee -a "$OUT/table.md"
}

ranks_here() { for n in $RANKS; do [ "$n" -le "$gpus" ] && echo "$n"; done; }

xcorr_case() { # xcorr_case NAME STATIONS
    local c=$1 stations=$2
    for n in $(ranks_here); do
        step "${c}_$n" "$n" "$bin/xcorr_network" --backend "$backend" --synthetic "$stations" \
            "${xcorr_day[@]}" "${exchange[@]}" -o "$WORK/$c.$n.xc" || continue
        # Each file against one GPU's (stations dealt differently, on the same model of GPU).
        if [ "$n" != 1 ] && [ -f "$WORK/$c.1.xc" ]; then
            if cmp -s "$WORK/$c.1.xc" "$WORK/$c.$n.xc"; then
                say "$c: the file from $n ranks equals one rank's byte for byte"
            else
                say "$c: the file from $n ranks differs from one rank's"
            fi
            rm -f "$WORK/$c.$n.xc"
        fi
    done
    rm -f "$WORK/$c".*.xc
    table "$c" xcorr
}

wavepacket_case() {
    # A small volume's tiles over the ranks against one GPU's volume calls (--check: the
    # forward, the gathered adjoint, and the inverse's error), before the timed runs.
    local most
    most=$(ranks_here | tail -n 1)
    step wavepacket_check "${most:-1}" "$bin/wavepacket_volume" --backend "$backend" \
        "${warm[@]}" -o "$WORK/check.wp" --check &&
        say "wavepacket_check: $(grep -h 'vs one context' "$LOGS/wavepacket_check.log" | tr '\n' ' ')"
    rm -f "$WORK/check.wp"
    for n in $(ranks_here); do
        step "wavepacket_$n" "$n" "$bin/wavepacket_volume" --backend "$backend" "${volume[@]}" \
            --no-output
    done
    table wavepacket wavepacket
}

# NVRTC's kernels compiled once, into the disk cache, before anything is timed.
step warmup_xcorr 1 "$bin/xcorr_network" --backend "$backend" --synthetic 8 "${xcorr_day[@]}" -o "$WORK/w.xc"
case ",$CASES," in *,wavepacket,*)
    step warmup_wavepacket 1 "$bin/wavepacket_volume" --backend "$backend" "${warm[@]}" --no-output ;;
esac
for c in ${CASES//,/ }; do
    case $c in
        xcorr674) xcorr_case xcorr674 "${xcorr_size[0]}" ;;
        xcorr2000) xcorr_case xcorr2000 "${xcorr_size[1]}" ;;
        xcorr[0-9]*) xcorr_case "$c" "${c#xcorr}" ;;
        wavepacket) wavepacket_case ;;
        *) say "unknown case $c (xcorr674, xcorr2000, xcorrN, wavepacket)" ;;
    esac
done
say "done in ${SECONDS}s; table in $OUT/table.md"

"""A network's day of ambient-noise correlation over MPI ranks from Python (mpi4py), one GPU
per rank where there are GPUs: the same pairs dealt the same way and the same file as the C
example ``examples/mpi/xcorr_network`` (layout: ``examples/mpi/xcorr_file.h``), so that
``seisgpu.read_xcorr_file`` and ``xcorr_read`` read it, and on the CPU the same bytes.

    mpirun -np 3 python3 xcorr_mpi.py --synthetic 40 --samples 21600 -o day.xc
    mpirun -np 4 python3 xcorr_mpi.py --list stations.txt -o day.xc --backend cuda

The stations are cut into G groups of consecutive stations; the G(G+1)/2 blocks of the upper
triangle of pairs are dealt to the ranks largest first, each to the rank with the fewest
pairs so far; each rank reads and preprocesses the stations its blocks need, correlates its
blocks and writes their rows into "<out>.partial", which rank 0 marks complete and renames
to <out> once every rank's rows are in. A failure on any rank stops every rank with its
message and status 1, and leaves no file. (Substacks and the exchange of spectra between
ranks are the C example's.)
"""

from __future__ import annotations

import argparse
import os
import struct
import sys

import numpy as np
from mpi4py import MPI

import seisgpu

NAME_BYTES = 32
HEADER = struct.Struct("<8sII10Q7d6i")
HEADER_BYTES = 512
COMPLETE_OFFSET = 12
MAX_DELAY = 41
MASK = (1 << 64) - 1
STACKS = {"linear": 0, "pws": 1, "robust": 2}
TIME_NORM = {"none": 0, "one_bit": 1, "running_mean": 2}
FREQ_NORM = {"none": 0, "running_mean": 1, "phase_only": 2}


class Failed(Exception):
    """A failure of this rank, reported at the end of the stage."""


def stage_failed(comm: MPI.Comm, error: str) -> bool:
    """Every rank's failure, agreed: rank 0 prints each failing rank's message."""
    messages = comm.gather(error, root=0)
    failed = comm.bcast(any(messages) if comm.rank == 0 else None, root=0)
    if failed and comm.rank == 0:
        for r, m in enumerate(messages):
            if m:
                print(f"xcorr_mpi: rank {r}: {m}", file=sys.stderr)
        print("xcorr_mpi: stopped on every rank", file=sys.stderr)
    return failed


# xcorr_layout.h's XCORR_STATION_PAIRS: a station-day counted as this many pairs.
STATION_PAIRS = 30


def layout_in(n_stations: int, n_groups: int, n_ranks: int, autocorrelation: bool):
    """The layout in exactly n_groups groups: (group starts, blocks (a, b, n_pairs, rank),
    the busiest rank's work)."""
    start = [g * n_stations // n_groups for g in range(n_groups + 1)]

    def size(g: int) -> int:
        return start[g + 1] - start[g]

    def pairs(a: int, b: int) -> int:
        na, nb = size(a), size(b)
        return na * nb if a != b else na * (na - 1) // 2 + (na if autocorrelation else 0)

    blocks = [(a, b, pairs(a, b)) for a in range(n_groups) for b in range(a, n_groups)]
    blocks.sort(key=lambda x: (-x[2], x[0], x[1]))
    load = [0] * n_ranks
    has = [set() for _ in range(n_ranks)]
    dealt = []
    for a, b, n in blocks:
        def after(r: int) -> int:
            return load[r] + n + STATION_PAIRS * sum(size(g) for g in {a, b} - has[r])
        best = min(range(n_ranks), key=lambda r: (after(r), r))
        load[best] = after(best)
        has[best] |= {a, b}
        dealt.append((a, b, n, best))
    return start, dealt, max(load)


def layout(n_stations: int, n_groups: int, n_ranks: int, autocorrelation: bool):
    """xcorr_layout_make: the group starts and the blocks (a, b, n_pairs, rank)."""
    if 0 < n_groups <= n_stations:
        return layout_in(n_stations, n_groups, n_ranks, autocorrelation)[:2]
    least = 0
    while n_groups == 0 and least < n_stations and least * (least + 1) // 2 < 2 * n_ranks:
        least += 1
    if least == 0:
        raise Failed(f"cannot cut {n_stations} stations into {n_groups} groups")
    trials = (layout_in(n_stations, g, n_ranks, autocorrelation)
              for g in range(least, min(4 * least, n_stations) + 1))
    start, dealt, _ = min(trials, key=lambda t: t[2])  # the first of equals: the fewest groups
    return start, dealt


def noise(state: np.ndarray, count: int) -> np.ndarray:
    """xcorr_input.c's roughly Gaussian values (xorshift64*, four uniforms each), `count`
    of them for every state of `state` (uint64, advanced in place)."""
    out = np.empty((count, state.size))
    scale, two53 = np.uint64(0x2545F4914F6CDD1D), 9007199254740992.0
    for t in range(count):
        total = np.zeros(state.size)
        for _ in range(4):
            state ^= state >> np.uint64(12)
            state ^= state << np.uint64(25)
            state ^= state >> np.uint64(27)
            total = total + ((state * scale) >> np.uint64(11)).astype(np.float64) / two53
        out[t] = (total - 2.0) * 1.7320508075688772
    return out


def synthetic_days(which: list[int], n: int) -> np.ndarray:
    """The C example's synthetic stations: a shared noise field, delayed per station, with
    the station's own noise, a gain, an offset and a trend."""
    with np.errstate(over="ignore"):
        field = noise(np.array([1], np.uint64), n + MAX_DELAY)[:, 0]
        seeds = np.array([((s + 1) * 0x9E3779B97F4A7C15 & MASK) | 1 for s in which], np.uint64)
        own = noise(seeds, n)
    days = np.empty((len(which), n), np.float32)
    t = np.arange(n, dtype=np.float64)
    for k, s in enumerate(which):
        delay = (13 * s) % MAX_DELAY
        v = field[MAX_DELAY - delay:MAX_DELAY - delay + n] + 0.5 * own[:, k]
        days[k] = (1000.0 * v + 50.0 + 0.01 * t).astype(np.float32)
    return days


def station_list(path: str):
    names, files = [], []
    with open(path) as f:
        for line in f:
            fields = line.split("#")[0].split()
            if not fields:
                continue
            if len(fields) < 2 or len(fields[0].encode()) >= NAME_BYTES:
                raise Failed(f"station list {path}: expected `NAME PATH [OFFSET]`")
            where = os.path.join(os.path.dirname(path), fields[1])
            names.append(fields[0])
            files.append((where, int(fields[2]) if len(fields) > 2 else 0))
    if not names:
        raise Failed(f"station list {path}: no stations")
    return names, files


def read_days(files, which: list[int], n: int, names: list[str]) -> np.ndarray:
    days = np.empty((len(which), n), np.float32)
    for k, s in enumerate(which):
        path, offset = files[s]
        try:
            got = np.fromfile(path, dtype="<f4", count=n, offset=4 * offset)
        except OSError as e:
            raise Failed(f"station {names[s]}: {path}: {e.strerror}") from None
        if got.size != n:
            raise Failed(f"station {names[s]}: {path} holds {got.size} of the {n} samples "
                         f"from value {offset}")
        days[k] = got
    return days


def header(names: list[str], n_lags: int, n_samples: int, o: dict) -> tuple[bytes, dict]:
    """The file's header (xcorr_file.h) and its offsets."""
    n = len(names)
    auto = bool(o["autocorrelation"])
    n_pairs = _pairs(n, auto)

    def align(x: int) -> int:
        return (x + 63) // 64 * 64

    at = dict(names=HEADER_BYTES, n_lags=n_lags)
    at["index"] = align(at["names"] + n * NAME_BYTES)
    at["stacks"] = align(at["index"] + 16 * n_pairs)
    at["end"] = at["stacks"] + 4 * n_pairs * n_lags
    head = HEADER.pack(b"SGXCORR\0", 1, 0, n, n_pairs, n_lags, 0, at["names"], at["index"],
                       at["stacks"], 0, 0, n_samples, o["sampling_rate"], o["maxlag"],
                       o["cc_len"], o["step"], o["freqmin"], o["freqmax"], 0.0, 0,
                       STACKS[o["stack_method"]], TIME_NORM[o["time_norm"]],
                       FREQ_NORM[o["freq_norm"]], int(auto), 0)
    return head.ljust(HEADER_BYTES, b"\0"), at


def pair_index(i: int, j: int, n: int, auto: bool) -> int:
    return i * n - i * (i - 1) // 2 + (j - i) if auto else i * n - i * (i + 1) // 2 + (j - i - 1)


def correlate(plan: seisgpu.Xcorr, spectra, local: dict, start, blocks, rank: int):
    """This rank's blocks: per block its first stations' global numbers, stacks and counts."""
    out = []
    for a, b, _, r in blocks:
        if r != rank:
            continue
        na, nb = start[a + 1] - start[a], start[b + 1] - start[b]
        c = plan.correlate(spectra, block=(local[a], na, local[b], nb))
        out.append((a, b, c))
    return out


def write(comm: MPI.Comm, path: str, head: bytes, at: dict, names, results, start, auto):
    """Every rank's rows into "<path>.partial"; rank 0 marks it complete and renames it."""
    partial = path + ".partial"
    fh = MPI.File.Open(comm, partial, MPI.MODE_CREATE | MPI.MODE_WRONLY)
    error = ""
    try:
        fh.Set_size(at["end"])
        if comm.rank == 0:
            fh.Write_at(0, head)
            blob = b"".join(s.encode().ljust(NAME_BYTES, b"\0") for s in names)
            fh.Write_at(at["names"], blob)
        n, n_lags = len(names), at["n_lags"]
        for a, b, c in results:
            rows = 0
            for i in range(start[a + 1] - start[a]):
                gi = start[a] + i
                first = 0 if a != b else i + (0 if auto else 1)
                count = (start[b + 1] - start[b]) - first
                if count <= 0:
                    continue
                gj = start[b] + first
                p = pair_index(gi, gj, n, auto)
                rec = np.zeros((count, 4), "<u4")
                rec[:, 0], rec[:, 1] = gi, gj + np.arange(count)
                rec[:, 2] = c.n_windows[rows:rows + count]
                fh.Write_at(at["index"] + 16 * p, rec)
                fh.Write_at(at["stacks"] + 4 * n_lags * p,
                            np.ascontiguousarray(c.stacks[rows:rows + count], "<f4"))
                rows += count
        fh.Sync()
    except (MPI.Exception, OSError) as e:
        error = f"writing {partial}: {e}"
    failed = comm.allreduce(bool(error), op=MPI.LOR)
    if not failed and comm.rank == 0:
        fh.Write_at(COMPLETE_OFFSET, np.array([1], "<u4"))
    fh.Close()
    if comm.rank == 0:
        if failed:
            os.remove(partial)
        else:
            os.replace(partial, path)
    return error


def _pairs(n: int, auto: bool) -> int:
    return n * (n - 1) // 2 + (n if auto else 0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--list", help="station list: NAME PATH [OFFSET] per line")
    src.add_argument("--synthetic", type=int, help="synthetic station count")
    p.add_argument("--samples", type=int, default=86400)
    p.add_argument("--fs", type=float, default=1.0)
    p.add_argument("--freqmin", type=float, default=0.05)
    p.add_argument("--freqmax", type=float, default=0.4)
    p.add_argument("--cc-len", type=float, default=1800.0)
    p.add_argument("--step", type=float, default=450.0)
    p.add_argument("--maxlag", type=float, default=200.0)
    p.add_argument("--stack", choices=sorted(STACKS), default="linear")
    p.add_argument("--autocorrelation", action="store_true")
    p.add_argument("--groups", type=int, default=0)
    p.add_argument("--backend", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("-o", dest="out", default="xcorr_network.xc")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args()
    comm = MPI.COMM_WORLD
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    if "SEISGPU_NUM_THREADS" not in os.environ:
        # the node's cores shared among its ranks, as the C example does (a CUDA context's
        # pool stages its host arrays)
        os.environ["SEISGPU_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // node.size))
    error, t0 = "", MPI.Wtime()
    if comm.rank == 0:
        for stale in (args.out, args.out + ".partial"):
            if os.path.exists(stale):
                os.remove(stale)
    try:
        if args.list:
            names, files = station_list(args.list)
        else:
            names, files = [f"S{s:05d}" for s in range(args.synthetic)], None
        start, blocks = layout(len(names), args.groups, comm.size, args.autocorrelation)
        ctx = seisgpu.Context(args.backend, 0 if args.backend == "cpu" else node.rank)
        plan = seisgpu.Xcorr(ctx, sampling_rate=args.fs, freqmin=args.freqmin,
                             freqmax=args.freqmax, cc_len=args.cc_len, step=args.step,
                             maxlag=args.maxlag, stack_method=args.stack,
                             autocorrelation=args.autocorrelation)
        needed = sorted({g for a, b, _, r in blocks if r == comm.rank for g in (a, b)})
        local, which = {}, []
        for g in needed:
            local[g] = len(which)
            which.extend(range(start[g], start[g + 1]))
        results = []
        if which:
            days = (read_days(files, which, args.samples, names) if files
                    else synthetic_days(which, args.samples))
            with plan.preprocess(days) as spectra:
                results = correlate(plan, spectra, local, start, blocks, comm.rank)
    except (Failed, seisgpu.Error) as e:
        error = str(e)
    if stage_failed(comm, error):
        return 1
    head, at = header(names, plan.n_lags, args.samples, plan.options)
    error = write(comm, args.out, head, at, names, results, start, args.autocorrelation)
    if stage_failed(comm, error):
        return 1
    seconds = comm.reduce(MPI.Wtime() - t0, op=MPI.MAX, root=0)
    if comm.rank == 0 and not args.quiet:
        print(f"xcorr_mpi: {len(names)} stations, {_pairs(len(names), args.autocorrelation)} "
              f"pairs on {comm.size} ranks ({len(start) - 1} groups) in {seconds:.2f} s; "
              f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

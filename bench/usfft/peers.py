"""seisgpu's USFFT rows and cuFINUFFT's in one table, and their pairs at equal accuracy.

    python3 bench/usfft/peers.py SEISGPU.json [SEISGPU.json ...] --cufinufft CUFINUFFT.md

SEISGPU.json: `bench_usfft --json FILE` output (one file per tolerance, as
scripts/gpu_usfft_peers.sh writes them); its device-resident rows are used.
CUFINUFFT.md: the Markdown rows that cuFINUFFT's timing script prints (columns lib, prec,
tol, type, method, setpts ms, execute ms, rel err); its fastest method per (precision,
tolerance, type) is kept.

Pairs: for each cuFINUFFT row, the fastest seisgpu row of the same precision and type whose
achieved error is at most cuFINUFFT's (seisgpu at least as accurate), and the ratio of the
two execute times (> 1: seisgpu faster)."""

import argparse
import json
import sys

DEVICE_MODE = "GPU device-resident"


def seisgpu_rows(paths, mode):
    rows = []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for r in doc["rows"]:
            if r["mode"] != mode or r.get("execute_ms") is None or r.get("rel_l2_err") is None:
                continue
            rows.append({
                "lib": "seisgpu", "prec": r["precision"], "tol": float(r["tol"]),
                "type": int(r["type"]), "set_ms": r.get("set_points_ms"),
                "exec_ms": float(r["execute_ms"]), "err": float(r["rel_l2_err"]),
            })
    return rows


def cufinufft_rows(path):
    best = {}
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 8 or cells[0] != "cufinufft":
                continue
            try:
                row = {
                    "lib": "cuFINUFFT", "prec": cells[1], "tol": float(cells[2]),
                    "type": int(cells[3]), "method": int(cells[4]), "set_ms": float(cells[5]),
                    "exec_ms": float(cells[6]), "err": float(cells[7]),
                }
            except ValueError:
                continue  # a method that failed: its row carries the error text
            key = (row["prec"], row["tol"], row["type"])
            if key not in best or row["exec_ms"] < best[key]["exec_ms"]:
                best[key] = row
    return list(best.values())


def fmt(x, spec):
    return "—" if x is None else format(x, spec)


def table(rows):
    out = ["| library | precision | tol | type | set points ms | execute ms | error |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in sorted(rows, key=lambda r: (r["prec"], r["type"], r["lib"], -r["tol"])):
        lib = r["lib"] + (f" (method {r['method']})" if "method" in r else "")
        out.append(f"| {lib} | {r['prec']} | {r['tol']:g} | {r['type']} | "
                   f"{fmt(r['set_ms'], '.2f')} | {r['exec_ms']:.2f} | {r['err']:.1e} |")
    return out


def pairs(ours, theirs):
    out = ["| precision | type | cuFINUFFT tol (error) | seisgpu tol (error) | cuFINUFFT ms | seisgpu ms | cuFINUFFT ÷ seisgpu |",
           "| --- | ---: | --- | --- | ---: | ---: | ---: |"]
    ratios = []
    for t in sorted(theirs, key=lambda r: (r["prec"], r["type"], -r["tol"])):
        fits = [o for o in ours
                if o["prec"] == t["prec"] and o["type"] == t["type"] and o["err"] <= t["err"]]
        if not fits:
            out.append(f"| {t['prec']} | {t['type']} | {t['tol']:g} ({t['err']:.1e}) | "
                       f"none as accurate | {t['exec_ms']:.2f} | — | — |")
            continue
        o = min(fits, key=lambda r: r["exec_ms"])
        ratio = t["exec_ms"] / o["exec_ms"]
        ratios.append(ratio)
        out.append(f"| {t['prec']} | {t['type']} | {t['tol']:g} ({t['err']:.1e}) | "
                   f"{o['tol']:g} ({o['err']:.1e}) | {t['exec_ms']:.2f} | {o['exec_ms']:.2f} | "
                   f"{ratio:.2f} |")
    return out, ratios


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("seisgpu", nargs="+", help="bench_usfft --json files")
    ap.add_argument("--cufinufft", required=True, help="cuFINUFFT's Markdown rows")
    ap.add_argument("--mode", default=DEVICE_MODE, help="seisgpu rows of this mode")
    args = ap.parse_args(argv)
    ours = seisgpu_rows(args.seisgpu, args.mode)
    theirs = cufinufft_rows(args.cufinufft)
    if not ours or not theirs:
        sys.exit(f"rows: {len(ours)} of seisgpu ({args.mode}), {len(theirs)} of cuFINUFFT")
    print("\n".join(table(ours + theirs)))
    print()
    lines, ratios = pairs(ours, theirs)
    print("\n".join(lines))
    if ratios:
        print(f"\nat equal accuracy seisgpu is {min(ratios):.2f}–{max(ratios):.2f}× "
              f"cuFINUFFT's speed ({len(ratios)} pairs; the target is ≥ 1.3× in every pair)")


if __name__ == "__main__":
    main()

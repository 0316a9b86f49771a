#!/usr/bin/env python3
"""Copies a subset of the Seismic Unix sufxdecon reference outputs into tests/data/sufxdecon/.

The full outputs (601 traces x 1501 samples, float32 little-endian, trace after trace) are in
/work/shared/data/sufxdecon-reference/ (see its SOURCE.md); the input is the bundled
data/penobscot-xl1155/penobscot_xl1155.sgy decoded from IBM float, sample for sample. The
subset keeps the traces listed in TRACES (the line's two ends, where sufxdecon replicates edge
traces and its last block takes the remainder, the 60 traces where su_w20_f5 holds NaN, and
the middle), written one after the other in that order.

Usage: extract_sufxdecon_subset.py [reference_dir]
"""
import json
import os
import sys

TRACES = list(range(0, 80)) + list(range(290, 330)) + list(range(561, 601))
N_SAMPLES = 1501
N_TRACES = 601


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/sufxdecon-reference"
    here = os.path.dirname(os.path.abspath(__file__))
    dst = os.path.join(here, "..", "data", "sufxdecon")
    os.makedirs(dst, exist_ok=True)
    for name in ("su_defaults", "su_w20_f5"):
        data = open(os.path.join(src, name + ".f32"), "rb").read()
        assert len(data) == 4 * N_SAMPLES * N_TRACES
        row = 4 * N_SAMPLES
        with open(os.path.join(dst, name + ".f32"), "wb") as f:
            for t in TRACES:
                f.write(data[t * row:(t + 1) * row])
        meta = json.load(open(os.path.join(src, name + ".json")))
        meta["subset_traces"] = TRACES
        with open(os.path.join(dst, name + ".json"), "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()

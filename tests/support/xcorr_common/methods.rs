//! Substacks, NoisePy's other correlation methods (deconv, coherency) and spectra handed
//! from one process to another (`sg_xcorr_spectra_import`), against independent
//! references: NoisePy's `moving_ave` written from its definition (padding and a "same"
//! convolution) on each station's flattened spectra, and the pairwise sums of
//! `reference_cross`. Shared by tests/xcorr_cases.rs (CPU) and tests/cuda_xcorr.rs (GPU).

use super::*;

/// NoisePy's `moving_ave(A, N)`: A padded with N copies of its first and last values,
/// `np.convolve(·, ones(N)/N, "same")`, the padding cut off.
fn moving_ave(a: &[f64], n: usize) -> Vec<f64> {
    let l = a.len();
    let mut temp = vec![a[0]; n];
    temp.extend_from_slice(a);
    temp.extend(std::iter::repeat_n(a[l - 1], n));
    // "same": the full convolution from index (n − 1)/2 on
    let full = |m: usize| -> f64 {
        (0..n)
            .filter(|&k| k <= m && m - k < temp.len())
            .map(|k| temp[m - k])
            .sum::<f64>()
            / n as f64
    };
    (0..l).map(|q| full(q + n + (n - 1) / 2)).collect()
}

/// Spectra divided by their smoothed amplitude to `power`: per station, |S| over its
/// windows end to end (bins 0..nfft/2, 0 outside the stored band), smoothed over n bins.
pub fn divided(h: &HostSpectra, n: usize, power: i32) -> HostSpectra {
    let nfft2 = h.nfft / 2;
    let mut out = h.clone();
    for s in 0..h.n_stations {
        let mut flat = vec![0.0f64; h.n_windows * nfft2];
        for w in 0..h.n_windows {
            for f in 0..h.band_len {
                let v = h.at(f, s, w);
                flat[w * nfft2 + h.band_start + f] = (v[0] * v[0] + v[1] * v[1]).sqrt();
            }
        }
        let smooth = moving_ave(&flat, n);
        for w in 0..h.n_windows {
            for f in 0..h.band_len {
                let d = smooth[w * nfft2 + h.band_start + f].powi(power);
                let at = (f * h.n_stations + s) * h.n_windows + w;
                let v = h.values[at];
                out.values[at] = if d > 0.0 {
                    [v[0] / d, v[1] / d]
                } else {
                    [0.0, 0.0]
                };
            }
        }
    }
    out
}

fn max_rel(a: &HostSpectra, b: &HostSpectra) -> f64 {
    let scale = b
        .values
        .iter()
        .fold(0.0f64, |m, v| m.max(v[0].abs()).max(v[1].abs()));
    a.values.iter().zip(&b.values).fold(0.0f64, |m, (x, y)| {
        m.max((x[0] - y[0]).abs()).max((x[1] - y[1]).abs())
    }) / scale
}

/// Stations with a gap (station 2, windows 4–6 rejected) for the method checks.
fn gapped(n_sta: usize, n: usize, seed: u64) -> (Vec<f32>, Vec<u8>) {
    let data = synthetic(n_sta, n, seed);
    let mut valid = vec![1u8; n_sta * n];
    valid[2 * n + 500..2 * n + 600].fill(0);
    (data, valid)
}

/// Deconvolution and coherency, whitened and not, linear and phase-weighted, against the
/// divisions written out here and pairwise sums; the spectra a coherency plan stores are
/// the divided ones.
pub fn check_methods_against_reference(ctx: &Context, tol: f64) {
    let (n_sta, n) = (4, 2400);
    let (data, valid) = gapped(n_sta, n, 51);
    for freq_norm in [SG_XCORR_FREQ_NORM_NONE, SG_XCORR_FREQ_NORM_RUNNING_MEAN] {
        let base = sg_xcorr_options {
            freq_norm,
            autocorrelation: 1,
            smoothspect_n: 7,
            ..small_options()
        };
        let plain = ctx.plan(&base);
        let s = plain
            .preprocess(&data, n_sta, n, Some(&valid))
            .unwrap()
            .host();
        for (cc, name) in [
            (SG_XCORR_CC_DECONV, "deconv"),
            (SG_XCORR_CC_COHERENCY, "coherency"),
        ] {
            for stack in [SG_XCORR_STACK_LINEAR, SG_XCORR_STACK_PWS] {
                let o = sg_xcorr_options {
                    cc_method: cc,
                    stack_method: stack,
                    ..base
                };
                let plan = ctx.plan(&o);
                let sp = plan.preprocess(&data, n_sta, n, Some(&valid)).unwrap();
                let (src, rec) = match cc {
                    SG_XCORR_CC_DECONV => (divided(&s, 7, 2), s.clone()),
                    _ => (divided(&s, 7, 1), divided(&s, 7, 1)),
                };
                let stored = sp.host();
                assert_eq!(stored.kept, s.kept);
                let e = max_rel(&stored, &rec);
                assert!(
                    e <= 1e-5,
                    "{name} freq_norm {freq_norm}: stored spectra {e:.2e}"
                );
                let c = plan.correlate(&[&sp], (0, n_sta, 0, n_sta)).unwrap();
                for (p, &(i, j)) in plan.pairs(n_sta, (0, n_sta, 0, n_sta)).iter().enumerate() {
                    let want = match stack {
                        SG_XCORR_STACK_LINEAR => {
                            let (r, k) = reference_cross(
                                &[&src],
                                &[&rec],
                                (i, j),
                                c.n_lags,
                                |_, _| true,
                                false,
                            );
                            assert_eq!(c.counts[p], k);
                            r
                        }
                        _ => {
                            // NoisePy zeroes bin 0 of a single window's deconvolution even
                            // for an autocorrelation (its amplitudes differ).
                            let zero_dc = i != j || cc == SG_XCORR_CC_DECONV;
                            let rows: Vec<Vec<f64>> = (0..s.n_windows)
                                .filter_map(|w| {
                                    let one = |d: usize, x: usize| (d, x) == (0, w);
                                    let (r, k) = reference_cross(
                                        &[&src],
                                        &[&rec],
                                        (i, j),
                                        c.n_lags,
                                        one,
                                        zero_dc,
                                    );
                                    (k == 1).then_some(r)
                                })
                                .collect();
                            assert_eq!(c.counts[p] as usize, rows.len());
                            reference_pws(&rows, 2.0)
                        }
                    };
                    let e = rel_err(c.pair(p), &want);
                    assert!(
                        e <= tol,
                        "{name} freq_norm {freq_norm} stack {stack} ({i},{j}): {e:.2e}"
                    );
                }
            }
        }
    }
}

/// Labels of day 0 (22 windows) and day 1 (18 windows) by time in groups of 500 s
/// (`sg_xcorr_substack_groups`), one window of day 0 then taken out of every group.
fn labels_by_time(plan: &Plan) -> (Vec<i32>, usize) {
    let windows = [22usize, 18];
    let starts = [0.0f64, 2400.0];
    let mut labels = vec![7i32; 40];
    let mut n_groups = 0;
    ok(sg_xcorr_substack_groups(
        plan.0,
        2,
        windows.as_ptr(),
        starts.as_ptr(),
        500.0,
        labels.as_mut_ptr(),
        &mut n_groups,
    ));
    for (w, &l) in labels.iter().enumerate() {
        let start = if w < 22 {
            100 * w
        } else {
            2400 + 100 * (w - 22)
        };
        assert_eq!(l as usize, start / 500, "window {w}");
    }
    assert_eq!(n_groups, (2400 + 1700) / 500 + 1);
    labels[3] = SG_XCORR_NO_GROUP;
    (labels, n_groups)
}

/// Substacks over two days with a gap: each group's stack against the pairwise sums of its
/// windows, the stacks of all windows against `correlate`, linear and phase-weighted.
pub fn check_substacks(ctx: &Context, tol: f64) {
    let n_sta = 4;
    let (a, b) = (synthetic(n_sta, 2400, 61), synthetic(n_sta, 2000, 62));
    let mut valid = vec![1u8; n_sta * 2400];
    valid[2400 + 300..2400 + 420].fill(0); // station 1, day 0: windows 2–4 rejected
    for stack in [SG_XCORR_STACK_LINEAR, SG_XCORR_STACK_PWS] {
        let o = sg_xcorr_options {
            autocorrelation: 1,
            stack_method: stack,
            ..small_options()
        };
        let plan = ctx.plan(&o);
        let da = plan.preprocess(&a, n_sta, 2400, Some(&valid)).unwrap();
        let db = plan.preprocess(&b, n_sta, 2000, None).unwrap();
        let (ha, hb) = (da.host(), db.host());
        let (labels, n_groups) = labels_by_time(&plan);
        let block = (0, n_sta, 0, n_sta);
        let (all, sub) = plan
            .correlate_substacks(&[&da, &db], block, &labels, n_groups)
            .unwrap();
        let plain = plan.correlate(&[&da, &db], block).unwrap();
        assert_eq!(all.counts, plain.counts);
        let pairs = plan.pairs(n_sta, block);
        let n_pairs = pairs.len();
        for (p, &(i, j)) in pairs.iter().enumerate() {
            let w: Vec<f64> = plain.pair(p).iter().map(|&v| v as f64).collect();
            let e = rel_err(all.pair(p), &w);
            assert!(
                e <= tol,
                "stack {stack} ({i},{j}): all windows vs correlate {e:.2e}"
            );
            for g in 0..n_groups {
                let label = |d: usize, w: usize| labels[if d == 0 { w } else { 22 + w }];
                let keep = |d: usize, w: usize| label(d, w) == g as i32;
                let (want, count) =
                    reference_cross(&[&ha, &hb], &[&ha, &hb], (i, j), all.n_lags, keep, i != j);
                let k = g * n_pairs + p;
                assert_eq!(
                    sub.counts[k], count,
                    "stack {stack} ({i},{j}) group {g} count"
                );
                if count == 0 {
                    assert!(sub.pair(k).iter().all(|&v| v == 0.0));
                    continue;
                }
                let e = rel_err(sub.pair(k), &want);
                assert!(e <= tol, "stack {stack} ({i},{j}) group {g}: {e:.2e}");
            }
        }
        // Station 1's gap leaves group 0 of its pairs with windows 0, 1 only (3: none).
        let p01 = pairs.iter().position(|&x| x == (0, 1)).unwrap();
        assert_eq!(sub.counts[p01], 2);
        // A label past n_groups is refused.
        let mut bad = labels.clone();
        bad[5] = n_groups as i32;
        let e = plan
            .correlate_substacks(&[&da, &db], block, &bad, n_groups)
            .err()
            .unwrap();
        assert_eq!(e.0, SG_ERR_INVALID_ARGUMENT);
        assert!(e.1.contains("group label"), "{}", e.1);
    }
}

/// Spectra copied out and imported again correlate bit for bit as the originals (the
/// deconvolution's source side derived again); bad imports are refused.
pub fn check_import(ctx: &Context) {
    let (n_sta, n) = (4, 2400);
    let (data, valid) = gapped(n_sta, n, 71);
    for cc in [SG_XCORR_CC_XCORR, SG_XCORR_CC_DECONV, SG_XCORR_CC_COHERENCY] {
        let o = sg_xcorr_options {
            cc_method: cc,
            ..small_options()
        };
        let plan = ctx.plan(&o);
        let s = plan.preprocess(&data, n_sta, n, Some(&valid)).unwrap();
        let h = s.host();
        let back = plan.import(&h).unwrap();
        let block = (0, n_sta, 0, n_sta);
        let (c0, c1) = (
            plan.correlate(&[&s], block).unwrap(),
            plan.correlate(&[&back], block).unwrap(),
        );
        assert_eq!(c0.counts, c1.counts);
        assert!(
            c0.stacks
                .iter()
                .zip(&c1.stacks)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "cc_method {cc}: imported spectra correlate differently"
        );
    }
    let plan = ctx.plan(&small_options());
    let h = plan.preprocess(&data, n_sta, n, None).unwrap().host();
    let mut bad = h.clone();
    bad.kept[3] = 2;
    assert_eq!(plan.import(&bad).err().unwrap().0, SG_ERR_INVALID_ARGUMENT);
    let mut nan = h.clone();
    nan.values[17] = [f64::NAN, 0.0];
    assert_eq!(plan.import(&nan).err().unwrap().0, SG_ERR_NON_FINITE);
    // Spectra of an xcorr plan are refused by a deconvolution plan.
    let deconv = ctx.plan(&sg_xcorr_options {
        cc_method: SG_XCORR_CC_DECONV,
        ..small_options()
    });
    let x = plan.import(&h).unwrap();
    let e = deconv.correlate(&[&x], (0, n_sta, 0, n_sta)).err().unwrap();
    assert_eq!(e.0, SG_ERR_INVALID_ARGUMENT);
    assert!(e.1.contains("cc_method"), "{}", e.1);
}

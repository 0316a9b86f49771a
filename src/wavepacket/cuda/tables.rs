//! The box stage's tables, computed on the host from the layout and uploaded once: the box
//! table in work order (boxes grouped by shape, so that each shape's boxes are one batched
//! FFT over a contiguous piece of the work array), the coefficient-side phases, each
//! lattice's boxes and the windows; and a call's grid-shift factors.

use crate::backend::cuda::buffers::upload;
use crate::backend::cuda::memory::DeviceBuf;
use crate::error::Result;
use crate::sample::Real;
use crate::wavepacket::lattice_groups::{of_lattices, LatticeGroup};
use crate::wavepacket::layout::Layout;
use cudarc::driver::CudaStream;
use num_complex::Complex;
use std::ops::Range;
use std::sync::Arc;

/// Long longs per row of the box table (the F_* fields of the kernel file).
pub(super) const BOX_FIELDS: usize = 12;

/// The boxes of one shape in work order: `count` boxes of `size` elements from work element
/// `start`.
pub(super) struct ShapeRun {
    pub(super) start: usize,
    pub(super) size: usize,
    pub(super) count: usize,
    pub(super) shape: [usize; 3],
}

/// The box table in work order, as built on the host (`Vec`s) and as uploaded
/// (`DeviceBuf`s): 64-bit integer tables in `I`, reals in `R`.
pub(super) struct BoxRows<I, R> {
    /// BOX_FIELDS per box.
    pub(super) table: I,
    pub(super) work_start: I,
    /// Per box, n1 + n2 + n3 interleaved factors L^(−½)·e^{2πi·lo·y/L}.
    pub(super) phase: R,
}

/// Each lattice's boxes (work-order indices from `first[l]` to `first[l + 1]`), its first
/// point and its lengths along axes 1 and 2; on the host (`Vec`s) and as uploaded
/// (`DeviceBuf`s): 32-bit integer tables in `J`, 64-bit in `I`.
pub(super) struct LatticeBoxes<J, I> {
    pub(super) first: J,
    pub(super) boxes: J,
    pub(super) start: I,
    pub(super) len: I,
}

/// One group of directions (`lattice_groups`) in the work order: its boxes' work elements,
/// its lattices and its lattice points (the group's values hold these).
#[derive(Clone, Debug)]
pub(super) struct GroupRows {
    pub(super) work: Range<usize>,
    pub(super) lattices: Range<usize>,
    pub(super) points: Range<usize>,
}

/// The tables on the host, as uploaded.
pub(super) struct HostTables<T> {
    /// Box indices in work order.
    pub(super) order: Vec<usize>,
    pub(super) boxes: BoxRows<Vec<i64>, Vec<T>>,
    pub(super) runs: Vec<ShapeRun>,
    /// Elements of the work array.
    pub(super) n_work: usize,
    /// The groups of directions in work order.
    pub(super) groups: Vec<GroupRows>,
    lattices: LatticeBoxes<Vec<i32>, Vec<i64>>,
}

/// The tables on the device.
pub(super) struct DeviceTables<T> {
    pub(super) windows: DeviceBuf<T>,
    pub(super) boxes: BoxRows<DeviceBuf<i64>, DeviceBuf<T>>,
    pub(super) lattices: LatticeBoxes<DeviceBuf<i32>, DeviceBuf<i64>>,
    /// The packet norms ‖ψ_b‖ by box in work order.
    pub(super) norms: DeviceBuf<f64>,
}

/// Appends one box's per-axis factors, axis 1 then 2 then 3 (n1 + n2 + n3), interleaved.
fn push_factors<T: Real>(
    out: &mut Vec<T>,
    shape: [usize; 3],
    f: impl Fn(usize, usize) -> Complex<f64>,
) {
    for (a, &n) in shape.iter().enumerate() {
        for i in 0..n {
            let z = f(a, i);
            out.push(T::from_f64(z.re).unwrap());
            out.push(T::from_f64(z.im).unwrap());
        }
    }
}

impl<T: Real> HostTables<T> {
    /// The tables of `layout` with its lattice values in `groups`: lattice points are
    /// numbered from their group's first (the group's values are what the kernels index).
    pub(super) fn new(layout: &Layout, groups: &[LatticeGroup]) -> HostTables<T> {
        // Work order: by group of directions, then by shape (a stable sort: box order
        // within each).
        let group_of = of_lattices(groups);
        let mut order: Vec<usize> = (0..layout.boxes.len()).collect();
        order.sort_by_key(|&b| (group_of[layout.boxes[b].lattice], layout.boxes[b].shape));
        let mut t = HostTables {
            boxes: BoxRows {
                table: Vec::with_capacity(order.len() * BOX_FIELDS),
                work_start: Vec::with_capacity(order.len()),
                phase: Vec::new(),
            },
            runs: Vec::new(),
            n_work: 0,
            groups: Vec::with_capacity(groups.len()),
            lattices: LatticeBoxes::new(layout, &order, groups),
            order: Vec::new(),
        };
        let mut row = 0;
        for g in groups {
            let first_work = t.n_work;
            while row < order.len() && g.lattices.contains(&layout.boxes[order[row]].lattice) {
                t.push_box(layout, order[row], g.points.start);
                row += 1;
            }
            t.groups.push(GroupRows {
                work: first_work..t.n_work,
                lattices: g.lattices.clone(),
                points: g.points.clone(),
            });
        }
        t.order = order;
        t
    }

    /// Box `b` next in work order: its table row (its lattice points numbered from
    /// `first_point`, its group's first), work start and phase factors, counted in its
    /// shape's run.
    fn push_box(&mut self, layout: &Layout, b: usize, first_point: usize) {
        let bx = &layout.boxes[b];
        let l = &layout.lattices[bx.lattice];
        let at = self.n_work;
        let o: [usize; 3] = std::array::from_fn(|a| (bx.lo[a] - l.lo[a]) as usize);
        let (s2, s3) = (l.len[0], l.len[0] * l.len[1]);
        let base = l.point_offset - first_point + o[2] * s3 + o[1] * s2 + o[0];
        let [n1, n2, n3] = bx.shape;
        let row = [
            at,
            bx.offset,
            base,
            s2,
            s3,
            n1,
            n2,
            n3,
            self.boxes.phase.len() / 2,
            o[0],
            o[1],
            o[2],
        ];
        self.boxes.table.extend(row.map(|v| v as i64));
        self.boxes.work_start.push(at as i64);
        // L^(−½)·e^{2πi·lo·y/L} per axis (the scale on axis 1), as `boxfft::apply_phase`.
        let scale = 1.0 / (bx.n_coefficients() as f64).sqrt();
        push_factors(&mut self.boxes.phase, bx.shape, |a, y| {
            let n = bx.shape[a] as i64;
            // lo·y mod n in integers keeps the angle exact for large lo.
            let k = (bx.lo[a].rem_euclid(n) * y as i64) % n;
            let r = if a == 0 { scale } else { 1.0 };
            Complex::from_polar(r, std::f64::consts::TAU * k as f64 / n as f64)
        });
        let size = bx.n_coefficients();
        match self.runs.last_mut() {
            Some(run) if run.shape == bx.shape => run.count += 1,
            _ => self.runs.push(ShapeRun {
                start: at,
                size,
                count: 1,
                shape: bx.shape,
            }),
        }
        self.n_work += size;
    }
}

impl LatticeBoxes<Vec<i32>, Vec<i64>> {
    /// Each lattice's boxes (work-order rows), its first point numbered from its group's
    /// first, and its lengths.
    fn new(layout: &Layout, order: &[usize], groups: &[LatticeGroup]) -> Self {
        let first_of: Vec<usize> = groups
            .iter()
            .flat_map(|g| g.lattices.clone().map(|_| g.points.start))
            .collect();
        let mut pos = vec![0usize; order.len()];
        for (j, &b) in order.iter().enumerate() {
            pos[b] = j;
        }
        let mut lists = LatticeBoxes {
            first: vec![0i32],
            boxes: Vec::new(),
            start: Vec::new(),
            len: Vec::new(),
        };
        for (li, l) in layout.lattices.iter().enumerate() {
            for (b, bx) in layout.boxes.iter().enumerate() {
                if bx.lattice == li {
                    lists.boxes.push(pos[b] as i32);
                }
            }
            lists.first.push(lists.boxes.len() as i32);
            lists.start.push((l.point_offset - first_of[li]) as i64);
            lists.len.extend([l.len[0] as i64, l.len[1] as i64]);
        }
        lists
    }
}

impl<T: Real> DeviceTables<T> {
    /// Queues the copies of `host` and the packet norms in work order (`by_work`) beside the
    /// `windows` made on the device; the host arrays must outlive the copies (the caller
    /// waits for the stream).
    pub(super) fn upload(
        host: &HostTables<T>,
        windows: DeviceBuf<T>,
        by_work: &[f64],
        s: &Arc<CudaStream>,
    ) -> Result<DeviceTables<T>> {
        let what = "uploading the wave-packet tables";
        let (rows, lat) = (&host.boxes, &host.lattices);
        Ok(DeviceTables {
            windows,
            boxes: BoxRows {
                table: upload(s, &rows.table, what)?,
                work_start: upload(s, &rows.work_start, what)?,
                phase: upload(s, &rows.phase, what)?,
            },
            lattices: LatticeBoxes {
                first: upload(s, &lat.first, what)?,
                boxes: upload(s, &lat.boxes, what)?,
                start: upload(s, &lat.start, what)?,
                len: upload(s, &lat.len, what)?,
            },
            norms: upload(s, by_work, what)?,
        })
    }
}

/// One call's grid shifts (`shifts`: one per box, or none) as the kernels take them: per box
/// in work `order`, where its factors start (−1: none), and the factors e^{−2πi(lo+i)δ/L}
/// per axis (as `boxfft::apply_shift`'s forward). None for a call without shifts.
pub(super) fn shift_factors<T: Real>(
    layout: &Layout,
    order: &[usize],
    shifts: &[[f64; 3]],
) -> Option<(Vec<i64>, Vec<T>)> {
    if shifts.iter().all(|d| *d == [0.0; 3]) {
        return None;
    }
    let mut factors = Vec::new();
    let mut at = Vec::with_capacity(order.len());
    for &b in order {
        let delta = shifts.get(b).copied().unwrap_or([0.0; 3]);
        if delta == [0.0; 3] {
            at.push(-1i64);
            continue;
        }
        at.push((factors.len() / 2) as i64);
        let bx = &layout.boxes[b];
        push_factors(&mut factors, bx.shape, |a, i| {
            let turns = (bx.lo[a] + i as i64) as f64 * delta[a] / bx.shape[a] as f64;
            Complex::from_polar(1.0, -std::f64::consts::TAU * turns.fract())
        });
    }
    Some((at, factors))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wavepacket::lattice_groups::split;

    fn layout() -> Layout {
        Layout::for_tests(&[40, 31], 16, 2)
    }

    #[test]
    fn work_order_groups_shapes_and_covers_every_coefficient() {
        let l = layout();
        let t = HostTables::<f64>::new(&l, &split(&l, 1));
        let n = l.boxes.len();
        assert_eq!(t.boxes.table.len(), n * BOX_FIELDS);
        assert_eq!(t.n_work, l.n_coefficients);
        assert_eq!(t.runs.iter().map(|r| r.count).sum::<usize>(), n);
        let mut at = 0;
        for (j, &b) in t.order.iter().enumerate() {
            let bx = &l.boxes[b];
            let row = &t.boxes.table[j * BOX_FIELDS..(j + 1) * BOX_FIELDS];
            assert_eq!(t.boxes.work_start[j], at as i64);
            assert_eq!((row[0], row[1]), (at as i64, bx.offset as i64));
            assert_eq!(&row[5..8], &bx.shape.map(|s| s as i64));
            at += bx.n_coefficients();
        }
        for (r, next) in t.runs.iter().zip(t.runs.iter().skip(1)) {
            assert_eq!(r.start + r.count * r.size, next.start);
            assert!(r.shape < next.shape, "one run per shape, in order");
        }
        let per_box: usize = l.boxes.iter().map(|b| b.shape.iter().sum::<usize>()).sum();
        assert_eq!(t.boxes.phase.len(), 2 * per_box);
    }

    #[test]
    fn groups_of_directions_take_their_boxes_and_number_their_points() {
        let l = layout();
        let groups = split(&l, 3);
        let t = HostTables::<f32>::new(&l, &groups);
        assert_eq!(t.groups.len(), 3);
        assert_eq!(t.groups[0].work.start, 0);
        assert_eq!(t.groups[2].work.end, t.n_work);
        assert_eq!(t.n_work, l.n_coefficients);
        for (j, &b) in t.order.iter().enumerate() {
            let row = &t.boxes.table[j * BOX_FIELDS..(j + 1) * BOX_FIELDS];
            let g = t
                .groups
                .iter()
                .position(|g| g.work.contains(&(row[0] as usize)));
            let g = &t.groups[g.expect("a box outside every group")];
            let bx = &l.boxes[b];
            assert!(g.lattices.contains(&bx.lattice), "box {b}");
            // Its first value, numbered from the group's first point, lies in the group.
            assert!((row[2] as usize) < g.points.len(), "box {b}");
            let lat = &l.lattices[bx.lattice];
            assert!(lat.point_offset >= g.points.start);
        }
        for (li, lat) in l.lattices.iter().enumerate() {
            let g = t.groups.iter().find(|g| g.lattices.contains(&li)).unwrap();
            assert_eq!(
                t.lattices.start[li] as usize,
                lat.point_offset - g.points.start
            );
        }
    }

    #[test]
    fn each_box_is_listed_once_under_its_lattice() {
        let l = layout();
        let t = HostTables::<f32>::new(&l, &split(&l, 1));
        let lists = &t.lattices;
        assert_eq!(lists.first.len(), l.lattices.len() + 1);
        let mut seen = vec![0; l.boxes.len()];
        for (li, w) in lists.first.windows(2).enumerate() {
            for &j in &lists.boxes[w[0] as usize..w[1] as usize] {
                let b = t.order[j as usize];
                assert_eq!(l.boxes[b].lattice, li);
                seen[b] += 1;
            }
        }
        assert!(seen.iter().all(|&k| k == 1));
    }

    #[test]
    fn shift_factors_only_for_shifted_boxes() {
        let l = layout();
        let t = HostTables::<f64>::new(&l, &split(&l, 1));
        assert!(shift_factors::<f64>(&l, &t.order, &[]).is_none());
        let zero = vec![[0.0; 3]; l.boxes.len()];
        assert!(shift_factors::<f64>(&l, &t.order, &zero).is_none());
        let mut one = zero.clone();
        let b = l.boxes.len() / 2;
        one[b] = [0.5, 0.25, 0.0];
        let (at, factors) = shift_factors::<f64>(&l, &t.order, &one).unwrap();
        let j = t.order.iter().position(|&x| x == b).unwrap();
        for (k, &a) in at.iter().enumerate() {
            assert_eq!(a, if k == j { 0 } else { -1 });
        }
        assert_eq!(factors.len(), 2 * l.boxes[b].shape.iter().sum::<usize>());
    }
}

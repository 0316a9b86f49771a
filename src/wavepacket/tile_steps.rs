//! A tiled volume one tile at a time, for processes that share the tiles (MPI ranks): each
//! transforms its own tiles (`forward_tile`), and wherever the common grid is wanted every
//! tile's coefficients are added into zeros in tile order (`add_tile`), which is how
//! `TiledPlan::forward` adds them, so the sum equals its coefficients bit for bit. The
//! adjoint's tiles do not overlap in the volume: `adjoint_tile` gives tile t's samples from
//! the common grid, as `TiledPlan::adjoint` computes them.

use super::tiles::{Tile, TiledPlan};
use super::{check_array_sizes, check_data_finite, check_finite, WavepacketPlan};
use crate::error::Result;
use crate::sample::Real;
use num_complex::Complex;

impl<T: Real> TiledPlan<T> {
    /// Tiles, in tile order (axis 1 fastest, then 2, then 3).
    pub fn n_tiles(&self) -> usize {
        self.placements.len()
    }

    /// Where tile `t` starts in the volume (samples), if there is such a tile.
    pub fn tile_origin(&self, t: usize) -> Option<[usize; 3]> {
        self.placements.get(t).map(|p| p.origin)
    }

    /// Tile `t`'s placement and the plan that transforms it (tile t on context t mod K, as
    /// the whole-volume calls deal them).
    fn tile(&self, t: usize) -> Result<(&Tile, &WavepacketPlan<T>)> {
        let p = self.placements.get(t).ok_or_else(|| {
            crate::invalid!(
                "tile is {t}; the volume has {} tiles",
                self.placements.len()
            )
        })?;
        Ok((p, &self.plans[t % self.plans.len()]))
    }

    /// Checks a tile's samples and its coefficients (one layout's) against the layout.
    fn check_tile_sizes(&self, samples: usize, local: usize) -> Result<()> {
        let l = self.layout();
        check_array_sizes(
            [samples, local],
            [l.n_samples(), l.n_coefficients],
            &l.shape[..l.dim],
            ["a tile", "the tile's layout"],
        )
    }

    /// Tile `t`'s coefficients on its window of the common grids (`local`, the layout's
    /// n_coefficients, layout order) from its samples `tile` (the layout's shape, axis 1
    /// fastest: the volume's samples from the tile's origin on, 0 past the volume's end).
    /// Non-finite samples are refused.
    pub fn forward_tile(&self, t: usize, tile: &[T], local: &mut [Complex<T>]) -> Result<()> {
        let (p, plan) = self.tile(t)?;
        self.check_tile_sizes(tile.len(), local.len())?;
        check_data_finite(tile, &self.context().cpu)?;
        plan.forward_shifted(tile, local, &p.shifts)
    }

    /// Adds tile `t`'s coefficients (`forward_tile`'s `local`) into the common grids
    /// (`coeffs`, n_coefficients). Non-finite coefficients are refused.
    pub fn add_tile(
        &self,
        t: usize,
        local: &[Complex<T>],
        coeffs: &mut [Complex<T>],
    ) -> Result<()> {
        let (p, _) = self.tile(t)?;
        let want = (self.layout().n_coefficients, self.n_coefficients());
        if (local.len(), coeffs.len()) != want {
            return Err(crate::invalid!(
                "the tile's coefficients hold {} values and the volume's {}; expected {} and {}",
                local.len(),
                coeffs.len(),
                want.0,
                want.1
            ));
        }
        check_finite(local, &self.context().cpu)?;
        self.context()
            .cpu
            .install(|| self.scatter(p, local, coeffs));
        Ok(())
    }

    /// Tile `t`'s part of C*: its samples (`tile`, the layout's shape, including those past
    /// the volume's end, which the volume's adjoint drops) from the common grids (`coeffs`,
    /// n_coefficients). Non-finite coefficients are refused.
    pub fn adjoint_tile(&self, t: usize, coeffs: &[Complex<T>], tile: &mut [T]) -> Result<()> {
        let (p, plan) = self.tile(t)?;
        if coeffs.len() != self.n_coefficients() {
            return Err(crate::invalid!(
                "the coefficients hold {} values; the volume has {}",
                coeffs.len(),
                self.n_coefficients()
            ));
        }
        let l = self.layout();
        self.check_tile_sizes(tile.len(), l.n_coefficients)?;
        check_finite(coeffs, &self.context().cpu)?;
        let zero = Complex::new(T::zero(), T::zero());
        let mut local = crate::error::try_vec(l.n_coefficients, zero, "tile coefficients")?;
        plan.context()
            .cpu
            .install(|| self.gather(p, coeffs, &mut local));
        plan.adjoint_shifted(&local, tile, &p.shifts)
    }

    /// Tile `t`'s samples cut from the whole volume (`volume`, its n_samples), 0 past its end.
    pub fn tile_of(&self, t: usize, volume: &[T], tile: &mut [T]) -> Result<()> {
        let (p, _) = self.tile(t)?;
        let n: usize = self.volume().iter().product();
        if volume.len() != n || tile.len() != self.layout().n_samples() {
            return Err(crate::invalid!(
                "the volume holds {} samples and the tile {}; expected {} and {}",
                volume.len(),
                tile.len(),
                n,
                self.layout().n_samples()
            ));
        }
        self.read_tile(volume, p.origin, tile);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::backend::BackendRequest;
    use crate::context::Context;
    use crate::error::Error;
    use crate::wavepacket::layout::LayoutOptions;
    use crate::wavepacket::tiles::TiledPlan;
    use num_complex::Complex;

    fn same_bits(a: &[Complex<f64>], b: &[Complex<f64>]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| x.re.to_bits() == y.re.to_bits() && x.im.to_bits() == y.im.to_bits())
    }

    /// The tiles transformed one by one and added in tile order give `forward` bit for bit,
    /// the tiles' adjoints give `adjoint` bit for bit; bad tiles are refused.
    #[test]
    fn tile_steps_equal_the_volume_calls_bit_for_bit() {
        let ctx = Context::new(BackendRequest::Cpu, 0).unwrap();
        let (volume, tile) = ([70usize, 45], [32usize, 32]);
        let plan = TiledPlan::<f64>::new(ctx, &volume, &tile, &LayoutOptions::default()).unwrap();
        let data: Vec<f64> = (0..volume[0] * volume[1])
            .map(|i| ((i * 7919) % 1013) as f64 / 1013.0 - 0.5)
            .collect();
        let zero = Complex::new(0.0, 0.0);
        let mut whole = vec![zero; plan.n_coefficients()];
        plan.forward(&data, &mut whole).unwrap();
        let l = plan.layout();
        let mut sum = vec![zero; plan.n_coefficients()];
        let mut local = vec![zero; l.n_coefficients];
        let mut samples = vec![0.0; l.n_samples()];
        assert_eq!(plan.n_tiles(), 3 * 2);
        for t in 0..plan.n_tiles() {
            plan.tile_of(t, &data, &mut samples).unwrap();
            plan.forward_tile(t, &samples, &mut local).unwrap();
            plan.add_tile(t, &local, &mut sum).unwrap();
        }
        assert!(same_bits(&sum, &whole));

        let mut adjoint = vec![0.0; data.len()];
        plan.adjoint(&whole, &mut adjoint).unwrap();
        for t in 0..plan.n_tiles() {
            plan.adjoint_tile(t, &whole, &mut samples).unwrap();
            let o = plan.tile_origin(t).unwrap();
            for i2 in 0..tile[1].min(volume[1] - o[1]) {
                for i1 in 0..tile[0].min(volume[0] - o[0]) {
                    let v = adjoint[(o[1] + i2) * volume[0] + o[0] + i1];
                    assert_eq!(samples[i2 * tile[0] + i1].to_bits(), v.to_bits());
                }
            }
        }

        assert!(plan.forward_tile(6, &samples, &mut local).is_err());
        assert!(plan.add_tile(0, &local[1..], &mut sum).is_err());
        assert!(plan.adjoint_tile(0, &whole[1..], &mut samples).is_err());
        assert!(plan.tile_of(0, &data[1..], &mut samples).is_err());
        samples[3] = f64::NAN;
        let refused = plan.forward_tile(0, &samples, &mut local);
        assert!(matches!(refused, Err(Error::NonFinite(_))));
    }
}

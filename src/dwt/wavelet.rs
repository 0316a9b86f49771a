//! Wavelet families and members as GSL names them, with the four filters of each.

use super::filters::{self, Taps};
use crate::error::{Error, Result};

/// GSL's wavelet families (`gsl_wavelet_daubechies`, `…_centered`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    Daubechies,
    DaubechiesCentered,
    Haar,
    HaarCentered,
    Bspline,
    BsplineCentered,
}

/// Every family. (A module constant, not a public associated one: cbindgen would export
/// `Family` into the C header for the latter.)
const FAMILIES: [Family; 6] = [
    Family::Daubechies,
    Family::DaubechiesCentered,
    Family::Haar,
    Family::HaarCentered,
    Family::Bspline,
    Family::BsplineCentered,
];

impl Family {
    /// The filter table of this family's members.
    fn table(self) -> &'static [Taps] {
        match self {
            Family::Daubechies | Family::DaubechiesCentered => filters::DAUBECHIES,
            Family::Haar | Family::HaarCentered => std::slice::from_ref(&filters::HAAR),
            Family::Bspline | Family::BsplineCentered => filters::BSPLINE,
        }
    }

    pub fn is_centered(self) -> bool {
        matches!(
            self,
            Family::DaubechiesCentered | Family::HaarCentered | Family::BsplineCentered
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Family::Daubechies => "daubechies",
            Family::DaubechiesCentered => "daubechies_centered",
            Family::Haar => "haar",
            Family::HaarCentered => "haar_centered",
            Family::Bspline => "bspline",
            Family::BsplineCentered => "bspline_centered",
        }
    }
}

/// The filters of one wavelet, as used by a periodic transform step:
/// approximation a[i] = Σ_k h1[k]·x[(2i + k − offset) mod n], detail with g1;
/// the inverse scatters h2[k]·a[i] + g2[k]·d[i] back to the same positions.
#[derive(Clone, Debug)]
pub struct Wavelet {
    pub family: Family,
    pub member: u32,
    /// h1 and g1.
    pub analysis: FilterPair,
    /// h2 and g2.
    pub synthesis: FilterPair,
    pub offset: usize,
}

/// A low-pass filter and its high-pass mirror, of the same length.
#[derive(Clone, Debug)]
pub struct FilterPair {
    pub low: Vec<f64>,
    pub high: Vec<f64>,
}

impl Wavelet {
    pub fn new(family: Family, member: u32) -> Result<Wavelet> {
        let table = family.table();
        let taps = table.iter().find(|t| t.member == member).ok_or_else(|| {
            let members: Vec<String> = table.iter().map(|t| t.member.to_string()).collect();
            Error::Unsupported(format!(
                "member {member} does not exist in the {} family; members are {}",
                family.name(),
                members.join(", ")
            ))
        })?;
        // CDF splines with an even first digit (2xx, 3xx) carry the opposite sign in
        // their high-pass filters, as GSL tabulates them.
        let sign = if matches!(family, Family::Bspline | Family::BsplineCentered) && member >= 200 {
            -1.0
        } else {
            1.0
        };
        let (h1, h2) = (taps.analysis.to_vec(), taps.synthesis());
        let nc = h1.len();
        let high = |h: &[f64]| -> Vec<f64> {
            (0..nc)
                .map(|k| sign * if k % 2 == 0 { 1.0 } else { -1.0 } * h[nc - 1 - k])
                .collect()
        };
        let (g1, g2) = (high(&h2), high(&h1));
        Ok(Wavelet {
            family,
            member,
            analysis: FilterPair { low: h1, high: g1 },
            synthesis: FilterPair { low: h2, high: g2 },
            offset: if family.is_centered() { nc / 2 } else { 0 },
        })
    }

    /// Number of filter taps.
    pub fn taps(&self) -> usize {
        self.analysis.low.len()
    }
}

/// Every wavelet GSL provides: each family with each of its members.
pub fn all() -> impl Iterator<Item = Wavelet> {
    FAMILIES.into_iter().flat_map(|family| {
        family
            .table()
            .iter()
            .map(move |t| Wavelet::new(family, t.member).expect("a tabulated member"))
    })
}

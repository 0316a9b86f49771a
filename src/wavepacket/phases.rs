//! How long each phase of a plan's creation took, for benchmarks and profiles: the plan
//! records them (a clock read between phases) and `WavepacketPlan::creation_phases` gives
//! them back; the library prints nothing.

use std::time::{Duration, Instant};

/// The phases of `WavepacketPlan::new`, wall clock.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlanPhases {
    /// The box layout (boxes, lattices) and the memory checks.
    pub layout: Duration,
    /// The windows, normalisation included, in the plan's precision.
    pub windows: Duration,
    /// The lattices' table the USFFTs take their points from. Their coordinates are made in
    /// the type-2 plan's set-points (on a CUDA context only binned and sorted there, and
    /// computed by the kernels where they are used).
    pub points: Duration,
    /// The type-2 and the type-1 USFFT plan, each with its points set: type 2 sorts them,
    /// type 1 takes type 2's sorted points.
    pub usfft: [Duration; 2],
    /// On a CUDA context the device tables (packet norms, box tables, work buffers); zero
    /// on the CPU.
    pub tables: Duration,
}

impl PlanPhases {
    /// The sum of the phases.
    pub fn total(&self) -> Duration {
        self.layout + self.windows + self.points + self.usfft[0] + self.usfft[1] + self.tables
    }
}

/// Times consecutive phases: each `lap` gives the time since the previous one.
pub(super) struct Laps(Instant);

impl Laps {
    pub fn start() -> Self {
        Laps(Instant::now())
    }

    pub fn lap(&mut self) -> Duration {
        let now = Instant::now();
        let d = now - self.0;
        self.0 = now;
        d
    }
}

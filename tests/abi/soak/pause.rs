//! The soak's quiet moments: the memory sampler asks the threads to stop between calls and
//! drop the plans they own, measures, then lets them go on. At such a moment only the
//! shared plans are alive and no call is in flight, so two samples compare the same set
//! of live objects: what differs between them is what leaked.

use std::sync::{Condvar, Mutex};

#[derive(Default)]
struct State {
    /// The sampler is waiting for (or holding) a quiet moment.
    asked: bool,
    /// Threads stopped for the current moment.
    parked: usize,
    /// Threads still running (they leave when their time is up).
    active: usize,
    /// Moments so far: a parked thread waits for this to move on.
    moment: u64,
}

pub(crate) struct Pause {
    state: Mutex<State>,
    changed: Condvar,
}

impl Pause {
    pub(crate) fn new(threads: usize) -> Pause {
        Pause {
            state: Mutex::new(State {
                active: threads,
                ..State::default()
            }),
            changed: Condvar::new(),
        }
    }

    /// A thread between two calls: when a quiet moment is asked for, runs `drop_own` and
    /// waits until the sampler has measured.
    pub(crate) fn between_calls(&self, drop_own: impl FnOnce()) {
        let mut s = self.state.lock().unwrap();
        if !s.asked {
            return;
        }
        drop(s);
        drop_own();
        s = self.state.lock().unwrap();
        let moment = s.moment;
        s.parked += 1;
        self.changed.notify_all();
        while s.moment == moment {
            s = self.changed.wait(s).unwrap();
        }
    }

    /// A thread whose time is up: it no longer takes part in quiet moments.
    pub(crate) fn leave(&self) {
        let mut s = self.state.lock().unwrap();
        s.active -= 1;
        self.changed.notify_all();
    }

    /// The sampler: waits until every running thread is parked, runs `measure`, then
    /// lets them go on.
    pub(crate) fn quietly<R>(&self, measure: impl FnOnce() -> R) -> R {
        let mut s = self.state.lock().unwrap();
        s.asked = true;
        while s.parked < s.active {
            s = self.changed.wait(s).unwrap();
        }
        let r = measure();
        s.asked = false;
        s.parked = 0;
        s.moment += 1;
        self.changed.notify_all();
        r
    }
}

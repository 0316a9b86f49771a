//! Progress reports and cancellation of long calls.
//!
//! A caller sets one callback on a context (`Context::set_progress`, or
//! `sg_context_set_progress` in C). A long call makes a [`Reporter`] from it and runs its
//! work in chunks through [`Reporter::for_chunks`]: between chunks, on the thread that
//! made the call, the reporter calls back after the first chunk, at the end of each stage
//! and otherwise at most every [`INTERVAL`] with the stage and the fraction of the whole
//! call done, monotone, and once more with 1 when the work is complete (the first report
//! comes early so that a stop asked before or just after the call began is seen however
//! short the call). A callback that returns `true` ("stop") ends the call with
//! `Error::Cancelled` after the chunk in progress. Chunks are sized from the throughput
//! measured so far to last about [`CHUNK_TARGET`], which bounds the time from a "stop" to
//! the return. Without a callback the work runs as one chunk: no overhead, no change.

use crate::error::{Error, Result};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The callback: `(stage, fraction)` → `true` to stop the call.
pub type ProgressFn = Arc<dyn Fn(&str, f64) -> bool + Send + Sync>;

/// The least time between two reports.
pub const INTERVAL: Duration = Duration::from_millis(100);

/// The time a chunk of work aims at: a "stop" is seen within about INTERVAL + CHUNK_TARGET.
pub const CHUNK_TARGET: Duration = Duration::from_millis(50);

/// 0: INTERVAL; else the interval in nanoseconds.
static INTERVAL_OVERRIDE: AtomicU64 = AtomicU64::new(0);

/// Sets the report interval (None: INTERVAL; chunks then aim at half of it), so that
/// tests see many reports and cancellation points in short calls. Process-wide.
pub fn set_report_interval(interval: Option<Duration>) {
    let nanos = interval.map_or(0, |d| (d.as_nanos() as u64).max(1));
    INTERVAL_OVERRIDE.store(nanos, Ordering::Relaxed);
}

fn interval() -> Duration {
    match INTERVAL_OVERRIDE.load(Ordering::Relaxed) {
        0 => INTERVAL,
        nanos => Duration::from_nanos(nanos),
    }
}

fn chunk_target() -> Duration {
    match INTERVAL_OVERRIDE.load(Ordering::Relaxed) {
        0 => CHUNK_TARGET,
        nanos => Duration::from_nanos(nanos / 2),
    }
}

/// The progress of one call.
pub struct Reporter {
    callback: Option<ProgressFn>,
    stage: &'static str,
    /// The share of the whole call covered by the stage in progress: [start, end).
    stage_start: f64,
    stage_end: f64,
    next_stage_start: f64,
    /// Items of work in the stage, and how many are done.
    stage_items: usize,
    stage_done: usize,
    /// The last fraction reported, and when (None: not yet; the first advance reports).
    reported: f64,
    last_report: Option<Instant>,
}

impl Reporter {
    /// A reporter for one call; `callback` None reports nothing and never cancels.
    pub fn new(callback: Option<ProgressFn>) -> Reporter {
        Reporter {
            callback,
            stage: "",
            stage_start: 0.0,
            stage_end: 1.0,
            next_stage_start: 0.0,
            stage_items: 0,
            stage_done: 0,
            reported: 0.0,
            last_report: None,
        }
    }

    /// Whether anyone listens: capabilities may skip chunking work when not.
    pub fn is_active(&self) -> bool {
        self.callback.is_some()
    }

    /// Starts the next stage: `share` of the whole call (the shares of a call add up to
    /// 1), made of `items` items of work (traces, frequencies, pairs, …).
    pub fn stage(&mut self, name: &'static str, share: f64, items: usize) {
        self.stage = name;
        self.stage_items = items;
        self.stage_done = 0;
        self.stage_start = self.next_stage_start;
        self.stage_end = (self.stage_start + share).min(1.0);
        self.next_stage_start = self.stage_end;
    }

    /// Reports that `items` more items of the stage are finished: calls back the first time,
    /// when the interval has passed since the last report and when the stage is complete,
    /// and fails with
    /// `Cancelled` when the callback asks to stop.
    pub fn advance(&mut self, items: usize) -> Result<()> {
        let Some(callback) = &self.callback else {
            return Ok(());
        };
        self.stage_done += items;
        // The end of a stage is always reported: a call whose stages each take less than the
        // interval still offers a stop (and a progress step) between them.
        let stage_ended = self.stage_items > 0 && self.stage_done >= self.stage_items;
        if !stage_ended && self.last_report.is_some_and(|t| t.elapsed() < interval()) {
            return Ok(());
        }
        let within = match self.stage_items {
            0 => 1.0,
            all => self.stage_done as f64 / all as f64,
        };
        let fraction = self.stage_start + (self.stage_end - self.stage_start) * within.min(1.0);
        // Monotone, and 1 only once everything is done (`finish`).
        self.reported = fraction.max(self.reported).min(1.0 - f64::EPSILON);
        self.last_report = Some(Instant::now());
        if callback(self.stage, self.reported) {
            return Err(Error::Cancelled(format!(
                "cancelled by the progress callback during \"{}\" at {:.1} %",
                self.stage,
                100.0 * self.reported
            )));
        }
        Ok(())
    }

    /// Runs `work` over `0..n_items` (items of the current stage) in consecutive ranges of
    /// at least `min_chunk` items (one range when nobody listens), reporting after each;
    /// stops with `Cancelled` when asked to. Ranges grow (at most doubling) or shrink so
    /// that each takes about CHUNK_TARGET.
    pub fn for_chunks(
        &mut self,
        n_items: usize,
        min_chunk: usize,
        mut work: impl FnMut(Range<usize>) -> Result<()>,
    ) -> Result<()> {
        if !self.is_active() {
            return work(0..n_items);
        }
        let min_chunk = min_chunk.max(1);
        let started = Instant::now();
        let mut start = 0;
        let mut chunk = min_chunk;
        while start < n_items {
            let end = (start + chunk).min(n_items);
            work(start..end)?;
            self.advance(end - start)?;
            start = end;
            // Items per CHUNK_TARGET at the rate seen so far, at most twice the last chunk:
            // a first chunk timed too fast (warm caches, a coarse clock) must not make the
            // next one swallow the rest of the call.
            let seconds = started.elapsed().as_secs_f64().max(1e-6);
            let per_target = start as f64 / seconds * chunk_target().as_secs_f64();
            chunk = (per_target as usize).min(2 * chunk).max(min_chunk);
        }
        Ok(())
    }

    /// Reports 1 (the call's work is complete). Its answer is not asked: nothing is left
    /// to stop, and the caller's outputs are already written.
    pub fn finish(&mut self) {
        if let Some(callback) = &self.callback {
            self.reported = 1.0;
            callback(self.stage, 1.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The (stage, fraction) pairs a callback saw.
    type Seen = Arc<Mutex<Vec<(String, f64)>>>;

    fn recorder() -> (ProgressFn, Seen) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let f: ProgressFn = Arc::new(move |stage: &str, fraction: f64| {
            s.lock().unwrap().push((stage.to_string(), fraction));
            false
        });
        (f, seen)
    }

    #[test]
    fn without_a_callback_the_work_is_one_chunk() {
        let mut r = Reporter::new(None);
        r.stage("work", 1.0, 1000);
        let mut ranges = Vec::new();
        r.for_chunks(1000, 7, |range| {
            ranges.push(range);
            Ok(())
        })
        .unwrap();
        assert_eq!(ranges, vec![0..1000]);
    }

    #[test]
    fn stages_report_monotone_fractions_ending_at_one_about_every_interval() {
        let (f, seen) = recorder();
        let mut r = Reporter::new(Some(f));
        let mut covered = 0;
        for (name, share) in [("first", 0.25), ("second", 0.75)] {
            r.stage(name, share, 40);
            r.for_chunks(40, 1, |range| {
                covered += range.len();
                // 10 ms per item: 800 ms in all.
                std::thread::sleep(Duration::from_millis(10) * range.len() as u32);
                Ok(())
            })
            .unwrap();
        }
        r.finish();
        assert_eq!(covered, 80);
        let seen = seen.lock().unwrap();
        // 800 ms of work: a report after the first chunk, then at most every 100 ms (about
        // 8), one at each stage's end, and the final 1.
        assert!((4..=12).contains(&seen.len()), "{seen:?}");
        for end in [0.25, 1.0 - f64::EPSILON] {
            assert!(
                seen.iter().any(|(_, f)| *f == end),
                "no report at {end}: {seen:?}"
            );
        }
        assert!(seen.windows(2).all(|w| w[0].1 <= w[1].1), "{seen:?}");
        assert_eq!(seen.last().unwrap().1, 1.0);
        assert!(seen.iter().rev().skip(1).all(|(_, f)| *f < 1.0));
        // The first stage covers [0, 0.25), the second [0.25, 1).
        for (stage, fraction) in seen.iter().rev().skip(1) {
            match stage.as_str() {
                "first" => assert!(*fraction <= 0.25, "{seen:?}"),
                "second" => assert!(*fraction >= 0.25, "{seen:?}"),
                other => panic!("unknown stage {other}"),
            }
        }
    }

    /// Stages far shorter than the interval: each one's end is still reported (a stop drawn
    /// for a later stage must find its report).
    #[test]
    fn each_stage_end_is_reported_however_short() {
        let (f, seen) = recorder();
        let mut r = Reporter::new(Some(f));
        for name in ["a", "b", "c", "d"] {
            r.stage(name, 0.25, 3);
            for _ in 0..3 {
                r.advance(1).unwrap();
            }
        }
        let seen = seen.lock().unwrap();
        let ends: Vec<&str> = seen
            .iter()
            .filter(|(_, f)| [0.25, 0.5, 0.75, 1.0 - f64::EPSILON].contains(f))
            .map(|(s, _)| s.as_str())
            .collect();
        // The first advance reports too (a/0.0833); the interval silences the rest.
        assert_eq!(ends, ["a", "b", "c", "d"], "{seen:?}");
        assert_eq!(seen.len(), 5, "{seen:?}");
    }

    #[test]
    fn a_stop_ends_the_work_after_the_chunk_in_progress() {
        let calls = Arc::new(Mutex::new(0));
        let c = calls.clone();
        let f: ProgressFn = Arc::new(move |_: &str, _: f64| {
            *c.lock().unwrap() += 1;
            true
        });
        let mut r = Reporter::new(Some(f));
        r.stage("work", 1.0, 1000);
        let mut done = 0;
        let e = r
            .for_chunks(1000, 1, |range| {
                done += range.len();
                std::thread::sleep(Duration::from_millis(5) * range.len() as u32);
                Ok(())
            })
            .unwrap_err();
        assert_eq!(e.status(), crate::status::SG_ERR_CANCELLED);
        assert!(e.to_string().contains("\"work\""), "{e}");
        assert_eq!(*calls.lock().unwrap(), 1);
        // Stopped at the first report, after the first chunk (one item).
        assert_eq!(done, 1, "ran {done} items after the stop");
    }

    /// The chunk sizes `for_chunks` makes of `n` items when a chunk takes `cost(range)`.
    fn chunk_sizes(n: usize, cost: impl Fn(Range<usize>) -> Duration) -> Vec<usize> {
        let (f, _) = recorder();
        let mut r = Reporter::new(Some(f));
        r.stage("work", 1.0, n);
        let mut sizes = Vec::new();
        r.for_chunks(n, 1, |range| {
            sizes.push(range.len());
            std::thread::sleep(cost(range));
            Ok(())
        })
        .unwrap();
        sizes
    }

    #[test]
    fn chunks_grow_to_the_target_duration() {
        // 10 µs per item: a 50 ms chunk is about 5000 items.
        let sizes = chunk_sizes(100_000, |range| {
            Duration::from_micros(10 * range.len() as u64)
        });
        let biggest = *sizes.iter().max().unwrap();
        assert!((1000..=6000).contains(&biggest), "chunk sizes {sizes:?}");
    }

    #[test]
    fn a_first_chunk_timed_too_fast_does_not_swallow_the_call() {
        // The first item is free (warm caches), the rest cost 200 µs each: 0.4 s.
        let sizes = chunk_sizes(2000, |range| {
            let paid = if range.start == 0 {
                range.len() - 1
            } else {
                range.len()
            };
            Duration::from_micros(200 * paid as u64)
        });
        assert!(
            sizes.windows(2).all(|w| w[1] <= 2 * w[0]),
            "chunk sizes {sizes:?}"
        );
        // About 50 ms (250 items) a chunk once the rate is known: several chunks.
        assert!(
            sizes.len() >= 6 && *sizes.iter().max().unwrap() <= 600,
            "chunk sizes {sizes:?}"
        );
    }
}

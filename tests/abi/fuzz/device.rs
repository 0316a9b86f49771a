//! The device calls (`sg_*_device*`, with `sg_context_set_stream`,
//! `sg_context_set_device_checks` and `sg_context_synchronize`): small plans of every
//! capability made on the thread, and calls on them with random, partly wrong arguments.
//! Device addresses come from `memory`: on a CUDA context real allocations holding exactly
//! what the call touches, or addresses the library must refuse before it queues anything,
//! each refusal a planted fault named by the argument; on a CPU context every call is
//! refused for its context. A call whose arguments are all valid must succeed; after some,
//! the context's stream is waited for and must report no fault (every input is finite, so
//! none with the device checks on either).

mod dwt;
mod emlog;
mod fxdecon;
mod memory;
mod usfft;
mod wavepacket;
mod wavepacket_coeffs;
mod xcorr;

use super::{Faults, Fuzz, Snapshot, Target};
use memory::Memory;
use seisgpu::ffi::context::*;
use seisgpu::ffi::status::*;
use std::ptr;

struct Device {
    mem: Option<Memory>,
    dwt: dwt::Dwt,
    usfft: usfft::Usfft,
    fxdecon: fxdecon::Fxdecon,
    xcorr: xcorr::Xcorr,
    emlog: emlog::Emlog,
    wavepacket: wavepacket::Wavepacket,
}

pub fn target() -> Box<dyn Target> {
    Box::new(Device {
        mem: None,
        dwt: Default::default(),
        usfft: Default::default(),
        fxdecon: Default::default(),
        xcorr: Default::default(),
        emlog: Default::default(),
        wavepacket: Default::default(),
    })
}

impl Target for Device {
    fn step(&mut self, f: &mut Fuzz) {
        // Made on the thread's first call (it asks the context for its backend).
        let mem = self.mem.get_or_insert_with(|| Memory::new(f));
        match f.rng.range(0, 99) {
            0..=3 => context(f, mem),
            4..=16 => self.dwt.step(f, mem),
            17..=29 => self.usfft.step(f, mem),
            30..=43 => self.fxdecon.step(f, mem),
            44..=57 => self.xcorr.step(f, mem),
            58..=78 => self.emlog.step(f, mem),
            _ => self.wavepacket.step(f, mem),
        }
        mem.release();
    }
}

/// Checks a device call like any other (the host buffers given as device addresses among
/// the outputs); after a success on a CUDA context, sometimes waits for the stream.
pub fn check(
    f: &mut Fuzz,
    mem: &mut Memory,
    name: &'static str,
    s: sg_status,
    k: &Faults,
    outputs: Vec<Snapshot>,
) {
    let mut outputs = outputs;
    outputs.extend(mem.snapshots());
    f.check(name, s, k, &outputs);
    if s == SG_OK && mem.cuda() && f.rng.chance(0.1) {
        let ctx = f.ctx;
        synchronize(f, ctx);
    }
}

/// `sg_context_synchronize`: SG_OK unless a kernel of the work queued so far faulted.
fn synchronize(f: &mut Fuzz, ctx: *const sg_context) {
    let mut k = Faults::default();
    if ctx.is_null() {
        k.plant("ctx");
    }
    f.announce("sg_context_synchronize", String::new);
    let s = sg_context_synchronize(ctx);
    f.check("sg_context_synchronize", s, &k, &[]);
}

/// The context's device-call settings: `sg_context_set_stream`, `sg_context_set_device_checks`
/// and `sg_context_synchronize`.
fn context(f: &mut Fuzz, mem: &mut Memory) {
    match f.rng.range(0, 3) {
        0 | 1 => {
            let ctx = if f.rng.chance(0.2) {
                ptr::null()
            } else {
                f.ctx as *const _
            };
            synchronize(f, ctx)
        }
        2 => set_stream(f, mem),
        _ => set_device_checks(f, mem),
    }
}

/// On a CUDA context only with a NULL context: the stream of a context must not change
/// while other threads' calls run on it.
fn set_stream(f: &mut Fuzz, mem: &mut Memory) {
    let mut k = mem.faults();
    let ctx = if !mem.cuda() && f.rng.chance(0.8) {
        f.ctx
    } else {
        k.plant("ctx");
        ptr::null_mut()
    };
    let any = f.rng.next();
    let stream = f.rng.pick(&[0, 0x5151, any]);
    f.announce("sg_context_set_stream", || format!("{stream:#x}"));
    let s = sg_context_set_stream(ctx, stream);
    check(f, mem, "sg_context_set_stream", s, &k, Vec::new());
}

/// Checks on or off (any thread may switch them: every device input the fuzzer makes is
/// finite, so `sg_context_synchronize` must report nothing either way), or a bad value.
fn set_device_checks(f: &mut Fuzz, mem: &mut Memory) {
    let mut k = mem.faults();
    let ctx = if f.rng.chance(0.1) {
        k.plant("ctx");
        ptr::null_mut()
    } else {
        f.ctx
    };
    let mut checks = f.rng.pick(&[SG_DEVICE_CHECKS_OFF, SG_DEVICE_CHECKS_FINITE]);
    if f.rng.chance(0.2) {
        k.plant("checks");
        checks = f.rng.bad_enum(&[0, 1]);
    }
    let name = "sg_context_set_device_checks";
    f.announce(name, || format!("{checks}"));
    let s = sg_context_set_device_checks(ctx, checks);
    check(f, mem, name, s, &k, Vec::new());
}

/// A plan handle, or (a planted fault `name`, with probability `p`) NULL.
pub fn or_null<P>(
    f: &mut Fuzz,
    k: &mut Faults,
    p: *mut P,
    name: &'static str,
    chance: f64,
) -> *mut P {
    if f.rng.chance(chance) {
        k.plant(name);
        ptr::null_mut()
    } else {
        p
    }
}

/// Checks a call made to set up the fuzzer's own plans (no fault planted: it must succeed).
pub fn setup(f: &mut Fuzz, name: &'static str, s: sg_status) -> bool {
    f.check(name, s, &Faults::default(), &[]);
    s == SG_OK
}

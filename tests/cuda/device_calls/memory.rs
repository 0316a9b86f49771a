//! Device memory the application owns (`sg_context_set_device_allocator`) and plans that
//! allocate at creation: a counting allocator hook, with a byte budget, sees every byte the
//! library takes and gets each back; the plans' `workspace_bytes` equal what the hooks gave
//! while they were created; device calls after creation allocate nothing (USFFT, F-X,
//! wave packets; the DWT, EM logging and xcorr in `workspaces.rs`); results equal the
//! default allocator's bit for bit; a budget too small gives SG_ERR_DEVICE_OUT_OF_MEMORY at
//! creation, naming the plan and the sizes, and a smaller plan then works on the same
//! context. The hooks and checks here serve `workspaces.rs` too.

use super::*;
use cudarc::driver::result as driver;
use cudarc::driver::sys::CUstream;
use seisgpu::ffi::context::memory::*;
use seisgpu::ffi::fxdecon::device::*;
use seisgpu::ffi::fxdecon::*;
use seisgpu::ffi::usfft::device::*;
use seisgpu::ffi::usfft::*;
use seisgpu::ffi::wavepacket::device::*;
use seisgpu::ffi::wavepacket::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

/// What the hooks gave and took back, and how much they may give at once.
#[derive(Default)]
pub(super) struct Counter {
    allocs: AtomicUsize,
    frees: AtomicUsize,
    live: AtomicUsize,
    budget: AtomicUsize,
    pub(super) refused: AtomicUsize,
}

impl Counter {
    pub(super) fn with_budget(bytes: usize) -> Box<Counter> {
        let c = Box::<Counter>::default();
        c.budget.store(bytes, SeqCst);
        c
    }
    /// Bytes the hooks hold now.
    pub(super) fn live(&self) -> usize {
        self.live.load(SeqCst)
    }

    /// (allocations, frees, live bytes).
    pub(super) fn seen(&self) -> (usize, usize, usize) {
        (
            self.allocs.load(SeqCst),
            self.frees.load(SeqCst),
            self.live.load(SeqCst),
        )
    }
}

unsafe extern "C" fn counted_alloc(
    user: *mut c_void,
    bytes: usize,
    stream: u64,
    ptr: *mut u64,
) -> i32 {
    // SAFETY: `user` is the test's Counter, alive while its context is.
    let c = unsafe { &*(user as *const Counter) };
    if c.live.load(SeqCst) + bytes > c.budget.load(SeqCst) {
        c.refused.fetch_add(1, SeqCst);
        return 1;
    }
    // SAFETY: the library calls the hook with its context current; the stream is its own.
    match unsafe { driver::malloc_async(stream as CUstream, bytes) } {
        Ok(p) => {
            c.allocs.fetch_add(1, SeqCst);
            c.live.fetch_add(bytes, SeqCst);
            // SAFETY: the library's place for the answer.
            unsafe { *ptr = p };
            0
        }
        Err(_) => 1,
    }
}

unsafe extern "C" fn counted_free(user: *mut c_void, ptr: u64, bytes: usize, stream: u64) {
    // SAFETY: as in counted_alloc.
    let c = unsafe { &*(user as *const Counter) };
    // SAFETY: memory counted_alloc gave, freed in the stream's order.
    unsafe { driver::free_async(ptr, stream as CUstream) }.expect("a stream-ordered free");
    c.frees.fetch_add(1, SeqCst);
    c.live.fetch_sub(bytes, SeqCst);
}

/// Once the context's stream has run: the hooks gave something, got every byte back, and
/// the context holds nothing (every plan destroyed).
pub(super) fn assert_all_given_back(c: &Counter, g: &Gpu) {
    g.synchronize();
    let (allocs, frees, live) = c.seen();
    assert!(allocs > 0, "the hooks gave nothing");
    assert_eq!((allocs, live), (frees, 0), "every byte given back");
    assert_eq!(
        in_use(g),
        0,
        "the context holds nothing once the plans are gone"
    );
}

/// A CUDA context whose device memory comes from `counter`'s hooks.
pub(super) fn hooked(counter: &Counter) -> Option<Gpu> {
    let g = gpu()?;
    let user = counter as *const Counter as *mut c_void;
    let s = sg_context_set_device_allocator(g.ctx, Some(counted_alloc), Some(counted_free), user);
    assert_eq!(s, SG_OK, "{}", message());
    Some(g)
}

pub(super) fn in_use(g: &Gpu) -> usize {
    let (mut now, mut peak) = (0, 0);
    assert_eq!(sg_context_device_memory(g.ctx, &mut now, &mut peak), SG_OK);
    assert!(peak >= now);
    now
}

fn usfft_plan(g: &Gpu, modes: [usize; 2]) -> Result<*mut sg_usfft_plan, sg_status> {
    let mut p = std::ptr::null_mut();
    let s = sg_usfft_plan_create(
        g.ctx,
        SG_USFFT_TYPE2,
        2,
        modes.as_ptr(),
        -1,
        1e-5,
        SG_USFFT_F32,
        1,
        std::ptr::null(),
        &mut p,
    );
    if s == SG_OK {
        Ok(p)
    } else {
        Err(s)
    }
}

fn fx_plan(g: &Gpu, n: usize, traces: usize) -> Result<*mut sg_fxdecon_plan, sg_status> {
    let mut p = std::ptr::null_mut();
    let o = sg_fxdecon_options_default();
    match sg_fxdecon_plan_create_2d(g.ctx, &o, n, traces, &mut p) {
        SG_OK => Ok(p),
        s => Err(s),
    }
}

fn layout(g: &Gpu, shape: [usize; 2]) -> Result<*mut sg_wavepacket_layout, sg_status> {
    let mut l = std::ptr::null_mut();
    let s = sg_wavepacket_layout_create(
        g.ctx,
        2,
        shape.as_ptr(),
        8,
        0,
        0.0,
        0.0,
        1e-6,
        SG_WAVEPACKET_F32,
        &mut l,
    );
    match s {
        SG_OK => Ok(l),
        s => Err(s),
    }
}

/// What the hooks gave while `make` ran and still hold, and the plan it made.
pub(super) fn made<P>(c: &Counter, make: impl FnOnce() -> Result<P, sg_status>) -> (P, usize) {
    let before = c.live.load(SeqCst);
    let p = make().unwrap_or_else(|s| panic!("status {s}: {}", message()));
    (p, c.live.load(SeqCst) - before)
}

fn points(m: usize) -> (Vec<f32>, Vec<f32>) {
    let x = (0..m)
        .map(|i| ((i as f32 * 0.618).fract() - 0.5) * 6.0)
        .collect();
    let y = (0..m)
        .map(|i| ((i as f32 * 0.414).fract() - 0.5) * 6.0)
        .collect();
    (x, y)
}

/// A type-2 USFFT on `g`: the plan's workspace, then five device executes; the strengths.
fn usfft_run(g: &Gpu, c: Option<&Counter>) -> Vec<u64> {
    let (modes, m) = ([48usize, 40], 3000usize);
    let (p, held) = match c {
        Some(c) => made(c, || usfft_plan(g, modes)),
        None => (usfft_plan(g, modes).unwrap(), 0),
    };
    let mut bytes = 0;
    assert_eq!(sg_usfft_plan_workspace_bytes(p, &mut bytes), SG_OK);
    if c.is_some() {
        assert_eq!(
            bytes, held,
            "workspace_bytes against the hooks, at creation"
        );
        assert!(
            held > 2 * modes[0] * modes[1] * 8,
            "the fine grid made at creation"
        );
    }
    let (x, y) = points(m);
    let null = std::ptr::null();
    assert_eq!(
        sg_usfft_set_points_f32(p, m, x.as_ptr(), y.as_ptr(), null),
        SG_OK
    );
    let f: Vec<f32> = (0..2 * modes[0] * modes[1])
        .map(|i| ((i * 5 % 11) as f32 - 5.0) / 5.0)
        .collect();
    let (fd, cd) = (g.upload(&f), g.zeros::<f32>(2 * m));
    g.synchronize();
    let before = c.map(|c| c.seen());
    for _ in 0..5 {
        let s = sg_usfft_execute_device_f32(p, cd.addr(), fd.addr());
        assert_eq!(s, SG_OK, "{}", message());
    }
    g.synchronize();
    if let Some(c) = c {
        assert_eq!(
            Some(c.seen()),
            before,
            "a device execute allocated or freed"
        );
        assert_eq!(sg_usfft_plan_workspace_bytes(p, &mut bytes), SG_OK);
        assert!(bytes > held, "the point buffers count towards the plan");
        assert_eq!(in_use(g), bytes, "the context holds the plan's bytes alone");
        assert_eq!(
            c.live.load(SeqCst),
            bytes,
            "every one of them from the hooks"
        );
    }
    let out = bits(&g.download(&cd));
    sg_usfft_plan_destroy(p);
    out
}

#[test]
fn usfft_memory_comes_from_the_hooks_and_device_executes_allocate_nothing() {
    let c = Counter::with_budget(usize::MAX);
    let Some(g) = hooked(&c) else { return };
    let with_hooks = usfft_run(&g, Some(&c));
    assert_all_given_back(&c, &g);
    let plain = gpu().unwrap();
    assert!(
        usfft_run(&plain, None) == with_hooks,
        "the hooks' results differ"
    );
}

/// An F-X filter of a 2D section on `g`: workspace, device calls; the output.
fn fx_run(g: &Gpu, c: Option<&Counter>) -> Vec<u64> {
    let (n, traces) = (128usize, 40usize);
    let (p, held) = match c {
        Some(c) => made(c, || fx_plan(g, n, traces)),
        None => (fx_plan(g, n, traces).unwrap(), 0),
    };
    let mut bytes = 0;
    assert_eq!(sg_fxdecon_plan_workspace_bytes(p, &mut bytes), SG_OK);
    if c.is_some() {
        assert_eq!(
            bytes, held,
            "workspace_bytes against the hooks, at creation"
        );
        assert!(held > 0, "slabs, tables and FFT plans made at creation");
    }
    let input: Vec<f32> = (0..n * traces)
        .map(|k| ((k % n) as f32 * 0.21 - (k / n) as f32 * 0.7).sin())
        .collect();
    let (id, od) = (g.upload(&input), g.zeros::<f32>(n * traces));
    g.synchronize();
    let before = c.map(|c| c.seen());
    for _ in 0..3 {
        let s = sg_fxdecon_execute_2d_device_f32(p, id.addr(), od.addr(), n);
        assert_eq!(s, SG_OK, "{}", message());
    }
    g.synchronize();
    if let Some(c) = c {
        assert_eq!(
            Some(c.seen()),
            before,
            "a device F-X call allocated or freed"
        );
    }
    let out = bits(&g.download(&od));
    sg_fxdecon_plan_destroy(p);
    out
}

#[test]
fn fxdecon_memory_comes_from_the_hooks_and_device_calls_allocate_nothing() {
    let c = Counter::with_budget(usize::MAX);
    let Some(g) = hooked(&c) else { return };
    let with_hooks = fx_run(&g, Some(&c));
    assert_all_given_back(&c, &g);
    let plain = gpu().unwrap();
    // Overlapping windows add into a trace's spectrum atomically: equal to rounding.
    let plain = fx_run(&plain, None);
    let as_f32 = |v: &[u64]| -> Vec<f32> { v.iter().map(|&b| f64::from_bits(b) as f32).collect() };
    let what = "the hooks' F-X output";
    assert_close(what, &as_f32(&with_hooks), &as_f32(&plain), 1e-5);
}

/// A wave-packet forward and adjoint on device arrays on `g`: the coefficients' bits and
/// the adjoint's data.
fn wavepacket_run(g: &Gpu, c: Option<&Counter>) -> (Vec<u64>, Vec<f32>) {
    let shape = [32usize, 24];
    let (l, held) = match c {
        Some(c) => made(c, || layout(g, shape)),
        None => (layout(g, shape).unwrap(), 0),
    };
    let mut bytes = 0;
    assert_eq!(sg_wavepacket_layout_workspace_bytes(l, &mut bytes), SG_OK);
    if c.is_some() {
        assert_eq!(
            bytes, held,
            "workspace_bytes against the hooks, at creation"
        );
    }
    let (mut ns, mut nc, mut nb, mut lv, mut nd) = (0, 0, 0, 0, 0);
    let s = sg_wavepacket_layout_sizes(l, &mut ns, &mut nc, &mut nb, &mut lv, &mut nd);
    assert_eq!(s, SG_OK);
    let data: Vec<f32> = (0..ns)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0)
        .collect();
    let (dd, cd, back) = (g.upload(&data), g.zeros::<f32>(2 * nc), g.zeros::<f32>(ns));
    g.synchronize();
    let before = c.map(|c| c.seen());
    for _ in 0..3 {
        assert_eq!(
            sg_wavepacket_forward_device_f32(l, dd.addr(), cd.addr()),
            SG_OK,
            "{}",
            message()
        );
        assert_eq!(
            sg_wavepacket_adjoint_device_f32(l, cd.addr(), back.addr()),
            SG_OK,
            "{}",
            message()
        );
    }
    g.synchronize();
    if let Some(c) = c {
        assert_eq!(
            Some(c.seen()),
            before,
            "a device wave-packet call allocated or freed"
        );
    }
    let out = (bits(&g.download(&cd)), g.download(&back));
    sg_wavepacket_layout_destroy(l);
    out
}

#[test]
fn wavepacket_memory_comes_from_the_hooks_and_device_calls_allocate_nothing() {
    let c = Counter::with_budget(usize::MAX);
    let Some(g) = hooked(&c) else { return };
    let with_hooks = wavepacket_run(&g, Some(&c));
    assert_all_given_back(&c, &g);
    let plain = gpu().unwrap();
    // The forward is a gather: bit for bit. The adjoint's type-1 USFFT adds into its fine
    // grid with atomics, whose order differs between two plans: within f32 rounding.
    let (coeffs, data) = wavepacket_run(&plain, None);
    assert!(coeffs == with_hooks.0, "the hooks' coefficients differ");
    assert_close("the hooks' adjoint", &with_hooks.1, &data, 1e-5);
}

/// `status` and the last message: out of device memory, naming `plan` and the sizes.
pub(super) fn refused_for_memory(status: sg_status, plan: &str) {
    assert_eq!(status, SG_ERR_DEVICE_OUT_OF_MEMORY, "{}", message());
    let m = message();
    for part in [
        plan,
        "bytes asked for",
        "free on the device",
        "the application's allocator",
    ] {
        assert!(m.contains(part), "{part:?} not in {m}");
    }
}

/// Per capability whose plans allocate at creation: a budget too small refuses the plan
/// with SG_ERR_DEVICE_OUT_OF_MEMORY, nothing kept; a smaller plan then works.
#[test]
fn a_budget_too_small_refuses_the_plan_and_the_context_stays_usable() {
    let c = Counter::with_budget(4 << 20);
    let Some(g) = hooked(&c) else { return };
    // A 1024 × 1024 type 2 needs a 2048² complex fine grid: 32 MB.
    let s = usfft_plan(&g, [1024, 1024]).unwrap_err();
    refused_for_memory(s, "creating the USFFT plan");
    let p = usfft_plan(&g, [32, 32]).unwrap_or_else(|s| panic!("{s}: {}", message()));
    sg_usfft_plan_destroy(p);

    let s = layout(&g, [512, 512]).unwrap_err();
    refused_for_memory(s, "creating the wave-packet plan");
    let l = layout(&g, [32, 24]).unwrap_or_else(|s| panic!("{s}: {}", message()));
    sg_wavepacket_layout_destroy(l);

    let s = fx_plan(&g, 8192, 2048).unwrap_err();
    refused_for_memory(s, "creating the F-X plan");
    let p = fx_plan(&g, 128, 40).unwrap_or_else(|s| panic!("{s}: {}", message()));
    sg_fxdecon_plan_destroy(p);

    assert!(c.refused.load(SeqCst) >= 3);
    // Nothing kept by a refused plan.
    assert_all_given_back(&c, &g);
}

/// Without hooks: most of the device's free memory taken by the application (cuMemAlloc),
/// a plan too big is refused with SG_ERR_DEVICE_OUT_OF_MEMORY naming the sizes; once the
/// memory is freed, the same plan is made on the same context. It takes the device's memory
/// from every other test of the process: run it alone.
#[test]
#[ignore = "takes most of the device's memory: run alone with --ignored"]
fn real_device_memory_exhausted_refuses_the_plan_then_it_works() {
    let Some(g) = gpu() else { return };
    let (free, _) = g.cuda.mem_get_info().expect("free memory");
    let keep = 256usize << 20;
    let hog: cudarc::driver::CudaSlice<u8> =
        // SAFETY: never read.
        unsafe { g.stream.alloc::<u8>(free.saturating_sub(keep)) }.expect("taking the free memory");
    g.stream.synchronize().unwrap();
    // A 8192 × 8192 type 2: a 16384² complex f32 fine grid, 2 GB.
    let s = usfft_plan(&g, [8192, 8192]).unwrap_err();
    assert_eq!(s, SG_ERR_DEVICE_OUT_OF_MEMORY, "{}", message());
    let m = message();
    assert!(
        m.contains("creating the USFFT plan") && m.contains("bytes asked for"),
        "{m}"
    );
    assert!(m.contains("free on the device"), "{m}");
    assert_eq!(in_use(&g), 0, "nothing kept");
    drop(hog);
    g.stream.synchronize().unwrap();
    let p = usfft_plan(&g, [8192, 8192]).unwrap_or_else(|s| panic!("{s}: {}", message()));
    sg_usfft_plan_destroy(p);
}

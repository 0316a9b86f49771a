//! Typed device arrays as the layer passes them to kernels, copies and libraries.
//!
//! The library's own buffers are cudarc's `CudaSlice<T>` (and its views); arrays the caller
//! owns arrive as a `CUdeviceptr` and are wrapped once, where they enter, in a
//! [`CallerArray`] whose constructor is `unsafe`. Past that point no safe function takes a
//! raw address: kernels, staging and cuFFT see `&impl DeviceArray<T>` or
//! `&mut impl DeviceArrayMut<T>`, whose element type and length travel with the address.

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DevicePtr};
use num_complex::Complex;
use std::marker::PhantomData;

/// A device array of `len()` elements of `T`, readable on the stream it is used on.
///
/// # Safety
/// `addr()` is the address of `len()` elements of `T` in device memory that stay allocated
/// while the value lives: safe functions (launches, copies, cuFFT) trust it.
pub unsafe trait DeviceArray<T> {
    /// The address of element 0. Reading it on another stream than the array's own is the
    /// caller's business (the library uses each array on one stream).
    fn addr(&self) -> u64;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn bytes(&self) -> usize {
        self.len() * std::mem::size_of::<T>()
    }
}

/// A device array the holder may write.
///
/// # Safety
/// As `DeviceArray`, and the memory is the holder's to write.
pub unsafe trait DeviceArrayMut<T>: DeviceArray<T> {}

/// `DeviceArray` (with `mut`, `DeviceArrayMut` too) for a type `$t<'_, T>` whose `addr`
/// and `len` fields are the array: its constructors make them the address and length of
/// memory the value borrows (from a checked parent, or through an `unsafe` constructor).
macro_rules! fields_array {
    ($t:ident) => {
        // SAFETY: the fields are the address and length of memory the value borrows.
        unsafe impl<T> $crate::backend::cuda::array::DeviceArray<T> for $t<'_, T> {
            fn addr(&self) -> u64 {
                self.addr
            }
            fn len(&self) -> usize {
                self.len
            }
        }
    };
    ($t:ident, mut) => {
        $crate::backend::cuda::array::fields_array!($t);
        // SAFETY: as `DeviceArray`, and the value borrows the memory for writing.
        unsafe impl<T> $crate::backend::cuda::array::DeviceArrayMut<T> for $t<'_, T> {}
    };
}
pub(crate) use fields_array;

/// The address of a slice or view on its own stream (cudarc orders it after the array's
/// last write there when it tracks events).
fn addr_on_own_stream<T, S: DevicePtr<T>>(s: &S) -> u64 {
    let stream = s.stream().clone();
    let (addr, _record) = s.device_ptr(&stream);
    addr
}

// SAFETY: the address and length of memory this value owns or borrows.
unsafe impl<T> DeviceArray<T> for CudaSlice<T> {
    fn addr(&self) -> u64 {
        addr_on_own_stream(self)
    }
    fn len(&self) -> usize {
        CudaSlice::len(self)
    }
}
// SAFETY: the address and length of memory this value owns or borrows.
unsafe impl<T> DeviceArrayMut<T> for CudaSlice<T> {}

// SAFETY: the address and length of memory this value owns or borrows.
unsafe impl<T> DeviceArray<T> for CudaView<'_, T> {
    fn addr(&self) -> u64 {
        addr_on_own_stream(self)
    }
    fn len(&self) -> usize {
        CudaView::len(self)
    }
}

// SAFETY: the address and length of memory this value owns or borrows.
unsafe impl<T> DeviceArray<T> for CudaViewMut<'_, T> {
    fn addr(&self) -> u64 {
        addr_on_own_stream(self)
    }
    fn len(&self) -> usize {
        CudaViewMut::len(self)
    }
}
// SAFETY: the address and length of memory this value owns or borrows.
unsafe impl<T> DeviceArrayMut<T> for CudaViewMut<'_, T> {}

/// An array in device memory the caller owns (a `CUdeviceptr` passed through the C ABI),
/// borrowed for one call.
#[derive(Clone, Copy, Debug)]
pub struct CallerArray<'a, T> {
    addr: u64,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> CallerArray<'_, T> {
    /// # Safety
    /// `addr` is device memory of the context's device holding `len` elements of `T`, valid
    /// (and not freed by the caller) for the lifetime of the value; a value used as an
    /// output is memory the caller lets this call write.
    pub unsafe fn new(addr: u64, len: usize) -> Self {
        CallerArray {
            addr,
            len,
            _borrow: PhantomData,
        }
    }
}

fields_array!(CallerArray, mut);

/// Elements `start..start + len` of an array, for chunked launches and copies: the range
/// is checked here, so a sub-array never reaches past its parent.
#[derive(Clone, Copy, Debug)]
pub struct Part<'a, T> {
    addr: u64,
    len: usize,
    _borrow: PhantomData<&'a [T]>,
}

/// `part` for writing.
#[derive(Debug)]
pub struct PartMut<'a, T> {
    addr: u64,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

fn offset<T>(whole: usize, start: usize, len: usize) -> u64 {
    assert!(
        start.checked_add(len).is_some_and(|end| end <= whole),
        "device sub-array {start}..{start}+{len} outside an array of {whole} elements"
    );
    (start * std::mem::size_of::<T>()) as u64
}

/// Elements `start..start + len` of `a`, read-only.
pub fn part<T, A: DeviceArray<T> + ?Sized>(a: &A, start: usize, len: usize) -> Part<'_, T> {
    Part {
        addr: a.addr() + offset::<T>(a.len(), start, len),
        len,
        _borrow: PhantomData,
    }
}

/// Elements `start..start + len` of `a`, writable.
pub fn part_mut<T, A: DeviceArrayMut<T> + ?Sized>(
    a: &mut A,
    start: usize,
    len: usize,
) -> PartMut<'_, T> {
    PartMut {
        addr: a.addr() + offset::<T>(a.len(), start, len),
        len,
        _borrow: PhantomData,
    }
}

fields_array!(Part);
fields_array!(PartMut, mut);

/// A complex array seen as its interleaved (re, im) reals, as the kernels take it.
pub fn reals<T, A: DeviceArray<Complex<T>> + ?Sized>(a: &A) -> Part<'_, T> {
    Part {
        addr: a.addr(),
        len: 2 * a.len(),
        _borrow: PhantomData,
    }
}

/// `reals` for writing.
pub fn reals_mut<T, A: DeviceArrayMut<Complex<T>> + ?Sized>(a: &mut A) -> PartMut<'_, T> {
    PartMut {
        addr: a.addr(),
        len: 2 * a.len(),
        _borrow: PhantomData,
    }
}

/// Interleaved reals seen as complex values (an even count), as cuFFT takes them.
pub fn complex<T, A: DeviceArray<T> + ?Sized>(a: &A) -> Part<'_, Complex<T>> {
    assert!(a.len() % 2 == 0, "an odd number of interleaved reals");
    Part {
        addr: a.addr(),
        len: a.len() / 2,
        _borrow: PhantomData,
    }
}

/// `complex` for writing.
pub fn complex_mut<T, A: DeviceArrayMut<T> + ?Sized>(a: &mut A) -> PartMut<'_, Complex<T>> {
    assert!(a.len() % 2 == 0, "an odd number of interleaved reals");
    PartMut {
        addr: a.addr(),
        len: a.len() / 2,
        _borrow: PhantomData,
    }
}

/// Bytes a piece of `len` elements of `T` takes in [`Pieces`] (at least one element,
/// rounded up to 256 bytes, the alignment the kernels may assume of an array).
pub fn piece_bytes<T>(len: usize) -> usize {
    (len.max(1) * std::mem::size_of::<T>()).next_multiple_of(256)
}

/// Disjoint typed arrays cut one after another from a buffer of bytes (a plan's
/// workspace): each starts 256-aligned and takes [`piece_bytes`]; asking for more than the
/// buffer holds panics (the call sized it: an internal bug).
pub struct Pieces<'a> {
    addr: u64,
    bytes: usize,
    used: usize,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl<'a> Pieces<'a> {
    /// The pieces of `a`, borrowed for writing while they live.
    pub fn of<U, A: DeviceArrayMut<U> + ?Sized>(a: &'a mut A) -> Pieces<'a> {
        Pieces {
            addr: a.addr(),
            bytes: a.bytes(),
            used: 0,
            _borrow: PhantomData,
        }
    }

    /// Bytes the buffer holds.
    pub fn capacity(&self) -> usize {
        self.bytes
    }

    /// `len` elements of `T` (at least one) from byte `offset` (a multiple of 256), not
    /// moving the cut; panics outside the buffer.
    ///
    /// # Safety
    /// No other array from these pieces that is still in use overlaps the range: the caller
    /// keeps the arrays it hands out disjoint (a stack of pieces, `workspace::Arena`).
    pub unsafe fn at<T>(&self, offset: usize, len: usize) -> PartMut<'a, T> {
        let need = piece_bytes::<T>(len);
        assert!(
            offset % 256 == 0 && self.addr % 256 == 0 && offset + need <= self.bytes,
            "a workspace of {} bytes asked for {need} at {offset}",
            self.bytes
        );
        PartMut {
            addr: self.addr + offset as u64,
            len: len.max(1),
            _borrow: PhantomData,
        }
    }

    /// The next `len` elements of `T` (at least one).
    pub fn take<T>(&mut self, len: usize) -> PartMut<'a, T> {
        let need = piece_bytes::<T>(len);
        assert!(
            self.addr % 256 == 0 && self.used + need <= self.bytes,
            "a workspace of {} bytes asked for {need} more after {}",
            self.bytes,
            self.used
        );
        let addr = self.addr + self.used as u64;
        self.used += need;
        PartMut {
            addr,
            len: len.max(1),
            _borrow: PhantomData,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(len: usize) -> CallerArray<'static, f32> {
        // SAFETY: never dereferenced: only addresses and lengths are computed.
        unsafe { CallerArray::new(0x1000, len) }
    }

    #[test]
    fn parts_are_offset_in_elements_and_stay_inside() {
        let a = caller(100);
        let p = part(&a, 10, 20);
        assert_eq!((p.addr(), p.len()), (0x1000 + 40, 20));
        let q = part(&p, 5, 15);
        assert_eq!((q.addr(), q.len()), (0x1000 + 60, 15));
        assert!(std::panic::catch_unwind(|| part(&a, 90, 11)).is_err());
        assert!(std::panic::catch_unwind(|| part(&a, usize::MAX, 2)).is_err());
    }

    #[test]
    fn complex_views_count_pairs() {
        let a = caller(64);
        let c = complex(&a);
        assert_eq!(c.len(), 32);
        assert_eq!(reals(&c).len(), 64);
        assert!(std::panic::catch_unwind(|| complex(&caller(63)).len()).is_err());
    }

    #[test]
    fn pieces_are_aligned_disjoint_and_stay_inside() {
        let mut a = unsafe_bytes(1024);
        let mut p = Pieces::of(&mut a);
        let x = p.take::<f64>(3);
        let y = p.take::<i32>(0);
        assert_eq!(
            (x.addr(), x.len(), y.addr(), y.len()),
            (0x1000, 3, 0x1100, 1)
        );
        assert_eq!(piece_bytes::<f32>(65), 512);
        let _ = p.take::<u8>(512);
        let mut p = std::panic::AssertUnwindSafe(p);
        assert!(std::panic::catch_unwind(move || p.take::<u8>(1).len()).is_err());
    }

    fn unsafe_bytes(len: usize) -> CallerArray<'static, u8> {
        // SAFETY: never dereferenced: only addresses and lengths are computed.
        unsafe { CallerArray::new(0x1000, len) }
    }
}

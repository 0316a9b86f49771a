//! A caller's cudarc slices used on one of the library's streams.
//!
//! cudarc orders each slice's uses across streams with events. Taken for `stream` through
//! cudarc, the address makes the stream first wait for the slice's last write (and, to
//! write it, its last reads); the value records this use when dropped, so it is kept until
//! the work that uses the slice is queued, and the slice's next use elsewhere waits for it.
//! The library's own buffers stay on their stream and need none of this (`array.rs`), and
//! the library's context does not track events (`primary_context`): a slice made there is
//! ordered only by the stream it is used on.

use super::array::fields_array;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop};
use std::marker::PhantomData;

/// A caller's slice read by work queued on a library stream.
#[derive(Debug)]
pub struct ReadOn<'a, T> {
    addr: u64,
    len: usize,
    _use: SyncOnDrop<'a>,
    _borrow: PhantomData<&'a [T]>,
}

/// A caller's slice written by work queued on a library stream.
#[derive(Debug)]
pub struct WriteOn<'a, T> {
    addr: u64,
    len: usize,
    _use: SyncOnDrop<'a>,
    _borrow: PhantomData<&'a mut [T]>,
}

/// `slice`, to be read on `stream`.
pub fn read_on<'a, T>(slice: &'a CudaSlice<T>, stream: &'a CudaStream) -> ReadOn<'a, T> {
    let (addr, use_) = slice.device_ptr(stream);
    ReadOn {
        addr,
        len: slice.len(),
        _use: use_,
        _borrow: PhantomData,
    }
}

/// `slice`, to be written on `stream`.
pub fn write_on<'a, T>(slice: &'a mut CudaSlice<T>, stream: &'a CudaStream) -> WriteOn<'a, T> {
    let len = slice.len();
    let (addr, use_) = slice.device_ptr_mut(stream);
    WriteOn {
        addr,
        len,
        _use: use_,
        _borrow: PhantomData,
    }
}

fields_array!(ReadOn);
fields_array!(WriteOn, mut);

//! A search's results written to the caller's device arrays, on the caller's stream,
//! without waiting: histograms a device search left on the device are copied device to
//! device. (Values the result holds on the host, the listed models and a host search's
//! histograms, are copied straight from host memory: `buffers::write`.)

use crate::backend::cuda::array::{part, DeviceArrayMut};
use crate::backend::cuda::buffers::copy;
use crate::backend::cuda::caller::ordered_on;
use crate::backend::cuda::memory::DeviceBuf;
use crate::backend::cuda::CudaBackend;
use crate::error::Result;

/// Elements `start..start + dst.len()` of a device search's histograms into `dst`. The
/// copy runs on the histograms' own stream between the caller's earlier and later work,
/// so that freeing them (a result destroyed) waits for it.
pub fn bins_to_caller(
    gpu: &CudaBackend,
    bins: &DeviceBuf<u64>,
    start: usize,
    dst: &mut impl DeviceArrayMut<u64>,
    what: &'static str,
) -> Result<()> {
    gpu.bind()?;
    let own = bins.stream().clone();
    let src = part(bins, start, dst.len());
    ordered_on(&gpu.caller_stream(), &own, || copy(&own, &src, dst, what))
}

use super::CudaBackend;
use crate::backend::cpu::CpuBackend;
use crate::error::Result;
use crate::fxdecon::geometry::Setup;
use crate::fxdecon::Volume;
pub fn execute(_gpu: &CudaBackend, cpu: &CpuBackend, s: &Setup, input: &[f32], output: &mut [f32], layout: Volume) -> Result<()> {
    crate::backend::cpu::fxdecon::execute(cpu, s, input, output, layout)
}

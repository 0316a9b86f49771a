! wavepacket: Gaussian wave packets on a 2D section from Fortran, in double precision.
!
! A 90 x 50 section (axis 1 fastest: time) holding two dipping reflections (Ricker wavelets
! of 0.1 cycles/sample) is decomposed over 12 directions (6 stored) and the automatic
! number of levels through the module in include/seisgpu.f90. (3D layouts are made the same
! way with dim 3, three sizes and a Lebedev rule size as the direction count.) Stops with a
! non-zero exit status when
!   1. <C f, c> and <f, C* c> differ by more than 1e-11 (relative) for random f and c;
!   2. forward then inverse misses the cube by more than 1e-9 (relative; USFFT tol 1e-10);
!   3. keeping the largest coefficients (as many complex values as 5 % of the samples) does
!      not keep exactly that many, or its reconstruction's SNR (printed) is not positive, or
!      the sparse approximation of as many coefficients does not beat it;
!   4. a cube with a NaN sample is not refused with SG_ERR_NON_FINITE, or the coefficients
!      are written.
!
! Build: make examples
program wavepacket_example
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use seisgpu
  implicit none

  integer, parameter :: dp = c_double
  integer, parameter :: n1 = 90, n2 = 50
  real(dp), parameter :: pi = 3.14159265358979323846_dp

  type(c_ptr) :: ctx = c_null_ptr, layout = c_null_ptr
  integer(c_int32_t) :: st
  type(sg_wavepacket_sparse_options) :: sparse
  integer(c_int64_t) :: rng_state = 4242_c_int64_t
  integer(c_size_t) :: shape(2), n_samples, m, n_boxes, levels, n_dirs, iterations, s, nonzero
  real(dp) :: cube(n1, n2), f(n1, n2), adj(n1, n2), back(n1, n2)
  real(dp), allocatable :: coeffs(:), rc(:), kept(:)
  real(dp) :: lhs, rhs, mismatch, err, residual, snr, a, b
  integer :: failures = 0, i1, i2
  integer(c_size_t) :: i

  do i2 = 1, n2
    do i1 = 1, n1
      a = pi * 0.1_dp * (real(i1, dp) - 20.0_dp - 0.4_dp * i2)
      b = pi * 0.1_dp * (real(i1, dp) - 70.0_dp + 0.3_dp * i2)
      cube(i1, i2) = (1.0_dp - 2.0_dp * a * a) * exp(-a * a) - 0.6_dp * (1.0_dp - 2.0_dp * b * b) * exp(-b * b)
    end do
  end do

  st = sg_context_create(SG_BACKEND_AUTO, 0_c_int32_t, ctx)
  call require(st, 'sg_context_create')
  shape = [integer(c_size_t) :: n1, n2]
  st = sg_wavepacket_layout_create(ctx, 2_c_int32_t, shape, 12_c_size_t, 0_c_size_t, 0.0_dp, &
    0.0_dp, 1.0e-10_dp, SG_WAVEPACKET_F64, layout)
  call require(st, 'sg_wavepacket_layout_create')
  st = sg_wavepacket_layout_sizes(layout, n_samples, m, n_boxes, levels, n_dirs)
  call require(st, 'sg_wavepacket_layout_sizes')
  write(*, '(a, i0, a, i0, a, i0, a, f6.2, a)') 'layout 90x50: ', n_dirs, ' directions stored, ', &
    n_boxes, ' boxes, ', m, ' coefficients (redundancy ', real(m, dp) / real(n_samples, dp), ')'
  allocate(coeffs(2 * m), rc(2 * m), kept(2 * m))

  ! 1. The dot-product test.
  do i2 = 1, n2
    do i1 = 1, n1
      f(i1, i2) = 2.0_dp * uniform() - 1.0_dp
    end do
  end do
  do i = 1, 2 * m
    rc(i) = 2.0_dp * uniform() - 1.0_dp
  end do
  st = sg_wavepacket_forward_f64(layout, f, coeffs)
  call require(st, 'sg_wavepacket_forward_f64')
  st = sg_wavepacket_adjoint_f64(layout, rc, adj)
  call require(st, 'sg_wavepacket_adjoint_f64')
  lhs = dot_product(coeffs, rc)
  rhs = sum(f * adj)
  mismatch = abs(lhs - rhs) / (l2(coeffs) * l2(rc))
  write(*, '(a, es22.14, a, es22.14, a, es8.1)') 'adjoint: <Cf,c> ', lhs, ', <f,C*c> ', rhs, &
    ', mismatch ', mismatch
  call check(mismatch < 1.0e-11_dp, '<C f, c> = <f, C* c> to 1e-11')

  ! 2. The round trip.
  st = sg_wavepacket_forward_f64(layout, cube, coeffs)
  call require(st, 'sg_wavepacket_forward_f64')
  st = sg_wavepacket_inverse_f64(layout, coeffs, back, 1.0e-10_dp, 60_c_size_t, iterations, residual)
  call require(st, 'sg_wavepacket_inverse_f64')
  err = sqrt(sum((back - cube)**2) / sum(cube**2))
  write(*, '(a, i0, a, es8.1, a, es9.2)') 'inverse: ', iterations, ' CG iterations (residual ', &
    residual, '), round-trip error ', err
  call check(err <= 1.0e-9_dp, 'inverse(C f) = f to 1e-9')

  ! 3. Compression at 5 % of the samples.
  s = int(0.025_dp * n1 * n2, c_size_t)
  kept = coeffs
  st = sg_wavepacket_keep_largest_f64(layout, kept, s)
  call require(st, 'sg_wavepacket_keep_largest_f64')
  nonzero = 0
  do i = 1, m
    if (kept(2 * i - 1)**2 + kept(2 * i)**2 > 0.0_dp) nonzero = nonzero + 1
  end do
  st = sg_wavepacket_inverse_f64(layout, kept, back, 1.0e-6_dp, 30_c_size_t, iterations, residual)
  call require(st, 'sg_wavepacket_inverse_f64')
  snr = -10.0_dp * log10(sum((back - cube)**2) / sum(cube**2))
  write(*, '(a, i0, a, i0, a, f6.2, a)') 'compression: ', nonzero, ' of ', m, &
    ' coefficients kept (5 % of the samples), SNR ', snr, ' dB'
  call check(nonzero == s .and. snr > 0.0_dp, 'the S largest kept, positive SNR')
  sparse = sg_wavepacket_sparse_options_default()
  sparse%stages = 4                        ! fewer transforms than the default (12 and 8)
  sparse%refit_iterations = 4
  st = sg_wavepacket_sparse_approximation_f64(layout, cube, kept, s, sparse, nonzero, residual)
  call require(st, 'sg_wavepacket_sparse_approximation_f64')
  write(*, '(a, i0, a, f6.2, a)') 'sparse approximation: ', nonzero, ' coefficients, SNR ', &
    -20.0_dp * log10(residual), ' dB (C* of them)'
  call check(nonzero == s .and. -20.0_dp * log10(residual) > snr, 'S coefficients, better than the S largest')

  ! 4. A NaN sample: refused, the coefficients untouched.
  f = cube
  f(5, 6) = ieee_value(0.0_dp, ieee_quiet_nan)
  kept = -7.0_dp
  st = sg_wavepacket_forward_f64(layout, f, kept)
  write(*, '(a, a)') 'NaN sample: ', sg_error_summary(st, 'sg_wavepacket_forward_f64')
  call check(st == SG_ERR_NON_FINITE .and. maxval(abs(kept + 7.0_dp)) <= 0.0_dp, 'NaN data refused, nothing written')

  ! Main-program allocatables are never freed implicitly (memcheck counts them as leaks).
  deallocate(coeffs, rc, kept)
  call sg_wavepacket_layout_destroy(layout)
  call sg_context_destroy(ctx)
  if (failures > 0) then
    write(*, '(a)') 'FAILED'
    stop 1
  end if
  write(*, '(a)') 'all checks passed'

contains

  ! The l2 norm (norm2 is Fortran 2008).
  real(dp) function l2(v)
    real(dp), intent(in) :: v(:)
    l2 = sqrt(sum(v * v))
  end function l2

  real(dp) function uniform()
    ! xorshift64, top 53 bits
    rng_state = ieor(rng_state, ishft(rng_state, 13))
    rng_state = ieor(rng_state, ishft(rng_state, -7))
    rng_state = ieor(rng_state, ishft(rng_state, 17))
    uniform = real(ishft(rng_state, -11), dp) / 9007199254740992.0_dp
  end function uniform

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      write(*, '(a, a)') '  [ok] ', what
    else
      write(*, '(a, a)') '  [FAIL] ', what
      failures = failures + 1
    end if
  end subroutine check

  subroutine require(status, what)
    integer(c_int32_t), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= SG_OK) then
      write(error_unit, '(a, a, a)') what, ' failed: ', sg_last_error()
      stop 1
    end if
  end subroutine require

end program wavepacket_example

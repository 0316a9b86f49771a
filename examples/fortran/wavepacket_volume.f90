! wavepacket_volume: wave packets of a section longer than one layout, in tiles, from
! Fortran (sg_wavepacket_volume_*), in double precision.
!
! A 90 x 140 section (axis 1 fastest: time) holding two dipping reflections is cut into
! tiles of 90 x 64 traces (3 tiles, the last zero-padded past the section's end), each
! decomposed over 12 directions; every box's grid is shifted onto one grid common to all
! tiles. Stops with a non-zero exit status when
!   1. the tile count is not 1 x 3, or the boxes' ranges do not cover the coefficients;
!   2. forward then inverse misses the section by more than 1e-9 (relative; USFFT tol 1e-10);
!   3. a section with a NaN sample is not refused with SG_ERR_NON_FINITE, or the
!      coefficients are written.
!
! Build: make examples
program wavepacket_volume_example
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use seisgpu
  implicit none

  integer, parameter :: dp = c_double
  integer, parameter :: n1 = 90, n2 = 140
  real(dp), parameter :: pi = 3.14159265358979323846_dp

  type(c_ptr) :: ctx = c_null_ptr, volume = c_null_ptr
  type(sg_wavepacket_layout_options) :: options
  integer(c_int32_t) :: st, level, direction
  integer(c_size_t) :: shape(2), tile(2), tiles(3), n_samples, m, n_boxes, iterations, b
  integer(c_size_t) :: offset, count, next
  real(dp) :: section(n1, n2), f(n1, n2), back(n1, n2)
  real(dp), allocatable :: coeffs(:)
  real(dp) :: err, residual, a, c
  integer :: failures = 0, i1, i2
  logical :: contiguous

  do i2 = 1, n2
    do i1 = 1, n1
      a = pi * 0.1_dp * (real(i1, dp) - 20.0_dp - 0.3_dp * i2)
      c = pi * 0.1_dp * (real(i1, dp) - 75.0_dp + 0.2_dp * i2)
      section(i1, i2) = (1.0_dp - 2.0_dp * a * a) * exp(-a * a) - 0.6_dp * (1.0_dp - 2.0_dp * c * c) * exp(-c * c)
    end do
  end do

  st = sg_context_create(SG_BACKEND_AUTO, 0_c_int32_t, ctx)
  call require(st, 'sg_context_create')
  shape = [integer(c_size_t) :: n1, n2]
  tile = [integer(c_size_t) :: n1, 64]
  options = sg_wavepacket_layout_options_default()
  options%directions = 12
  options%tolerance = 1.0e-10_dp
  st = sg_wavepacket_volume_create(ctx, 2_c_int32_t, shape, tile, SG_WAVEPACKET_F64, options, volume)
  call require(st, 'sg_wavepacket_volume_create')

  ! 1. Sizes and box ranges.
  st = sg_wavepacket_volume_sizes(volume, n_samples, m, tiles, n_boxes)
  call require(st, 'sg_wavepacket_volume_sizes')
  write(*, '(a, i0, a, i0, a, i0, a, i0, a, f6.2, a)') 'section 90x140 in tiles of 90x64: ', &
    tiles(1), ' x ', tiles(2), ' tiles, ', n_boxes, ' boxes, ', m, ' coefficients (redundancy ', &
    real(m, dp) / real(n_samples, dp), ')'
  next = 0
  contiguous = .true.
  do b = 0, n_boxes - 1
    st = sg_wavepacket_volume_box_info(volume, b, level, direction, offset, count)
    call require(st, 'sg_wavepacket_volume_box_info')
    contiguous = contiguous .and. offset == next .and. count > 0
    next = offset + count
  end do
  call check(tiles(1) == 1 .and. tiles(2) == 3 .and. tiles(3) == 1, '140 traces in tiles of 64: 1 x 3 tiles')
  call check(contiguous .and. next == m, 'the boxes'' ranges follow each other and cover the coefficients')
  allocate(coeffs(2 * m))

  ! 2. The round trip.
  st = sg_wavepacket_volume_forward_f64(volume, section, coeffs)
  call require(st, 'sg_wavepacket_volume_forward_f64')
  st = sg_wavepacket_volume_inverse_f64(volume, coeffs, back, 1.0e-10_dp, 60_c_size_t, iterations, residual)
  call require(st, 'sg_wavepacket_volume_inverse_f64')
  err = sqrt(sum((back - section)**2) / sum(section**2))
  write(*, '(a, i0, a, es8.1, a, es9.2)') 'inverse: ', iterations, ' CG iterations (residual ', &
    residual, '), round-trip error ', err
  call check(err <= 1.0e-9_dp, 'inverse(C f) = f to 1e-9')

  ! 3. A NaN sample: refused, the coefficients untouched.
  f = section
  f(5, 100) = ieee_value(0.0_dp, ieee_quiet_nan)
  coeffs = -7.0_dp
  st = sg_wavepacket_volume_forward_f64(volume, f, coeffs)
  write(*, '(a, a)') 'NaN sample: ', sg_error_summary(st, 'sg_wavepacket_volume_forward_f64')
  call check(st == SG_ERR_NON_FINITE .and. maxval(abs(coeffs + 7.0_dp)) <= 0.0_dp, 'NaN data refused, nothing written')

  ! Main-program allocatables are never freed implicitly (memcheck counts them as leaks).
  deallocate(coeffs)
  call sg_wavepacket_volume_destroy(volume)
  call sg_context_destroy(ctx)
  if (failures > 0) then
    write(*, '(a)') 'FAILED'
    stop 1
  end if
  write(*, '(a)') 'all checks passed'

contains

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

end program wavepacket_volume_example

! fxdecon_3d: F-XY prediction filtering (random-noise attenuation) of a 3D volume with
! seisgpu, from Fortran.
!
! A volume x(n_samples, n_inline, n_crossline) of single-precision traces holds three plane
! events (25 Hz Ricker wavelets dipping along both axes) plus Gaussian noise. Creates an
! SG_BACKEND_AUTO context, prints its description, filters the volume with the seed's
! operator (7 x 7, two-sided, centre excluded, 20 x 20 windows stepping 17) over 1-110 Hz,
! checks known answers and stops with a non-zero exit status if one fails:
!   1. sg_fxdecon_options_default() reads back as documented (7 x 7, 20 x 20, overlap 3);
!   2. the SNR rises by at least 5 dB (the CPU reaches 7.0 dB on this volume);
!   3. one flat event without noise passes with a relative RMS error below 1 %;
!   4. forward/backward averaging in 3D is refused with SG_ERR_UNSUPPORTED.
!
! Build: make examples
!   (or: gfortran -c include/seisgpu.f90; gfortran fxdecon_3d.f90 -L target/release -lseisgpu)
program fxdecon_3d
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use seisgpu
  implicit none

  integer, parameter :: sp = c_float, dp = c_double
  integer, parameter :: n_samples = 300, n_inline = 48, n_crossline = 40
  real(dp), parameter :: dt = 0.004_dp, pi = 3.14159265358979323846_dp
  real(dp), parameter :: noise_sigma = 0.2_dp, min_snr_gain_db = 5.0_dp

  type(c_ptr) :: ctx = c_null_ptr, plan = c_null_ptr, bad = c_null_ptr
  type(sg_fxdecon_options) :: options
  integer(c_int32_t) :: st
  integer(c_int64_t) :: rng_state = 20261122_c_int64_t
  integer :: passed = 0, failures = 0
  real(sp), allocatable :: clean(:, :, :), noisy(:, :, :), filtered(:, :, :)
  real(dp) :: snr_in, snr_out, err
  integer :: i, il, xl
  character(len=:), allocatable :: description

  allocate(clean(n_samples, n_inline, n_crossline), noisy(n_samples, n_inline, n_crossline), &
    filtered(n_samples, n_inline, n_crossline))
  st = sg_context_create(SG_BACKEND_AUTO, 0_c_int32_t, ctx)
  call require(st, 'sg_context_create(SG_BACKEND_AUTO)')
  description = sg_context_description(ctx, st)
  call require(st, 'sg_context_describe')
  write(*, '(a)') description
  write(*, '(a, i0, a, i0, a, i0, a)') 'F-XY decon of ', n_inline, ' x ', n_crossline, &
    ' traces of ', n_samples, ' samples'

  ! 1. The defaults.
  options = sg_fxdecon_options_default()
  call check(options%operator_inline == 7 .and. options%operator_crossline == 7 .and. &
    options%window_inline == 20 .and. options%window_crossline == 20 .and. &
    options%overlap_inline == 3 .and. options%su_compatible == 0, &
    'default options: 7 x 7 operator, 20 x 20 windows stepping 17')

  ! 2. Plane events plus noise.
  do xl = 1, n_crossline
    do il = 1, n_inline
      do i = 1, n_samples
        clean(i, il, xl) = real(events(i - 1, il - 1, xl - 1, .false.), sp)
        noisy(i, il, xl) = real(clean(i, il, xl) + noise_sigma * gaussian(), sp)
      end do
    end do
  end do
  options%sample_interval_s = dt
  options%fmin_hz = 1.0_dp
  options%fmax_hz = 110.0_dp
  st = sg_fxdecon_plan_create_3d(ctx, options, int(n_samples, c_size_t), &
    int(n_inline, c_size_t), int(n_crossline, c_size_t), plan)
  call require(st, 'sg_fxdecon_plan_create_3d')
  st = sg_fxdecon_execute_3d_f32(plan, noisy, filtered, int(n_samples, c_size_t), &
    int(n_samples * n_inline, c_size_t))
  call require(st, 'sg_fxdecon_execute_3d_f32')
  snr_in = snr_db(noisy, clean)
  snr_out = snr_db(filtered, clean)
  write(*, '(a, f6.2, a, f6.2, a, f5.2, a)') '  SNR ', snr_in, ' dB -> ', snr_out, &
    ' dB (gain ', snr_out - snr_in, ' dB)'
  call check(snr_out - snr_in >= min_snr_gain_db, 'the SNR rises by at least 5 dB')

  ! 3. One flat event passes.
  do xl = 1, n_crossline
    do il = 1, n_inline
      do i = 1, n_samples
        clean(i, il, xl) = real(events(i - 1, il - 1, xl - 1, .true.), sp)
      end do
    end do
  end do
  st = sg_fxdecon_execute_3d_f32(plan, clean, filtered, int(n_samples, c_size_t), &
    int(n_samples * n_inline, c_size_t))
  call require(st, 'sg_fxdecon_execute_3d_f32 (flat event)')
  err = 10.0_dp**(-snr_db(filtered, clean) / 20.0_dp)
  write(*, '(a, es9.2)') '  flat event: relative RMS error ', err
  call check(err < 0.01_dp, 'a flat event passes with under 1 % error')

  ! 4. Forward/backward averaging is 2D only.
  options%prediction = SG_FXDECON_FORWARD_BACKWARD
  st = sg_fxdecon_plan_create_3d(ctx, options, int(n_samples, c_size_t), &
    int(n_inline, c_size_t), int(n_crossline, c_size_t), bad)
  write(*, '(a, a)') '  forward/backward in 3D: ', sg_error_summary(st, 'refused')
  call check(st == SG_ERR_UNSUPPORTED .and. .not. c_associated(bad), &
    'forward/backward averaging in 3D is refused')

  call sg_fxdecon_plan_destroy(plan)
  call sg_context_destroy(ctx)
  ! The main program's allocatables are not freed at its end (valgrind: definitely lost).
  deallocate(description, clean, noisy, filtered)
  write(*, '(a, i0, a, i0, a)') 'checks: ', passed, ' passed, ', failures, ' failed'
  if (failures > 0) stop 1

contains

  subroutine require(status, what)
    integer(c_int32_t), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status == SG_OK) return
    write(error_unit, '(a, a)') 'error: ', sg_error_summary(status, what // ' failed')
    call sg_fxdecon_plan_destroy(plan)
    call sg_context_destroy(ctx)
    stop 1
  end subroutine require

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      write(*, '(a, a)') '  [ok] ', what
      passed = passed + 1
    else
      write(*, '(a, a)') '  [FAIL] ', what
      failures = failures + 1
    end if
  end subroutine check

  ! Park-Miller "minimal standard" generator (multiplier 48271), in (0, 1).
  function uniform() result(u)
    real(dp) :: u
    rng_state = mod(rng_state * 48271_c_int64_t, 2147483647_c_int64_t)
    u = real(rng_state, dp) / 2147483647.0_dp
  end function uniform

  function gaussian() result(g)
    real(dp) :: g
    integer :: k
    g = 0.0_dp
    do k = 1, 12
      g = g + uniform()
    end do
    g = g - 6.0_dp
  end function gaussian

  function ricker(t) result(r)
    real(dp), intent(in) :: t
    real(dp) :: r, a
    a = (pi * 25.0_dp * t)**2
    r = (1.0_dp - 2.0_dp * a) * exp(-a)
  end function ricker

  ! Sample i (0-based) of trace (il, xl): plane events, or the flat one alone.
  function events(i, il, xl, flat_only) result(s)
    integer, intent(in) :: i, il, xl
    logical, intent(in) :: flat_only
    real(dp) :: s, t
    t = i * dt
    s = 0.5_dp * ricker(t - 0.8_dp)
    if (flat_only) return
    s = s + ricker(t - 0.2_dp - 0.002_dp * il + 0.001_dp * xl) &
      + 0.7_dp * ricker(t - 0.5_dp + 0.003_dp * il - 0.002_dp * xl)
  end function events

  function snr_db(x, ref) result(db)
    real(sp), intent(in) :: x(:, :, :), ref(:, :, :)
    real(dp) :: db
    db = 10.0_dp * log10(sum(real(ref, dp)**2) / sum((real(x, dp) - real(ref, dp))**2))
  end function snr_db

end program fxdecon_3d

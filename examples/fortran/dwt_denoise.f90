! dwt_denoise: wavelet denoising of a batch of synthetic traces with seisgpu, from Fortran.
!
! The same program as examples/c/dwt_denoise.c, on double-precision traces, through the
! module in include/seisgpu.f90. Creates an SG_BACKEND_AUTO context, prints its
! description, checks known answers and stops with a non-zero exit status if one fails:
!   1. Haar, forward, on [1, 2, 3, 4] gives exactly [5, -2, -1/sqrt2, -1/sqrt2]
!      (GSL layout [a_2 | d_2 | d_1]); the inverse gives [1, 2, 3, 4] back;
!   2. Daubechies 8, forward then inverse, reproduces a noisy batch to 1e-5;
!   3. Daubechies 8 denoising with the default options raises the SNR by at least 3 dB,
!      to the SNR an independent reference reaches on the same data (GSL 2.7's
!      gsl_wavelet_daubechies member 8 with VisuShrink, soft, in double: 2.1085 dB in,
!      6.9399 dB out); the thresholds it reports are one per level, all equal (sigma from
!      the finest level) and close to 0.2*sqrt(2 ln 1024) for noise of sigma 0.2;
!      sg_dwt_denoise_options_default() reads back as documented (a struct returned by
!      value through the bind(C) type);
!   4. a plan for 1000 samples is refused with SG_ERR_UNSUPPORTED and a message.
!
! Build: make examples
!   (or: gfortran -c include/seisgpu.f90; gfortran dwt_denoise.f90 -L target/release -lseisgpu)
program dwt_denoise
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use seisgpu
  implicit none

  integer, parameter :: dp = c_double
  integer, parameter :: n_samples = 1024, n_traces = 16, n_levels = 10
  real(dp), parameter :: pi = 3.14159265358979323846_dp
  real(dp), parameter :: noise_sigma = 0.2_dp
  real(dp), parameter :: min_snr_gain_db = 3.0_dp
  real(dp), parameter :: reference_snr_out_db = 6.9399_dp, reference_snr_tol_db = 0.05_dp
  real(dp), parameter :: round_trip_tol = 1.0e-5_dp

  type(c_ptr) :: ctx = c_null_ptr, plan = c_null_ptr
  integer(c_int32_t) :: st, backend
  integer(c_int64_t) :: rng_state = 20240611_c_int64_t
  integer :: passed = 0, failures = 0
  real(dp) :: clean(n_samples, n_traces), noisy(n_samples, n_traces)
  real(dp) :: coeffs(n_samples, n_traces), back(n_samples, n_traces)
  real(dp) :: denoised(n_samples, n_traces)
  real(dp), target :: thresholds(n_levels, n_traces)
  type(sg_dwt_denoise_options) :: options
  real(dp) :: snr_in, snr_out, err, lambda_expected
  integer :: i, t
  character(len=:), allocatable :: description

  write(*, '(a, a, a, i0, a, i0, a, i0, a, i0, a)') 'seisgpu ', sg_version_string(), &
    ' (module ', SG_VERSION_MAJOR, '.', SG_VERSION_MINOR, '.', SG_VERSION_PATCH, &
    ', library ', sg_version_number(), ')'

  st = sg_context_create(SG_BACKEND_AUTO, 0_c_int32_t, ctx)
  call require(st, 'sg_context_create(SG_BACKEND_AUTO)')
  st = sg_context_backend(ctx, backend)
  call require(st, 'sg_context_backend')
  description = sg_context_description(ctx, st)
  call require(st, 'sg_context_describe')
  write(*, '(a, a, a)') 'context (', trim(backend_name()), '):'
  write(*, '(a)') description
  write(*, '(a)') ''

  call haar_known_answer()

  ! The batch: column t is trace t; generated in the same order as the C example.
  do t = 1, n_traces
    do i = 1, n_samples
      clean(i, t) = clean_sample(t - 1, i - 1)
      noisy(i, t) = clean_sample(t - 1, i - 1) + noise_sigma * gaussian()
    end do
  end do

  st = sg_dwt_plan_create(ctx, SG_WAVELET_DAUBECHIES, 8_c_int32_t, &
    int(n_samples, c_size_t), plan)
  call require(st, 'sg_dwt_plan_create(daubechies 8)')

  ! Known answer 2: forward then inverse is the identity.
  st = sg_dwt_execute_f64(plan, SG_DWT_FORWARD, 0_c_int32_t, noisy, coeffs, &
    int(n_traces, c_size_t), int(n_samples, c_size_t))
  call require(st, 'sg_dwt_execute_f64(forward)')
  st = sg_dwt_execute_f64(plan, SG_DWT_INVERSE, 0_c_int32_t, coeffs, back, &
    int(n_traces, c_size_t), int(n_samples, c_size_t))
  call require(st, 'sg_dwt_execute_f64(inverse)')
  err = maxval(abs(back - noisy))
  write(*, '(a, i0, a, i0, a)') 'Daubechies 8, ', n_traces, ' traces x ', n_samples, &
    ' samples (double)'
  write(*, '(a, es10.3)') '  forward + inverse: max |error| = ', err
  call check(err <= round_trip_tol, 'forward + inverse reproduces the input to 1e-5')

  ! Known answer 3: denoising with the default options, thresholds reported. The
  ! defaults come back by value through the bind(C) type: check them field by field.
  options = sg_dwt_denoise_options_default()
  call check(options%threshold_rule == SG_THRESHOLD_UNIVERSAL .and. &
    options%threshold_mode == SG_THRESHOLD_SOFT .and. &
    options%noise_estimate == SG_NOISE_FINEST_LEVEL .and. options%n_levels == 0 .and. &
    abs(options%fixed_threshold) <= 0.0_dp .and. options%level_mask == -1_c_int64_t, &
    'default options: universal, soft, finest-level sigma, all levels, mask all ones')
  st = sg_dwt_denoise_f64(plan, options, noisy, denoised, int(n_traces, c_size_t), &
    int(n_samples, c_size_t), c_loc(thresholds))
  call require(st, 'sg_dwt_denoise_f64')
  snr_in = snr_db(clean, noisy)
  snr_out = snr_db(clean, denoised)
  write(*, '(a, f6.2, a, f6.2, a, f6.2, a)') '  SNR: noisy ', snr_in, ' dB, denoised ', &
    snr_out, ' dB, gain ', snr_out - snr_in, ' dB'
  call check(snr_out - snr_in >= min_snr_gain_db, 'denoising gains at least 3 dB of SNR')
  call check(abs(snr_out - reference_snr_out_db) <= reference_snr_tol_db, &
    'denoised SNR matches the GSL reference (6.9399 dB) to 0.05 dB')
  lambda_expected = noise_sigma * sqrt(2.0_dp * log(real(n_samples, dp)))
  write(*, '(a, f7.4, a, f7.4, a, f7.4, a)') '  thresholds: ', minval(thresholds), ' to ', &
    maxval(thresholds), ' (noise sigma x sqrt(2 ln n) = ', lambda_expected, ')'
  call check(maxval(abs(thresholds - spread(thresholds(1, :), 1, n_levels))) &
    <= 1.0e-12_dp * maxval(thresholds), &
    'one threshold per trace, the same for every level')
  call check(all(abs(thresholds - lambda_expected) <= 0.25_dp * lambda_expected), &
    'thresholds within 25% of 0.2*sqrt(2 ln 1024)')

  call refused_length()

  call sg_dwt_plan_destroy(plan)
  call sg_context_destroy(ctx)
  ! The main program's allocatables are not freed at its end (valgrind: definitely lost).
  deallocate(description)

  write(*, '(a)') ''
  if (failures > 0) then
    write(*, '(a, a, a)') 'dwt_denoise (Fortran, ', trim(backend_name()), '): FAILED'
  else
    write(*, '(a, a, a)') 'dwt_denoise (Fortran, ', trim(backend_name()), '): PASSED'
  end if
  write(*, '(a, i0, a, i0, a)') 'checks: ', passed, ' passed, ', failures, ' failed'
  if (failures > 0) stop 1

contains

  function backend_name() result(name)
    character(len=4) :: name
    name = 'CPU'
    if (backend == SG_BACKEND_CUDA) name = 'CUDA'
  end function backend_name

  ! On failure: what failed, the status name and the library's message; exit status 1.
  subroutine require(status, what)
    integer(c_int32_t), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status == SG_OK) return
    write(error_unit, '(a, a)') 'error: ', sg_error_summary(status, what // ' failed')
    call sg_dwt_plan_destroy(plan)
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

  function ricker(tau, f) result(r)
    real(dp), intent(in) :: tau, f
    real(dp) :: r, a
    a = pi * pi * f * f * tau * tau
    ! Far tails are 0 (below 1e-80), without exp() underflowing.
    r = 0.0_dp
    if (a <= 180.0_dp) r = (1.0_dp - 2.0_dp * a) * exp(-a)
  end function ricker

  ! The clean sample i of trace t (both from 0), as in the C example.
  function clean_sample(tr, i) result(s)
    integer, intent(in) :: tr, i
    real(dp) :: s, x
    x = real(i, dp) / n_samples
    s = ricker(i - (300.0_dp + 10.0_dp * tr), 0.02_dp) &
      - 0.7_dp * ricker(i - (700.0_dp - 7.0_dp * tr), 0.03_dp) &
      + 0.3_dp * sin(2.0_dp * pi * 3.0_dp * x + 0.1_dp * tr)
  end function clean_sample

  function snr_db(ref, x) result(snr)
    real(dp), intent(in) :: ref(:, :), x(:, :)
    real(dp) :: snr
    snr = 10.0_dp * log10(sum(ref**2) / sum((x - ref)**2))
  end function snr_db

  ! Known answer 1: Haar on [1, 2, 3, 4], double and float.
  subroutine haar_known_answer()
    real(dp) :: input(4), expected(4), c(4), b(4)
    real(c_float) :: input32(4), c32(4)
    type(c_ptr) :: haar
    integer(c_int32_t) :: s

    haar = c_null_ptr
    input = [1.0_dp, 2.0_dp, 3.0_dp, 4.0_dp]
    input32 = real(input, c_float)
    expected = [5.0_dp, -2.0_dp, -1.0_dp / sqrt(2.0_dp), -1.0_dp / sqrt(2.0_dp)]
    s = sg_dwt_plan_create(ctx, SG_WAVELET_HAAR, 2_c_int32_t, 4_c_size_t, haar)
    call require(s, 'sg_dwt_plan_create(haar, 4)')
    s = sg_dwt_execute_f64(haar, SG_DWT_FORWARD, 0_c_int32_t, input, c, 1_c_size_t, 4_c_size_t)
    call require(s, 'sg_dwt_execute_f64(haar, forward)')
    s = sg_dwt_execute_f64(haar, SG_DWT_INVERSE, 0_c_int32_t, c, b, 1_c_size_t, 4_c_size_t)
    call require(s, 'sg_dwt_execute_f64(haar, inverse)')
    s = sg_dwt_execute_f32(haar, SG_DWT_FORWARD, 0_c_int32_t, input32, c32, 1_c_size_t, &
      4_c_size_t)
    call require(s, 'sg_dwt_execute_f32(haar, forward)')
    call sg_dwt_plan_destroy(haar)
    write(*, '(a, 4f13.9, a)') 'Haar forward of [1 2 3 4]: [', c, ' ]'
    write(*, '(a)') '  expected [a2 | d2 | d1] = [5 -2 -1/sqrt2 -1/sqrt2]'
    call check(maxval(abs(c - expected)) <= 1.0e-12_dp, &
      'Haar forward (double) matches the exact values to 1e-12')
    call check(maxval(abs(real(c32, dp) - expected)) <= 1.0e-6_dp, &
      'Haar forward (float) matches the exact values to 1e-6')
    call check(maxval(abs(b - input)) <= 1.0e-12_dp, &
      'Haar inverse (double) gives [1 2 3 4] back to 1e-12')
    write(*, '(a)') ''
  end subroutine haar_known_answer

  ! Known answer 4: a length that is not a power of two is refused, with a message.
  subroutine refused_length()
    type(c_ptr) :: bad
    integer(c_int32_t) :: s
    character(len=:), allocatable :: message
    bad = c_null_ptr
    s = sg_dwt_plan_create(ctx, SG_WAVELET_DAUBECHIES, 8_c_int32_t, 1000_c_size_t, bad)
    message = sg_last_error()
    write(*, '(a)') ''
    write(*, '(a, a, a, a)') 'sg_dwt_plan_create(daubechies 8, 1000 samples) -> ', &
      sg_status_name(s), ': ', message
    call check(s == SG_ERR_UNSUPPORTED .and. .not. c_associated(bad) .and. len(message) > 0, &
      'a 1000-sample plan is refused with SG_ERR_UNSUPPORTED and a message')
    call sg_dwt_plan_destroy(bad)
  end subroutine refused_length

end program dwt_denoise

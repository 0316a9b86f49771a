! seisgpu: Fortran 2003 bindings to the C ABI of libseisgpu (include/seisgpu.h).
!
! Hand-written to match the generated header one for one: every sg_* function has a
! bind(C) interface of the same name, every #define a named constant of the same value,
! every struct a bind(C) derived type with the same fields in order.
! tests/fortran_module.rs checks this file against the header; keep the two in step.
!
! Build: gfortran -c include/seisgpu.f90 (makes seisgpu.mod), then `use seisgpu` and link
! with -lseisgpu.
!
! Conventions, as in C:
!  * every fallible call returns an integer(c_int32_t) status, SG_OK (0) on success;
!    sg_last_error() gives the message of the last failed call on this thread;
!  * handles (contexts, plans) are type(c_ptr); initialise them to c_null_ptr, and
!    release each one with its *_destroy (destroying c_null_ptr is a no-op); a failed
!    *_create leaves its `out` argument unchanged;
!  * traces are contiguous arrays of real(c_float) or real(c_double); trace t (0-based)
!    starts at element t*trace_stride + 1 of the Fortran array, so a 2-D array
!    x(n_samples, n_traces) is a batch with trace_stride = n_samples;
!  * C's unsigned uint32_t / uint64_t are integer(c_int32_t) / integer(c_int64_t): same
!    bits (level_mask = -1_c_int64_t sets every bit);
!  * in-place transforms: pass the same array as input and output (the library accepts
!    it; strict Fortran forbids aliasing two arguments when one is modified, so compile
!    such callers without assumptions of its absence across the call, as gfortran does).
!  * pointers that C allows to be NULL and that have no Fortran stand-in are type(c_ptr),
!    value: the `thresholds` argument of sg_dwt_denoise_* takes c_null_ptr or c_loc(a)
!    of a target array of n_traces*levels real(c_double).
module seisgpu
  use, intrinsic :: iso_c_binding, only: c_int32_t, c_int64_t, c_size_t, c_float, &
    c_double, c_char, c_ptr, c_null_ptr, c_null_char, c_associated, c_f_pointer, &
    c_funptr
  implicit none
  private :: c_ptr_to_string

  ! Backends (sg_context_create).
  integer(c_int32_t), parameter :: SG_BACKEND_AUTO = 0
  integer(c_int32_t), parameter :: SG_BACKEND_CPU = 1
  integer(c_int32_t), parameter :: SG_BACKEND_CUDA = 2

  ! Device checks of device calls' inputs (sg_context_set_device_checks).
  integer(c_int32_t), parameter :: SG_DEVICE_CHECKS_OFF = 0
  integer(c_int32_t), parameter :: SG_DEVICE_CHECKS_FINITE = 1

  ! Wavelet families (sg_dwt_plan_create), as GSL names them.
  integer(c_int32_t), parameter :: SG_WAVELET_DAUBECHIES = 1
  integer(c_int32_t), parameter :: SG_WAVELET_DAUBECHIES_CENTERED = 2
  integer(c_int32_t), parameter :: SG_WAVELET_HAAR = 3
  integer(c_int32_t), parameter :: SG_WAVELET_HAAR_CENTERED = 4
  integer(c_int32_t), parameter :: SG_WAVELET_BSPLINE = 5
  integer(c_int32_t), parameter :: SG_WAVELET_BSPLINE_CENTERED = 6

  ! Transform directions.
  integer(c_int32_t), parameter :: SG_DWT_FORWARD = 1
  integer(c_int32_t), parameter :: SG_DWT_INVERSE = -1

  ! Denoising options.
  integer(c_int32_t), parameter :: SG_THRESHOLD_UNIVERSAL = 0
  integer(c_int32_t), parameter :: SG_THRESHOLD_FIXED = 1
  integer(c_int32_t), parameter :: SG_THRESHOLD_SOFT = 0
  integer(c_int32_t), parameter :: SG_THRESHOLD_HARD = 1
  integer(c_int32_t), parameter :: SG_NOISE_FINEST_LEVEL = 0
  integer(c_int32_t), parameter :: SG_NOISE_PER_LEVEL = 1

  ! USFFT (non-uniform FFT) plans: type, precision, kernel, mode order.
  integer(c_int32_t), parameter :: SG_USFFT_TYPE1 = 1
  integer(c_int32_t), parameter :: SG_USFFT_TYPE2 = 2
  integer(c_int32_t), parameter :: SG_USFFT_TYPE3 = 3
  integer(c_int32_t), parameter :: SG_USFFT_F32 = 1
  integer(c_int32_t), parameter :: SG_USFFT_F64 = 2
  integer(c_int32_t), parameter :: SG_USFFT_KERNEL_ES = 0
  integer(c_int32_t), parameter :: SG_USFFT_KERNEL_GAUSSIAN = 1
  integer(c_int32_t), parameter :: SG_USFFT_KERNEL_PROLATE = 2
  integer(c_int32_t), parameter :: SG_USFFT_MODES_CENTRED = 0
  integer(c_int32_t), parameter :: SG_USFFT_MODES_FFT = 1

  ! F-X decon (sg_fxdecon_options): prediction operator and out-of-band behaviour.
  integer(c_int32_t), parameter :: SG_FXDECON_TWO_SIDED = 0
  integer(c_int32_t), parameter :: SG_FXDECON_FORWARD_BACKWARD = 1
  integer(c_int32_t), parameter :: SG_FXDECON_PASS_OUT_OF_BAND = 0
  integer(c_int32_t), parameter :: SG_FXDECON_ZERO_OUT_OF_BAND = 1
  ! Ambient-noise correlation (sg_xcorr_*): time and spectral normalisation, stacks.
  integer(c_int32_t), parameter :: SG_XCORR_TIME_NORM_NONE = 0
  integer(c_int32_t), parameter :: SG_XCORR_TIME_NORM_ONE_BIT = 1
  integer(c_int32_t), parameter :: SG_XCORR_TIME_NORM_RUNNING_MEAN = 2
  integer(c_int32_t), parameter :: SG_XCORR_FREQ_NORM_NONE = 0
  integer(c_int32_t), parameter :: SG_XCORR_FREQ_NORM_RUNNING_MEAN = 1
  integer(c_int32_t), parameter :: SG_XCORR_FREQ_NORM_PHASE_ONLY = 2
  integer(c_int32_t), parameter :: SG_XCORR_STACK_LINEAR = 0
  integer(c_int32_t), parameter :: SG_XCORR_STACK_PWS = 1
  integer(c_int32_t), parameter :: SG_XCORR_STACK_ROBUST = 2
  integer(c_int32_t), parameter :: SG_XCORR_CC_XCORR = 0
  integer(c_int32_t), parameter :: SG_XCORR_CC_DECONV = 1
  integer(c_int32_t), parameter :: SG_XCORR_CC_COHERENCY = 2
  integer(c_int32_t), parameter :: SG_XCORR_NO_GROUP = -1

  ! EM-logging search (sg_emlog_*): grid axes, criteria, modes, norms.
  integer(c_int32_t), parameter :: SG_EMLOG_AXIS_LINEAR = 0
  integer(c_int32_t), parameter :: SG_EMLOG_AXIS_LOG = 1
  integer(c_int32_t), parameter :: SG_EMLOG_AXIS_LIST = 2
  integer(c_int32_t), parameter :: SG_EMLOG_FIT_WITHIN_ERRORS = 0
  integer(c_int32_t), parameter :: SG_EMLOG_MAX_MISFIT = 1
  integer(c_int32_t), parameter :: SG_EMLOG_DELTA_CHI_SQUARE = 2
  integer(c_int32_t), parameter :: SG_EMLOG_FAST = 0
  integer(c_int32_t), parameter :: SG_EMLOG_DIRECT = 1
  integer(c_int32_t), parameter :: SG_EMLOG_NORM_L2 = 0
  integer(c_int32_t), parameter :: SG_EMLOG_NORM_L1 = 1
  integer(c_int32_t), parameter :: SG_EMLOG_NORM_MAX = 2

  ! Gaussian wave packets (sg_wavepacket_*): precisions, thresholds, POCS schedules.
  integer(c_int32_t), parameter :: SG_WAVEPACKET_F32 = 1
  integer(c_int32_t), parameter :: SG_WAVEPACKET_F64 = 2
  integer(c_int32_t), parameter :: SG_WAVEPACKET_HARD = 0
  integer(c_int32_t), parameter :: SG_WAVEPACKET_SOFT = 1
  integer(c_int32_t), parameter :: SG_WAVEPACKET_THRESHOLD_VALUE = 0
  integer(c_int32_t), parameter :: SG_WAVEPACKET_THRESHOLD_SIGMA = 1
  integer(c_int32_t), parameter :: SG_WAVEPACKET_SCHEDULE_LINEAR = 0
  integer(c_int32_t), parameter :: SG_WAVEPACKET_SCHEDULE_EXPONENTIAL = 1

  ! The version of the header these bindings match (compare with sg_version_number()).
  integer(c_int32_t), parameter :: SG_VERSION_MAJOR = 0
  integer(c_int32_t), parameter :: SG_VERSION_MINOR = 1
  integer(c_int32_t), parameter :: SG_VERSION_PATCH = 0

  ! Status codes.
  integer(c_int32_t), parameter :: SG_OK = 0
  integer(c_int32_t), parameter :: SG_ERR_INVALID_ARGUMENT = 1
  integer(c_int32_t), parameter :: SG_ERR_NULL_POINTER = 2
  integer(c_int32_t), parameter :: SG_ERR_UNSUPPORTED = 3
  integer(c_int32_t), parameter :: SG_ERR_OUT_OF_MEMORY = 4
  integer(c_int32_t), parameter :: SG_ERR_DEVICE_OUT_OF_MEMORY = 5
  integer(c_int32_t), parameter :: SG_ERR_CUDA_UNAVAILABLE = 6
  integer(c_int32_t), parameter :: SG_ERR_CUDA_DRIVER = 7
  integer(c_int32_t), parameter :: SG_ERR_KERNEL_COMPILE = 8
  integer(c_int32_t), parameter :: SG_ERR_NON_FINITE = 9
  integer(c_int32_t), parameter :: SG_ERR_BUFFER_TOO_SMALL = 10
  integer(c_int32_t), parameter :: SG_ERR_INTERNAL = 11
  integer(c_int32_t), parameter :: SG_ERR_CANCELLED = 12

  ! Options of sg_dwt_denoise_*; start from sg_dwt_denoise_options_default().
  type, bind(C) :: sg_dwt_denoise_options
    integer(c_int32_t) :: threshold_rule   ! SG_THRESHOLD_UNIVERSAL or SG_THRESHOLD_FIXED
    integer(c_int32_t) :: threshold_mode   ! SG_THRESHOLD_SOFT or SG_THRESHOLD_HARD
    integer(c_int32_t) :: noise_estimate   ! SG_NOISE_FINEST_LEVEL or SG_NOISE_PER_LEVEL
    integer(c_int32_t) :: n_levels         ! uint32_t: depth, 0 for all levels
    real(c_double) :: fixed_threshold      ! the threshold of SG_THRESHOLD_FIXED (>= 0)
    integer(c_int64_t) :: level_mask       ! uint64_t: bit j-1 set thresholds level j
  end type sg_dwt_denoise_options

  ! Options of sg_usfft_plan_create; start from sg_usfft_options_default().
  type, bind(C) :: sg_usfft_options
    integer(c_int32_t) :: kernel           ! SG_USFFT_KERNEL_PROLATE, _ES or _GAUSSIAN
    integer(c_int32_t) :: mode_order       ! SG_USFFT_MODES_CENTRED or SG_USFFT_MODES_FFT
    real(c_double) :: upsampling           ! 2.0 (the only value supported)
  end type sg_usfft_options

  ! Options of sg_fxdecon_plan_create_2d/_3d; start from sg_fxdecon_options_default()
  ! or sg_fxdecon_options_seismic_unix(). Units and defaults: see include/seisgpu.h.
  type, bind(C) :: sg_fxdecon_options
    real(c_double) :: sample_interval_s    ! seconds (0.004)
    real(c_double) :: fmin_hz              ! Hz (6)
    real(c_double) :: fmax_hz              ! Hz; 0 = 0.6 x Nyquist
    real(c_double) :: time_window_s        ! seconds; 0 = whole trace
    real(c_double) :: taper_s              ! seconds (0.1)
    integer(c_int32_t) :: fft_length       ! 0 = automatic
    integer(c_int32_t) :: window_traces    ! 2D (20)
    integer(c_int32_t) :: overlap_traces   ! 2D (3)
    integer(c_int32_t) :: operator_traces  ! 2D: L traces on each side (4)
    integer(c_int32_t) :: window_inline    ! 3D (20)
    integer(c_int32_t) :: window_crossline ! 3D (20)
    integer(c_int32_t) :: overlap_inline   ! 3D (3)
    integer(c_int32_t) :: overlap_crossline ! 3D (3)
    integer(c_int32_t) :: operator_inline  ! 3D: odd extent Lx (7)
    integer(c_int32_t) :: operator_crossline ! 3D: odd extent Ly (7)
    real(c_double) :: damping              ! fraction of the zero lag (0.01)
    integer(c_int32_t) :: prediction       ! SG_FXDECON_TWO_SIDED or _FORWARD_BACKWARD
    integer(c_int32_t) :: out_of_band      ! SG_FXDECON_PASS_OUT_OF_BAND or _ZERO_
    integer(c_int32_t) :: su_compatible    ! 1: reproduce Seismic Unix sufxdecon (2D)
  end type sg_fxdecon_options
  ! Options of an sg_xcorr_plan; start from sg_xcorr_options_default() (NoisePy's
  ! defaults) and set at least sampling_rate, freqmin and freqmax.
  type, bind(C) :: sg_xcorr_options
    real(c_double) :: sampling_rate        ! samples per second (20)
    real(c_double) :: cc_len               ! window length, s (1800)
    real(c_double) :: step                 ! hop between windows, s (450)
    real(c_double) :: freqmin              ! band, Hz (0.05 ...
    real(c_double) :: freqmax              ! ... 2.0)
    real(c_double) :: max_over_std         ! window rejection threshold (10)
    real(c_double) :: maxlag               ! lags kept, s (200)
    real(c_double) :: pws_power            ! phase-weighted stack exponent (2)
    real(c_double) :: robust_epsilon       ! robust stack convergence (0.001)
    integer(c_int32_t) :: bandpass_corners ! Butterworth order (4); 0 = none
    integer(c_int32_t) :: detrend_taper    ! 1: detrend and taper each day (1)
    integer(c_int32_t) :: time_norm        ! SG_XCORR_TIME_NORM_* (NONE)
    integer(c_int32_t) :: smooth_n         ! running-mean samples (10)
    integer(c_int32_t) :: freq_norm        ! SG_XCORR_FREQ_NORM_* (RUNNING_MEAN)
    integer(c_int32_t) :: smoothspect_n    ! whitening running-mean bins (10)
    integer(c_int32_t) :: whiten_taper_bins ! whitening band-edge taper bins (100)
    integer(c_int32_t) :: stack_method     ! SG_XCORR_STACK_* (LINEAR)
    integer(c_int32_t) :: autocorrelation  ! 1: pairs i <= j (0)
    integer(c_int32_t) :: cc_method        ! SG_XCORR_CC_* (XCORR)
  end type sg_xcorr_options

  ! Options of sg_emlog_search; start from sg_emlog_options_default().
  type, bind(C) :: sg_emlog_options
    integer(c_int32_t) :: criterion        ! SG_EMLOG_FIT_WITHIN_ERRORS, _MAX_MISFIT, _DELTA_CHI_SQUARE
    real(c_double) :: level                ! F_max or Delta of the criterion
    integer(c_int32_t) :: mode             ! SG_EMLOG_FAST or SG_EMLOG_DIRECT
    integer(c_int32_t) :: norm             ! SG_EMLOG_NORM_L2, _L1 or _MAX (direct mode)
    integer(c_size_t) :: max_models        ! list the first this many equivalent models
  end type sg_emlog_options

  ! Options of sg_wavepacket_pocs_f32/_f64; start from sg_wavepacket_pocs_options_default().
  type, bind(C) :: sg_wavepacket_pocs_options
    integer(c_size_t) :: iterations        ! iterations, >= 1 (30)
    integer(c_int32_t) :: schedule         ! SG_WAVEPACKET_SCHEDULE_* (EXPONENTIAL)
    real(c_double) :: first                ! first threshold / max |c| (0.5)
    real(c_double) :: last                 ! last threshold / max |c| (0.001)
  end type sg_wavepacket_pocs_options

  ! Options of sg_wavepacket_layout_create_with_options; start from
  ! sg_wavepacket_layout_options_default().
  type, bind(C) :: sg_wavepacket_layout_options
    integer(c_size_t) :: directions        ! 2D even, 3D a Lebedev size; 0: 32 (2D), 350 (3D)
    integer(c_size_t) :: levels            ! directional levels 1 ... 12; 0: automatic
    real(c_double) :: alpha                ! radial sharpness, 0.5 ... 20 (3)
    real(c_double) :: beta                 ! radial over lateral width; 0: automatic
    real(c_double) :: cutoff               ! windows cut below this, in (0, 0.5) (0.001)
    real(c_double) :: tolerance            ! USFFT relative accuracy (1e-6)
  end type sg_wavepacket_layout_options

  ! Options of sg_wavepacket_sparse_approximation_f32/_f64; start from
  ! sg_wavepacket_sparse_options_default().
  type, bind(C) :: sg_wavepacket_sparse_options
    integer(c_size_t) :: stages            ! stages of support growth, >= 1 (12)
    integer(c_size_t) :: refit_iterations  ! CGLS iterations per refit, >= 1 (8)
  end type sg_wavepacket_sparse_options

  interface

    ! ---- contexts -------------------------------------------------------------------

    function sg_context_create(backend, device_ordinal, out) &
        bind(C, name="sg_context_create") result(status)
      import :: c_int32_t, c_ptr
      integer(c_int32_t), value, intent(in) :: backend
      integer(c_int32_t), value, intent(in) :: device_ordinal
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_context_create

    ! cu_context: the application's CUcontext as an integer; the library never destroys it.
    function sg_context_create_on_cuda_context(cu_context, out) &
        bind(C, name="sg_context_create_on_cuda_context") result(status)
      import :: c_int32_t, c_int64_t, c_ptr
      integer(c_int64_t), value, intent(in) :: cu_context
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_context_create_on_cuda_context

    function sg_context_backend(ctx, backend) &
        bind(C, name="sg_context_backend") result(status)
      import :: c_int32_t, c_ptr
      type(c_ptr), value, intent(in) :: ctx
      integer(c_int32_t), intent(out) :: backend
      integer(c_int32_t) :: status
    end function sg_context_backend

    ! buf: len bytes, NUL-terminated on success; len = 0 queries the size into needed.
    ! Prefer sg_context_description(ctx) below.
    function sg_context_describe(ctx, buf, len, needed) &
        bind(C, name="sg_context_describe") result(status)
      import :: c_int32_t, c_size_t, c_char, c_ptr
      type(c_ptr), value, intent(in) :: ctx
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), value, intent(in) :: len
      integer(c_size_t), intent(out) :: needed
      integer(c_int32_t) :: status
    end function sg_context_describe

    subroutine sg_context_destroy(ctx) bind(C, name="sg_context_destroy")
      import :: c_ptr
      type(c_ptr), value, intent(in) :: ctx
    end subroutine sg_context_destroy

    ! callback: c_funloc of a bind(C) function
    !   integer(c_int) function cb(user, stage, fraction) bind(C)
    !     type(c_ptr), value :: user, stage   ! stage: a NUL-terminated C string
    !     real(c_double), value :: fraction
    ! returning 0 to go on, non-zero to cancel; c_null_funptr removes it.
    function sg_context_set_progress(ctx, callback, user) &
        bind(C, name="sg_context_set_progress") result(status)
      import :: c_int32_t, c_ptr, c_funptr
      type(c_ptr), value :: ctx
      type(c_funptr), value :: callback
      type(c_ptr), value :: user
      integer(c_int32_t) :: status
    end function sg_context_set_progress

    ! stream: a CUstream (cudaStream_t) as an integer, 0 for the legacy default stream.
    function sg_context_set_stream(ctx, stream) &
        bind(C, name="sg_context_set_stream") result(status)
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int64_t), value, intent(in) :: stream
      integer(c_int32_t) :: status
    end function sg_context_set_stream

    function sg_context_set_device_checks(ctx, checks) &
        bind(C, name="sg_context_set_device_checks") result(status)
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int32_t), value, intent(in) :: checks
      integer(c_int32_t) :: status
    end function sg_context_set_device_checks

    ! alloc: int (*)(void *user, size_t bytes, uint64_t stream, uint64_t *ptr), a bind(C)
    ! function returning 0 with ptr set; free: void (*)(void *user, uint64_t ptr,
    ! size_t bytes, uint64_t stream). Both c_null_funptr restore the default allocator.
    function sg_context_set_device_allocator(ctx, alloc, free, user) &
        bind(C, name="sg_context_set_device_allocator") result(status)
      import :: c_int32_t, c_ptr, c_funptr
      type(c_ptr), value :: ctx
      type(c_funptr), value :: alloc
      type(c_funptr), value :: free
      type(c_ptr), value :: user
      integer(c_int32_t) :: status
    end function sg_context_set_device_allocator

    function sg_context_device_memory(ctx, in_use, peak) &
        bind(C, name="sg_context_device_memory") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: ctx
      integer(c_size_t), intent(out) :: in_use
      integer(c_size_t), intent(out) :: peak
      integer(c_int32_t) :: status
    end function sg_context_device_memory

    function sg_context_synchronize(ctx) &
        bind(C, name="sg_context_synchronize") result(status)
      import :: c_int32_t, c_ptr
      type(c_ptr), value, intent(in) :: ctx
      integer(c_int32_t) :: status
    end function sg_context_synchronize

    ! ---- DWT plans ------------------------------------------------------------------

    function sg_dwt_denoise_options_default() &
        bind(C, name="sg_dwt_denoise_options_default") result(options)
      import :: sg_dwt_denoise_options
      type(sg_dwt_denoise_options) :: options
    end function sg_dwt_denoise_options_default

    function sg_dwt_plan_create(ctx, family, member, n_samples, out) &
        bind(C, name="sg_dwt_plan_create") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: ctx
      integer(c_int32_t), value, intent(in) :: family
      integer(c_int32_t), value, intent(in) :: member
      integer(c_size_t), value, intent(in) :: n_samples
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_dwt_plan_create

    subroutine sg_dwt_plan_destroy(plan) bind(C, name="sg_dwt_plan_destroy")
      import :: c_ptr
      type(c_ptr), value, intent(in) :: plan
    end subroutine sg_dwt_plan_destroy

    function sg_dwt_plan_workspace_bytes(plan, bytes) &
        bind(C, name="sg_dwt_plan_workspace_bytes") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), intent(out) :: bytes
      integer(c_int32_t) :: status
    end function sg_dwt_plan_workspace_bytes

    function sg_dwt_plan_reserve(plan, n_traces) &
        bind(C, name="sg_dwt_plan_reserve") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), value, intent(in) :: n_traces
      integer(c_int32_t) :: status
    end function sg_dwt_plan_reserve

    ! n_levels is C's uint32_t; 0 for all levels.
    function sg_dwt_execute_f32(plan, direction, n_levels, input, output, n_traces, &
        trace_stride) bind(C, name="sg_dwt_execute_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_int32_t), value, intent(in) :: direction
      integer(c_int32_t), value, intent(in) :: n_levels
      real(c_float), intent(in) :: input(*)
      real(c_float), intent(inout) :: output(*)
      integer(c_size_t), value, intent(in) :: n_traces
      integer(c_size_t), value, intent(in) :: trace_stride
      integer(c_int32_t) :: status
    end function sg_dwt_execute_f32

    function sg_dwt_execute_f64(plan, direction, n_levels, input, output, n_traces, &
        trace_stride) bind(C, name="sg_dwt_execute_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_int32_t), value, intent(in) :: direction
      integer(c_int32_t), value, intent(in) :: n_levels
      real(c_double), intent(in) :: input(*)
      real(c_double), intent(inout) :: output(*)
      integer(c_size_t), value, intent(in) :: n_traces
      integer(c_size_t), value, intent(in) :: trace_stride
      integer(c_int32_t) :: status
    end function sg_dwt_execute_f64

    ! options: pass sg_dwt_denoise_options_default() for the defaults.
    ! thresholds: c_null_ptr, or c_loc(t) of a target array t(levels*n_traces).
    function sg_dwt_denoise_f32(plan, options, input, output, n_traces, trace_stride, &
        thresholds) bind(C, name="sg_dwt_denoise_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr, sg_dwt_denoise_options
      type(c_ptr), value, intent(in) :: plan
      type(sg_dwt_denoise_options), intent(in) :: options
      real(c_float), intent(in) :: input(*)
      real(c_float), intent(inout) :: output(*)
      integer(c_size_t), value, intent(in) :: n_traces
      integer(c_size_t), value, intent(in) :: trace_stride
      type(c_ptr), value, intent(in) :: thresholds
      integer(c_int32_t) :: status
    end function sg_dwt_denoise_f32

    function sg_dwt_denoise_f64(plan, options, input, output, n_traces, trace_stride, &
        thresholds) bind(C, name="sg_dwt_denoise_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr, sg_dwt_denoise_options
      type(c_ptr), value, intent(in) :: plan
      type(sg_dwt_denoise_options), intent(in) :: options
      real(c_double), intent(in) :: input(*)
      real(c_double), intent(inout) :: output(*)
      integer(c_size_t), value, intent(in) :: n_traces
      integer(c_size_t), value, intent(in) :: trace_stride
      type(c_ptr), value, intent(in) :: thresholds
      integer(c_int32_t) :: status
    end function sg_dwt_denoise_f64

    ! input, output: device addresses (CUdeviceptr, e.g. transfer(c_devloc(a), 0_c_int64_t)
    ! in CUDA Fortran); equal for in place.
    function sg_dwt_execute_device_f32(plan, direction, n_levels, input, output, &
        n_traces, trace_stride) bind(C, name="sg_dwt_execute_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_int32_t), value, intent(in) :: direction
      integer(c_int32_t), value, intent(in) :: n_levels
      integer(c_int64_t), value, intent(in) :: input
      integer(c_int64_t), value, intent(in) :: output
      integer(c_size_t), value, intent(in) :: n_traces
      integer(c_size_t), value, intent(in) :: trace_stride
      integer(c_int32_t) :: status
    end function sg_dwt_execute_device_f32

    ! input, output: device addresses (CUdeviceptr, e.g. transfer(c_devloc(a), 0_c_int64_t)
    ! in CUDA Fortran); equal for in place.
    function sg_dwt_execute_device_f64(plan, direction, n_levels, input, output, &
        n_traces, trace_stride) bind(C, name="sg_dwt_execute_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_int32_t), value, intent(in) :: direction
      integer(c_int32_t), value, intent(in) :: n_levels
      integer(c_int64_t), value, intent(in) :: input
      integer(c_int64_t), value, intent(in) :: output
      integer(c_size_t), value, intent(in) :: n_traces
      integer(c_size_t), value, intent(in) :: trace_stride
      integer(c_int32_t) :: status
    end function sg_dwt_execute_device_f64

    ! thresholds: c_null_ptr, or c_loc(t) of a host target array t(levels*n_traces).
    function sg_dwt_denoise_device_f32(plan, options, input, output, n_traces, &
        trace_stride, thresholds) bind(C, name="sg_dwt_denoise_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr, sg_dwt_denoise_options
      type(c_ptr), value, intent(in) :: plan
      type(sg_dwt_denoise_options), intent(in) :: options
      integer(c_int64_t), value, intent(in) :: input
      integer(c_int64_t), value, intent(in) :: output
      integer(c_size_t), value, intent(in) :: n_traces
      integer(c_size_t), value, intent(in) :: trace_stride
      type(c_ptr), value, intent(in) :: thresholds
      integer(c_int32_t) :: status
    end function sg_dwt_denoise_device_f32

    ! thresholds: c_null_ptr, or c_loc(t) of a host target array t(levels*n_traces).
    function sg_dwt_denoise_device_f64(plan, options, input, output, n_traces, &
        trace_stride, thresholds) bind(C, name="sg_dwt_denoise_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr, sg_dwt_denoise_options
      type(c_ptr), value, intent(in) :: plan
      type(sg_dwt_denoise_options), intent(in) :: options
      integer(c_int64_t), value, intent(in) :: input
      integer(c_int64_t), value, intent(in) :: output
      integer(c_size_t), value, intent(in) :: n_traces
      integer(c_size_t), value, intent(in) :: trace_stride
      type(c_ptr), value, intent(in) :: thresholds
      integer(c_int32_t) :: status
    end function sg_dwt_denoise_device_f64

    ! ---- USFFT plans ----------------------------------------------------------------

    function sg_usfft_options_default() &
        bind(C, name="sg_usfft_options_default") result(options)
      import :: sg_usfft_options
      type(sg_usfft_options) :: options
    end function sg_usfft_options_default

    ! n_modes(dim): mode counts, dimension 1 fastest. options: sg_usfft_options_default()
    ! for the defaults.
    function sg_usfft_plan_create(ctx, type, dim, n_modes, sign, tolerance, precision, &
        n_vectors, options, out) bind(C, name="sg_usfft_plan_create") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr, sg_usfft_options
      type(c_ptr), value, intent(in) :: ctx
      integer(c_int32_t), value, intent(in) :: type
      integer(c_int32_t), value, intent(in) :: dim
      integer(c_size_t), intent(in) :: n_modes(*)
      integer(c_int32_t), value, intent(in) :: sign
      real(c_double), value, intent(in) :: tolerance
      integer(c_int32_t), value, intent(in) :: precision
      integer(c_size_t), value, intent(in) :: n_vectors
      type(sg_usfft_options), intent(in) :: options
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_usfft_plan_create

    subroutine sg_usfft_plan_destroy(plan) bind(C, name="sg_usfft_plan_destroy")
      import :: c_ptr
      type(c_ptr), value, intent(in) :: plan
    end subroutine sg_usfft_plan_destroy

    function sg_usfft_plan_workspace_bytes(plan, bytes) &
        bind(C, name="sg_usfft_plan_workspace_bytes") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), intent(out) :: bytes
      integer(c_int32_t) :: status
    end function sg_usfft_plan_workspace_bytes

    ! x, y, z: m coordinates each, radians; a plan of lower dimension ignores y and z
    ! (pass x again).
    function sg_usfft_set_points_f32(plan, m, x, y, z) &
        bind(C, name="sg_usfft_set_points_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), value, intent(in) :: m
      real(c_float), intent(in) :: x(*)
      real(c_float), intent(in) :: y(*)
      real(c_float), intent(in) :: z(*)
      integer(c_int32_t) :: status
    end function sg_usfft_set_points_f32

    function sg_usfft_set_points_f64(plan, m, x, y, z) &
        bind(C, name="sg_usfft_set_points_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), value, intent(in) :: m
      real(c_double), intent(in) :: x(*)
      real(c_double), intent(in) :: y(*)
      real(c_double), intent(in) :: z(*)
      integer(c_int32_t) :: status
    end function sg_usfft_set_points_f64

    ! Type 3: m points x, y, z and n frequencies s, t, u; a plan of lower dimension
    ! ignores the unused ones (pass x resp. s again).
    function sg_usfft_set_points3_f32(plan, m, x, y, z, n, s, t, u) &
        bind(C, name="sg_usfft_set_points3_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), value, intent(in) :: m
      real(c_float), intent(in) :: x(*)
      real(c_float), intent(in) :: y(*)
      real(c_float), intent(in) :: z(*)
      integer(c_size_t), value, intent(in) :: n
      real(c_float), intent(in) :: s(*)
      real(c_float), intent(in) :: t(*)
      real(c_float), intent(in) :: u(*)
      integer(c_int32_t) :: status
    end function sg_usfft_set_points3_f32

    function sg_usfft_set_points3_f64(plan, m, x, y, z, n, s, t, u) &
        bind(C, name="sg_usfft_set_points3_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), value, intent(in) :: m
      real(c_double), intent(in) :: x(*)
      real(c_double), intent(in) :: y(*)
      real(c_double), intent(in) :: z(*)
      integer(c_size_t), value, intent(in) :: n
      real(c_double), intent(in) :: s(*)
      real(c_double), intent(in) :: t(*)
      real(c_double), intent(in) :: u(*)
      integer(c_int32_t) :: status
    end function sg_usfft_set_points3_f64

    ! x, y, z: CUdeviceptr values (device addresses) of m coordinates each.
    function sg_usfft_set_points_device_f32(plan, m, x, y, z) &
        bind(C, name="sg_usfft_set_points_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), value, intent(in) :: m
      integer(c_int64_t), value, intent(in) :: x
      integer(c_int64_t), value, intent(in) :: y
      integer(c_int64_t), value, intent(in) :: z
      integer(c_int32_t) :: status
    end function sg_usfft_set_points_device_f32

    function sg_usfft_set_points_device_f64(plan, m, x, y, z) &
        bind(C, name="sg_usfft_set_points_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), value, intent(in) :: m
      integer(c_int64_t), value, intent(in) :: x
      integer(c_int64_t), value, intent(in) :: y
      integer(c_int64_t), value, intent(in) :: z
      integer(c_int32_t) :: status
    end function sg_usfft_set_points_device_f64

    ! c, f: c_loc of complex (target) arrays: c(m, n_vectors) strengths and
    ! f(n1, n2, n3, n_vectors) modes. Type 1 reads c and writes f; type 2 the reverse.
    function sg_usfft_execute_f32(plan, c, f) &
        bind(C, name="sg_usfft_execute_f32") result(status)
      import :: c_int32_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      type(c_ptr), value, intent(in) :: c
      type(c_ptr), value, intent(in) :: f
      integer(c_int32_t) :: status
    end function sg_usfft_execute_f32

    function sg_usfft_execute_f64(plan, c, f) &
        bind(C, name="sg_usfft_execute_f64") result(status)
      import :: c_int32_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      type(c_ptr), value, intent(in) :: c
      type(c_ptr), value, intent(in) :: f
      integer(c_int32_t) :: status
    end function sg_usfft_execute_f64

    ! c, f: device addresses (CUdeviceptr) of the interleaved complex arrays.
    function sg_usfft_execute_device_f32(plan, c, f) &
        bind(C, name="sg_usfft_execute_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_int64_t), value, intent(in) :: c
      integer(c_int64_t), value, intent(in) :: f
      integer(c_int32_t) :: status
    end function sg_usfft_execute_device_f32

    ! c, f: device addresses (CUdeviceptr) of the interleaved complex arrays.
    function sg_usfft_execute_device_f64(plan, c, f) &
        bind(C, name="sg_usfft_execute_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_int64_t), value, intent(in) :: c
      integer(c_int64_t), value, intent(in) :: f
      integer(c_int32_t) :: status
    end function sg_usfft_execute_device_f64

    ! ---- F-X / F-XY prediction filtering -------------------------------------------

    function sg_fxdecon_options_default() &
        bind(C, name="sg_fxdecon_options_default") result(options)
      import :: sg_fxdecon_options
      type(sg_fxdecon_options) :: options
    end function sg_fxdecon_options_default

    function sg_fxdecon_options_seismic_unix() &
        bind(C, name="sg_fxdecon_options_seismic_unix") result(options)
      import :: sg_fxdecon_options
      type(sg_fxdecon_options) :: options
    end function sg_fxdecon_options_seismic_unix

    function sg_fxdecon_plan_create_2d(ctx, options, n_samples, n_traces, out) &
        bind(C, name="sg_fxdecon_plan_create_2d") result(status)
      import :: c_int32_t, c_size_t, c_ptr, sg_fxdecon_options
      type(c_ptr), value, intent(in) :: ctx
      type(sg_fxdecon_options), intent(in) :: options
      integer(c_size_t), value, intent(in) :: n_samples
      integer(c_size_t), value, intent(in) :: n_traces
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_fxdecon_plan_create_2d

    function sg_fxdecon_plan_create_3d(ctx, options, n_samples, n_inline, n_crossline, &
        out) bind(C, name="sg_fxdecon_plan_create_3d") result(status)
      import :: c_int32_t, c_size_t, c_ptr, sg_fxdecon_options
      type(c_ptr), value, intent(in) :: ctx
      type(sg_fxdecon_options), intent(in) :: options
      integer(c_size_t), value, intent(in) :: n_samples
      integer(c_size_t), value, intent(in) :: n_inline
      integer(c_size_t), value, intent(in) :: n_crossline
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_fxdecon_plan_create_3d

    subroutine sg_fxdecon_plan_destroy(plan) bind(C, name="sg_fxdecon_plan_destroy")
      import :: c_ptr
      type(c_ptr), value, intent(in) :: plan
    end subroutine sg_fxdecon_plan_destroy

    function sg_fxdecon_plan_workspace_bytes(plan, bytes) &
        bind(C, name="sg_fxdecon_plan_workspace_bytes") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), intent(out) :: bytes
      integer(c_int32_t) :: status
    end function sg_fxdecon_plan_workspace_bytes

    ! A 2-D array x(n_samples, n_traces) has trace_stride = n_samples.
    function sg_fxdecon_execute_2d_f32(plan, input, output, trace_stride) &
        bind(C, name="sg_fxdecon_execute_2d_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: plan
      real(c_float), intent(in) :: input(*)
      real(c_float), intent(inout) :: output(*)
      integer(c_size_t), value, intent(in) :: trace_stride
      integer(c_int32_t) :: status
    end function sg_fxdecon_execute_2d_f32

    function sg_fxdecon_execute_2d_f64(plan, input, output, trace_stride) &
        bind(C, name="sg_fxdecon_execute_2d_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: plan
      real(c_double), intent(in) :: input(*)
      real(c_double), intent(inout) :: output(*)
      integer(c_size_t), value, intent(in) :: trace_stride
      integer(c_int32_t) :: status
    end function sg_fxdecon_execute_2d_f64

    ! A 3-D array x(n_samples, n_inline, n_crossline) has inline_stride = n_samples and
    ! crossline_stride = n_samples*n_inline.
    function sg_fxdecon_execute_3d_f32(plan, input, output, inline_stride, &
        crossline_stride) bind(C, name="sg_fxdecon_execute_3d_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: plan
      real(c_float), intent(in) :: input(*)
      real(c_float), intent(inout) :: output(*)
      integer(c_size_t), value, intent(in) :: inline_stride
      integer(c_size_t), value, intent(in) :: crossline_stride
      integer(c_int32_t) :: status
    end function sg_fxdecon_execute_3d_f32

    function sg_fxdecon_execute_3d_f64(plan, input, output, inline_stride, &
        crossline_stride) bind(C, name="sg_fxdecon_execute_3d_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: plan
      real(c_double), intent(in) :: input(*)
      real(c_double), intent(inout) :: output(*)
      integer(c_size_t), value, intent(in) :: inline_stride
      integer(c_size_t), value, intent(in) :: crossline_stride
      integer(c_int32_t) :: status
    end function sg_fxdecon_execute_3d_f64

    ! input, output: device addresses (CUdeviceptr, e.g. transfer(c_devloc(a), 0_c_int64_t)
    ! in CUDA Fortran); equal for in place.
    function sg_fxdecon_execute_2d_device_f32(plan, input, output, trace_stride) &
        bind(C, name="sg_fxdecon_execute_2d_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_int64_t), value, intent(in) :: input
      integer(c_int64_t), value, intent(in) :: output
      integer(c_size_t), value, intent(in) :: trace_stride
      integer(c_int32_t) :: status
    end function sg_fxdecon_execute_2d_device_f32

    ! input, output: device addresses (CUdeviceptr, e.g. transfer(c_devloc(a), 0_c_int64_t)
    ! in CUDA Fortran); equal for in place. Always SG_ERR_UNSUPPORTED (float only on the GPU).
    function sg_fxdecon_execute_2d_device_f64(plan, input, output, trace_stride) &
        bind(C, name="sg_fxdecon_execute_2d_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_int64_t), value, intent(in) :: input
      integer(c_int64_t), value, intent(in) :: output
      integer(c_size_t), value, intent(in) :: trace_stride
      integer(c_int32_t) :: status
    end function sg_fxdecon_execute_2d_device_f64

    ! input, output: device addresses, as sg_fxdecon_execute_2d_device_f32.
    function sg_fxdecon_execute_3d_device_f32(plan, input, output, inline_stride, &
        crossline_stride) bind(C, name="sg_fxdecon_execute_3d_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_int64_t), value, intent(in) :: input
      integer(c_int64_t), value, intent(in) :: output
      integer(c_size_t), value, intent(in) :: inline_stride
      integer(c_size_t), value, intent(in) :: crossline_stride
      integer(c_int32_t) :: status
    end function sg_fxdecon_execute_3d_device_f32

    ! input, output: device addresses, as sg_fxdecon_execute_2d_device_f64.
    function sg_fxdecon_execute_3d_device_f64(plan, input, output, inline_stride, &
        crossline_stride) bind(C, name="sg_fxdecon_execute_3d_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_int64_t), value, intent(in) :: input
      integer(c_int64_t), value, intent(in) :: output
      integer(c_size_t), value, intent(in) :: inline_stride
      integer(c_size_t), value, intent(in) :: crossline_stride
      integer(c_int32_t) :: status
    end function sg_fxdecon_execute_3d_device_f64
    ! ---- ambient-noise correlation --------------------------------------------------

    function sg_xcorr_options_default() &
        bind(C, name="sg_xcorr_options_default") result(options)
      import :: sg_xcorr_options
      type(sg_xcorr_options) :: options
    end function sg_xcorr_options_default

    function sg_xcorr_plan_create(ctx, options, out) &
        bind(C, name="sg_xcorr_plan_create") result(status)
      import :: c_int32_t, c_ptr, sg_xcorr_options
      type(c_ptr), value, intent(in) :: ctx
      type(sg_xcorr_options), intent(in) :: options
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_xcorr_plan_create

    subroutine sg_xcorr_plan_destroy(plan) bind(C, name="sg_xcorr_plan_destroy")
      import :: c_ptr
      type(c_ptr), value, intent(in) :: plan
    end subroutine sg_xcorr_plan_destroy

    function sg_xcorr_plan_workspace_bytes(plan, bytes) &
        bind(C, name="sg_xcorr_plan_workspace_bytes") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), intent(out) :: bytes
      integer(c_int32_t) :: status
    end function sg_xcorr_plan_workspace_bytes

    function sg_xcorr_plan_sizes(plan, n_samples, n_windows, n_lags) &
        bind(C, name="sg_xcorr_plan_sizes") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), value, intent(in) :: n_samples
      integer(c_size_t), intent(out) :: n_windows
      integer(c_size_t), intent(out) :: n_lags
      integer(c_int32_t) :: status
    end function sg_xcorr_plan_sizes

    ! station_days(station_stride, n_stations); valid: c_null_ptr (no gaps) or c_loc of
    ! an integer(c_int8_t) array of the same shape, 0 for a missing sample.
    function sg_xcorr_preprocess_f32(plan, station_days, n_stations, n_samples, &
        station_stride, valid, out) bind(C, name="sg_xcorr_preprocess_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: plan
      real(c_float), intent(in) :: station_days(*)
      integer(c_size_t), value, intent(in) :: n_stations
      integer(c_size_t), value, intent(in) :: n_samples
      integer(c_size_t), value, intent(in) :: station_stride
      type(c_ptr), value, intent(in) :: valid
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_xcorr_preprocess_f32

    subroutine sg_xcorr_spectra_destroy(spectra) bind(C, name="sg_xcorr_spectra_destroy")
      import :: c_ptr
      type(c_ptr), value, intent(in) :: spectra
    end subroutine sg_xcorr_spectra_destroy

    function sg_xcorr_spectra_sizes(spectra, n_stations, n_windows, band_start, &
        band_len, nfft) bind(C, name="sg_xcorr_spectra_sizes") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: spectra
      integer(c_size_t), intent(out) :: n_stations
      integer(c_size_t), intent(out) :: n_windows
      integer(c_size_t), intent(out) :: band_start
      integer(c_size_t), intent(out) :: band_len
      integer(c_size_t), intent(out) :: nfft
      integer(c_int32_t) :: status
    end function sg_xcorr_spectra_sizes

    ! values: c_null_ptr or c_loc of real(c_float) (2*band_len*n_stations*n_windows);
    ! kept: c_null_ptr or c_loc of integer(c_int8_t) (n_stations*n_windows).
    function sg_xcorr_spectra_copy(spectra, values, kept) &
        bind(C, name="sg_xcorr_spectra_copy") result(status)
      import :: c_int32_t, c_ptr
      type(c_ptr), value, intent(in) :: spectra
      type(c_ptr), value, intent(in) :: values
      type(c_ptr), value, intent(in) :: kept
      integer(c_int32_t) :: status
    end function sg_xcorr_spectra_copy

    ! values: real(c_float) (2*band_len*n_stations*n_windows), as sg_xcorr_spectra_copy
    ! writes them; kept: c_loc of integer(c_int8_t) (n_stations*n_windows).
    function sg_xcorr_spectra_import(plan, values, kept, n_stations, n_windows, out) &
        bind(C, name="sg_xcorr_spectra_import") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: plan
      real(c_float), intent(in) :: values(*)
      type(c_ptr), value, intent(in) :: kept
      integer(c_size_t), value, intent(in) :: n_stations
      integer(c_size_t), value, intent(in) :: n_windows
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_xcorr_spectra_import

    ! Station and pair numbers count from 0, as in C.
    function sg_xcorr_pair_count(plan, n_stations, i0, ni, j0, nj, n_pairs) &
        bind(C, name="sg_xcorr_pair_count") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), value, intent(in) :: n_stations
      integer(c_size_t), value, intent(in) :: i0
      integer(c_size_t), value, intent(in) :: ni
      integer(c_size_t), value, intent(in) :: j0
      integer(c_size_t), value, intent(in) :: nj
      integer(c_size_t), intent(out) :: n_pairs
      integer(c_int32_t) :: status
    end function sg_xcorr_pair_count

    function sg_xcorr_pair_stations(plan, n_stations, i0, ni, j0, nj, pair, i, j) &
        bind(C, name="sg_xcorr_pair_stations") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), value, intent(in) :: n_stations
      integer(c_size_t), value, intent(in) :: i0
      integer(c_size_t), value, intent(in) :: ni
      integer(c_size_t), value, intent(in) :: j0
      integer(c_size_t), value, intent(in) :: nj
      integer(c_size_t), value, intent(in) :: pair
      integer(c_size_t), intent(out) :: i
      integer(c_size_t), intent(out) :: j
      integer(c_int32_t) :: status
    end function sg_xcorr_pair_stations

    ! days: c_loc of a type(c_ptr), target array of n_days spectra handles;
    ! stacks(pair_stride, n_pairs); n_windows: c_null_ptr or c_loc of an
    ! integer(c_int32_t) array (C's uint32_t) of n_pairs.
    function sg_xcorr_correlate_f32(plan, days, n_days, i0, ni, j0, nj, stacks, &
        pair_stride, n_windows) bind(C, name="sg_xcorr_correlate_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: plan
      type(c_ptr), value, intent(in) :: days
      integer(c_size_t), value, intent(in) :: n_days
      integer(c_size_t), value, intent(in) :: i0
      integer(c_size_t), value, intent(in) :: ni
      integer(c_size_t), value, intent(in) :: j0
      integer(c_size_t), value, intent(in) :: nj
      real(c_float), intent(inout) :: stacks(*)
      integer(c_size_t), value, intent(in) :: pair_stride
      type(c_ptr), value, intent(in) :: n_windows
      integer(c_int32_t) :: status
    end function sg_xcorr_correlate_f32

    ! labels(sum(day_windows)): a group per window, day 0's windows first.
    function sg_xcorr_substack_groups(plan, n_days, day_windows, day_start, substack_len, &
        labels, n_groups) bind(C, name="sg_xcorr_substack_groups") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), value, intent(in) :: n_days
      integer(c_size_t), intent(in) :: day_windows(*)
      real(c_double), intent(in) :: day_start(*)
      real(c_double), value, intent(in) :: substack_len
      integer(c_int32_t), intent(inout) :: labels(*)
      integer(c_size_t), intent(out) :: n_groups
      integer(c_int32_t) :: status
    end function sg_xcorr_substack_groups

    ! substacks(pair_stride, n_pairs, n_groups); n_windows, substack_windows: c_null_ptr
    ! or c_loc of integer(c_int32_t) arrays (C's uint32_t) of n_pairs, n_groups*n_pairs.
    function sg_xcorr_correlate_substacks_f32(plan, days, n_days, i0, ni, j0, nj, labels, &
        n_groups, stacks, pair_stride, n_windows, substacks, substack_windows) &
        bind(C, name="sg_xcorr_correlate_substacks_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: plan
      type(c_ptr), value, intent(in) :: days
      integer(c_size_t), value, intent(in) :: n_days
      integer(c_size_t), value, intent(in) :: i0
      integer(c_size_t), value, intent(in) :: ni
      integer(c_size_t), value, intent(in) :: j0
      integer(c_size_t), value, intent(in) :: nj
      integer(c_int32_t), intent(in) :: labels(*)
      integer(c_size_t), value, intent(in) :: n_groups
      real(c_float), intent(inout) :: stacks(*)
      integer(c_size_t), value, intent(in) :: pair_stride
      type(c_ptr), value, intent(in) :: n_windows
      real(c_float), intent(inout) :: substacks(*)
      type(c_ptr), value, intent(in) :: substack_windows
      integer(c_int32_t) :: status
    end function sg_xcorr_correlate_substacks_f32

    ! station_days, valid: device addresses (CUdeviceptr, e.g. transfer(c_devloc(a),
    ! 0_c_int64_t) in CUDA Fortran); valid 0 for no gaps. Waits for the stream.
    function sg_xcorr_preprocess_device_f32(plan, station_days, n_stations, n_samples, &
        station_stride, valid, out) bind(C, name="sg_xcorr_preprocess_device_f32") &
        result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_int64_t), value, intent(in) :: station_days
      integer(c_size_t), value, intent(in) :: n_stations
      integer(c_size_t), value, intent(in) :: n_samples
      integer(c_size_t), value, intent(in) :: station_stride
      integer(c_int64_t), value, intent(in) :: valid
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_xcorr_preprocess_device_f32

    ! stacks: a device address; n_windows: c_null_ptr or c_loc of a host array.
    function sg_xcorr_correlate_device_f32(plan, days, n_days, i0, ni, j0, nj, stacks, &
        pair_stride, n_windows) bind(C, name="sg_xcorr_correlate_device_f32") &
        result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      type(c_ptr), value, intent(in) :: days
      integer(c_size_t), value, intent(in) :: n_days
      integer(c_size_t), value, intent(in) :: i0
      integer(c_size_t), value, intent(in) :: ni
      integer(c_size_t), value, intent(in) :: j0
      integer(c_size_t), value, intent(in) :: nj
      integer(c_int64_t), value, intent(in) :: stacks
      integer(c_size_t), value, intent(in) :: pair_stride
      type(c_ptr), value, intent(in) :: n_windows
      integer(c_int32_t) :: status
    end function sg_xcorr_correlate_device_f32

    ! stacks, substacks: device addresses; labels and the window counts: host memory.
    function sg_xcorr_correlate_substacks_device_f32(plan, days, n_days, i0, ni, j0, nj, &
        labels, n_groups, stacks, pair_stride, n_windows, substacks, substack_windows) &
        bind(C, name="sg_xcorr_correlate_substacks_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      type(c_ptr), value, intent(in) :: days
      integer(c_size_t), value, intent(in) :: n_days
      integer(c_size_t), value, intent(in) :: i0
      integer(c_size_t), value, intent(in) :: ni
      integer(c_size_t), value, intent(in) :: j0
      integer(c_size_t), value, intent(in) :: nj
      integer(c_int32_t), intent(in) :: labels(*)
      integer(c_size_t), value, intent(in) :: n_groups
      integer(c_int64_t), value, intent(in) :: stacks
      integer(c_size_t), value, intent(in) :: pair_stride
      type(c_ptr), value, intent(in) :: n_windows
      integer(c_int64_t), value, intent(in) :: substacks
      type(c_ptr), value, intent(in) :: substack_windows
      integer(c_int32_t) :: status
    end function sg_xcorr_correlate_substacks_device_f32

    ! ---- errors and versions --------------------------------------------------------

    ! A C string owned by the library; prefer sg_last_error() below.
    function sg_last_error_message() bind(C, name="sg_last_error_message") result(message)
      import :: c_ptr
      type(c_ptr) :: message
    end function sg_last_error_message

    function sg_last_error_copy(buf, len, needed) &
        bind(C, name="sg_last_error_copy") result(status)
      import :: c_int32_t, c_size_t, c_char
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), value, intent(in) :: len
      integer(c_size_t), intent(out) :: needed
      integer(c_int32_t) :: status
    end function sg_last_error_copy

    ! A static C string; prefer sg_status_name(status) below.
    function sg_status_string(status) bind(C, name="sg_status_string") result(name)
      import :: c_int32_t, c_ptr
      integer(c_int32_t), value, intent(in) :: status
      type(c_ptr) :: name
    end function sg_status_string

    ! A static C string; prefer sg_version_string() below.
    function sg_version() bind(C, name="sg_version") result(version)
      import :: c_ptr
      type(c_ptr) :: version
    end function sg_version

    ! C's uint32_t: MAJOR*10000 + MINOR*100 + PATCH.
    function sg_version_number() bind(C, name="sg_version_number") result(number)
      import :: c_int32_t
      integer(c_int32_t) :: number
    end function sg_version_number


    ! EM-logging inversion. a(row_stride, *) column-major from Fortran: element (i, j)
    ! (0-based) at a(i*row_stride + j*col_stride + 1); searched: 0-based column indices.
    function sg_emlog_options_default() bind(C, name="sg_emlog_options_default") &
        result(options)
      import :: sg_emlog_options
      type(sg_emlog_options) :: options
    end function sg_emlog_options_default

    function sg_emlog_plan_create(ctx, n, m, a, row_stride, col_stride, sigma0, f0, &
        f_exp, delta, n_searched, searched, out) bind(C, name="sg_emlog_plan_create") &
        result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: ctx
      integer(c_size_t), value, intent(in) :: n
      integer(c_size_t), value, intent(in) :: m
      real(c_double), intent(in) :: a(*)
      integer(c_size_t), value, intent(in) :: row_stride
      integer(c_size_t), value, intent(in) :: col_stride
      real(c_double), intent(in) :: sigma0(*)
      real(c_double), intent(in) :: f0(*)
      real(c_double), intent(in) :: f_exp(*)
      real(c_double), intent(in) :: delta(*)
      integer(c_size_t), value, intent(in) :: n_searched
      integer(c_int32_t), intent(in) :: searched(*)
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_emlog_plan_create

    subroutine sg_emlog_plan_destroy(plan) bind(C, name="sg_emlog_plan_destroy")
      import :: c_ptr
      type(c_ptr), value, intent(in) :: plan
    end subroutine sg_emlog_plan_destroy

    function sg_emlog_plan_workspace_bytes(plan, bytes) &
        bind(C, name="sg_emlog_plan_workspace_bytes") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_size_t), intent(out) :: bytes
      integer(c_int32_t) :: status
    end function sg_emlog_plan_workspace_bytes

    ! right_vectors(p, p): vector c (0-based) is right_vectors(:, c + 1) transposed, i.e.
    ! element k of vector c at right_vectors(c + 1, k + 1) in Fortran order.
    function sg_emlog_analytic(plan, criterion_kind, level, sigma_star, f_min, empty, &
        lower, upper, singular_values, right_vectors) bind(C, name="sg_emlog_analytic") &
        result(status)
      import :: c_int32_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: plan
      integer(c_int32_t), value, intent(in) :: criterion_kind
      real(c_double), value, intent(in) :: level
      real(c_double), intent(out) :: sigma_star(*)
      real(c_double), intent(out) :: f_min
      integer(c_int32_t), intent(out) :: empty
      real(c_double), intent(out) :: lower(*)
      real(c_double), intent(out) :: upper(*)
      real(c_double), intent(out) :: singular_values(*)
      real(c_double), intent(out) :: right_vectors(*)
      integer(c_int32_t) :: status
    end function sg_emlog_analytic

    ! list_values and pairs may be size-0 arrays when n_list_values and n_pairs are 0.
    function sg_emlog_search(plan, axis_kind, axis_count, axis_min, axis_max, &
        list_values, n_list_values, n_pairs, pairs, options, out) &
        bind(C, name="sg_emlog_search") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr, sg_emlog_options
      type(c_ptr), value, intent(in) :: plan
      integer(c_int32_t), intent(in) :: axis_kind(*)
      integer(c_size_t), intent(in) :: axis_count(*)
      real(c_double), intent(in) :: axis_min(*)
      real(c_double), intent(in) :: axis_max(*)
      real(c_double), intent(in) :: list_values(*)
      integer(c_size_t), value, intent(in) :: n_list_values
      integer(c_size_t), value, intent(in) :: n_pairs
      integer(c_int32_t), intent(in) :: pairs(*)
      type(sg_emlog_options), intent(in) :: options
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_emlog_search

    subroutine sg_emlog_result_destroy(result) bind(C, name="sg_emlog_result_destroy")
      import :: c_ptr
      type(c_ptr), value, intent(in) :: result
    end subroutine sg_emlog_result_destroy

    function sg_emlog_result_summary(result, total, count, best_index, best_model, &
        best_misfit, value_min, value_max, n_models, more_models) &
        bind(C, name="sg_emlog_result_summary") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: result
      integer(c_int64_t), intent(out) :: total
      integer(c_int64_t), intent(out) :: count
      integer(c_int64_t), intent(out) :: best_index
      real(c_double), intent(out) :: best_model(*)
      real(c_double), intent(out) :: best_misfit
      real(c_double), intent(out) :: value_min(*)
      real(c_double), intent(out) :: value_max(*)
      integer(c_size_t), intent(out) :: n_models
      integer(c_int32_t), intent(out) :: more_models
      integer(c_int32_t) :: status
    end function sg_emlog_result_summary

    function sg_emlog_result_marginal(result, parameter, counts, len) &
        bind(C, name="sg_emlog_result_marginal") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: result
      integer(c_size_t), value, intent(in) :: parameter
      integer(c_int64_t), intent(out) :: counts(*)
      integer(c_size_t), value, intent(in) :: len
      integer(c_int32_t) :: status
    end function sg_emlog_result_marginal

    function sg_emlog_result_pair(result, pair, counts, len) &
        bind(C, name="sg_emlog_result_pair") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: result
      integer(c_size_t), value, intent(in) :: pair
      integer(c_int64_t), intent(out) :: counts(*)
      integer(c_size_t), value, intent(in) :: len
      integer(c_int32_t) :: status
    end function sg_emlog_result_pair

    function sg_emlog_result_models(result, indices, values, len) &
        bind(C, name="sg_emlog_result_models") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: result
      integer(c_int64_t), intent(out) :: indices(*)
      real(c_double), intent(out) :: values(*)
      integer(c_size_t), value, intent(in) :: len
      integer(c_int32_t) :: status
    end function sg_emlog_result_models

    ! a, sigma0, f0, f_exp, delta: device addresses (CUdeviceptr, e.g.
    ! transfer(c_devloc(a), 0_c_int64_t) in CUDA Fortran); searched stays a host array.
    function sg_emlog_plan_create_device(ctx, n, m, a, row_stride, col_stride, sigma0, &
        f0, f_exp, delta, n_searched, searched, out) &
        bind(C, name="sg_emlog_plan_create_device") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: ctx
      integer(c_size_t), value, intent(in) :: n
      integer(c_size_t), value, intent(in) :: m
      integer(c_int64_t), value, intent(in) :: a
      integer(c_size_t), value, intent(in) :: row_stride
      integer(c_size_t), value, intent(in) :: col_stride
      integer(c_int64_t), value, intent(in) :: sigma0
      integer(c_int64_t), value, intent(in) :: f0
      integer(c_int64_t), value, intent(in) :: f_exp
      integer(c_int64_t), value, intent(in) :: delta
      integer(c_size_t), value, intent(in) :: n_searched
      integer(c_int32_t), intent(in) :: searched(*)
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_emlog_plan_create_device

    ! The arguments of sg_emlog_search (host arrays); waits for the search.
    function sg_emlog_search_device(plan, axis_kind, axis_count, axis_min, axis_max, &
        list_values, n_list_values, n_pairs, pairs, options, out) &
        bind(C, name="sg_emlog_search_device") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr, sg_emlog_options
      type(c_ptr), value, intent(in) :: plan
      integer(c_int32_t), intent(in) :: axis_kind(*)
      integer(c_size_t), intent(in) :: axis_count(*)
      real(c_double), intent(in) :: axis_min(*)
      real(c_double), intent(in) :: axis_max(*)
      real(c_double), intent(in) :: list_values(*)
      integer(c_size_t), value, intent(in) :: n_list_values
      integer(c_size_t), value, intent(in) :: n_pairs
      integer(c_int32_t), intent(in) :: pairs(*)
      type(sg_emlog_options), intent(in) :: options
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_emlog_search_device

    ! counts: a device address (CUdeviceptr) of len 64-bit integers.
    function sg_emlog_result_marginal_device(result, parameter, counts, len) &
        bind(C, name="sg_emlog_result_marginal_device") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: result
      integer(c_size_t), value, intent(in) :: parameter
      integer(c_int64_t), value, intent(in) :: counts
      integer(c_size_t), value, intent(in) :: len
      integer(c_int32_t) :: status
    end function sg_emlog_result_marginal_device

    ! counts: a device address (CUdeviceptr) of len 64-bit integers.
    function sg_emlog_result_pair_device(result, pair, counts, len) &
        bind(C, name="sg_emlog_result_pair_device") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: result
      integer(c_size_t), value, intent(in) :: pair
      integer(c_int64_t), value, intent(in) :: counts
      integer(c_size_t), value, intent(in) :: len
      integer(c_int32_t) :: status
    end function sg_emlog_result_pair_device

    ! indices, values: device addresses (CUdeviceptr) that do not overlap.
    function sg_emlog_result_models_device(result, indices, values, len) &
        bind(C, name="sg_emlog_result_models_device") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: result
      integer(c_int64_t), value, intent(in) :: indices
      integer(c_int64_t), value, intent(in) :: values
      integer(c_size_t), value, intent(in) :: len
      integer(c_int32_t) :: status
    end function sg_emlog_result_models_device

    ! ---- Gaussian wave packets -------------------------------------------------------

    function sg_wavepacket_pocs_options_default() &
        bind(C, name="sg_wavepacket_pocs_options_default") result(options)
      import :: sg_wavepacket_pocs_options
      type(sg_wavepacket_pocs_options) :: options
    end function sg_wavepacket_pocs_options_default

    function sg_wavepacket_layout_options_default() &
        bind(C, name="sg_wavepacket_layout_options_default") result(options)
      import :: sg_wavepacket_layout_options
      type(sg_wavepacket_layout_options) :: options
    end function sg_wavepacket_layout_options_default

    function sg_wavepacket_sparse_options_default() &
        bind(C, name="sg_wavepacket_sparse_options_default") result(options)
      import :: sg_wavepacket_sparse_options
      type(sg_wavepacket_sparse_options) :: options
    end function sg_wavepacket_sparse_options_default

    function sg_wavepacket_layout_create_with_options(ctx, dim, shape, precision, options, out) &
        bind(C, name="sg_wavepacket_layout_create_with_options") result(status)
      import :: c_int32_t, c_size_t, c_ptr, sg_wavepacket_layout_options
      type(c_ptr), value, intent(in) :: ctx
      integer(c_int32_t), value, intent(in) :: dim
      integer(c_size_t), intent(in) :: shape(*)
      integer(c_int32_t), value, intent(in) :: precision
      type(sg_wavepacket_layout_options), intent(in) :: options
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_wavepacket_layout_create_with_options

    ! As above, the transform's device memory capped at max_device_bytes (0: no cap).
    function sg_wavepacket_layout_create_capped(ctx, dim, shape, precision, options, &
        max_device_bytes, out) bind(C, name="sg_wavepacket_layout_create_capped") result(status)
      import :: c_int32_t, c_size_t, c_ptr, sg_wavepacket_layout_options
      type(c_ptr), value, intent(in) :: ctx
      integer(c_int32_t), value, intent(in) :: dim
      integer(c_size_t), intent(in) :: shape(*)
      integer(c_int32_t), value, intent(in) :: precision
      type(sg_wavepacket_layout_options), intent(in) :: options
      integer(c_size_t), value, intent(in) :: max_device_bytes
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_wavepacket_layout_create_capped

    ! The most device memory such a layout's transform would hold, without making it.
    function sg_wavepacket_device_bytes(ctx, dim, shape, precision, options, &
        max_device_bytes, bytes) bind(C, name="sg_wavepacket_device_bytes") result(status)
      import :: c_int32_t, c_size_t, c_ptr, sg_wavepacket_layout_options
      type(c_ptr), value, intent(in) :: ctx
      integer(c_int32_t), value, intent(in) :: dim
      integer(c_size_t), intent(in) :: shape(*)
      integer(c_int32_t), value, intent(in) :: precision
      type(sg_wavepacket_layout_options), intent(in) :: options
      integer(c_size_t), value, intent(in) :: max_device_bytes
      integer(c_size_t), intent(out) :: bytes
      integer(c_int32_t) :: status
    end function sg_wavepacket_device_bytes

    ! Kept for programs built against it: the layout of the options above at cutoff 1e-3.
    function sg_wavepacket_layout_create(ctx, dim, shape, directions, levels, alpha, beta, &
        tolerance, precision, out) bind(C, name="sg_wavepacket_layout_create") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: ctx
      integer(c_int32_t), value, intent(in) :: dim
      integer(c_size_t), intent(in) :: shape(*)
      integer(c_size_t), value, intent(in) :: directions
      integer(c_size_t), value, intent(in) :: levels
      real(c_double), value, intent(in) :: alpha
      real(c_double), value, intent(in) :: beta
      real(c_double), value, intent(in) :: tolerance
      integer(c_int32_t), value, intent(in) :: precision
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_wavepacket_layout_create

    subroutine sg_wavepacket_layout_destroy(layout) &
        bind(C, name="sg_wavepacket_layout_destroy")
      import :: c_ptr
      type(c_ptr), value, intent(in) :: layout
    end subroutine sg_wavepacket_layout_destroy

    function sg_wavepacket_layout_workspace_bytes(layout, bytes) &
        bind(C, name="sg_wavepacket_layout_workspace_bytes") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_size_t), intent(out) :: bytes
      integer(c_int32_t) :: status
    end function sg_wavepacket_layout_workspace_bytes

    function sg_wavepacket_layout_sizes(layout, n_samples, n_coefficients, n_boxes, levels, &
        n_directions) bind(C, name="sg_wavepacket_layout_sizes") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_size_t), intent(out) :: n_samples
      integer(c_size_t), intent(out) :: n_coefficients
      integer(c_size_t), intent(out) :: n_boxes
      integer(c_size_t), intent(out) :: levels
      integer(c_size_t), intent(out) :: n_directions
      integer(c_int32_t) :: status
    end function sg_wavepacket_layout_sizes

    function sg_wavepacket_box_info(layout, box_index, level, direction, centre, shape, &
        offset) bind(C, name="sg_wavepacket_box_info") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_size_t), value, intent(in) :: box_index
      integer(c_int32_t), intent(out) :: level
      integer(c_int32_t), intent(out) :: direction
      real(c_double), intent(out) :: centre(3)
      integer(c_size_t), intent(out) :: shape(3)
      integer(c_size_t), intent(out) :: offset
      integer(c_int32_t) :: status
    end function sg_wavepacket_box_info

    function sg_wavepacket_packet_norms(layout, norms, n_boxes) &
        bind(C, name="sg_wavepacket_packet_norms") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_double), intent(out) :: norms(*)
      integer(c_size_t), value, intent(in) :: n_boxes
      integer(c_int32_t) :: status
    end function sg_wavepacket_packet_norms

    function sg_wavepacket_forward_f32(layout, data, coeffs) &
        bind(C, name="sg_wavepacket_forward_f32") result(status)
      import :: c_int32_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_float), intent(in) :: data(*)
      real(c_float), intent(inout) :: coeffs(*)      ! interleaved re, im
      integer(c_int32_t) :: status
    end function sg_wavepacket_forward_f32

    function sg_wavepacket_adjoint_f32(layout, coeffs, data) &
        bind(C, name="sg_wavepacket_adjoint_f32") result(status)
      import :: c_int32_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_float), intent(in) :: coeffs(*)
      real(c_float), intent(inout) :: data(*)
      integer(c_int32_t) :: status
    end function sg_wavepacket_adjoint_f32

    function sg_wavepacket_inverse_f32(layout, coeffs, data, tolerance, max_iterations, &
        iterations, residual) bind(C, name="sg_wavepacket_inverse_f32") result(status)
      import :: c_int32_t, c_size_t, c_double, c_float, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_float), intent(in) :: coeffs(*)
      real(c_float), intent(inout) :: data(*)
      real(c_double), value, intent(in) :: tolerance
      integer(c_size_t), value, intent(in) :: max_iterations
      integer(c_size_t), intent(inout) :: iterations
      real(c_double), intent(inout) :: residual
      integer(c_int32_t) :: status
    end function sg_wavepacket_inverse_f32

    function sg_wavepacket_keep_largest_f32(layout, coeffs, s) &
        bind(C, name="sg_wavepacket_keep_largest_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_float), intent(inout) :: coeffs(*)
      integer(c_size_t), value, intent(in) :: s
      integer(c_int32_t) :: status
    end function sg_wavepacket_keep_largest_f32

    function sg_wavepacket_threshold_f32(layout, coeffs, mode, kind, value) &
        bind(C, name="sg_wavepacket_threshold_f32") result(status)
      import :: c_int32_t, c_double, c_float, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_float), intent(inout) :: coeffs(*)
      integer(c_int32_t), value, intent(in) :: mode
      integer(c_int32_t), value, intent(in) :: kind
      real(c_double), value, intent(in) :: value
      integer(c_int32_t) :: status
    end function sg_wavepacket_threshold_f32

    function sg_wavepacket_pocs_f32(layout, data, live, n_traces, options) &
        bind(C, name="sg_wavepacket_pocs_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr, sg_wavepacket_pocs_options
      type(c_ptr), value, intent(in) :: layout
      real(c_float), intent(inout) :: data(*)
      integer(c_int32_t), intent(in) :: live(*)
      integer(c_size_t), value, intent(in) :: n_traces
      type(sg_wavepacket_pocs_options), intent(in) :: options
      integer(c_int32_t) :: status
    end function sg_wavepacket_pocs_f32

    function sg_wavepacket_threshold_noise_f32(layout, coeffs, mode, k, sigma) &
        bind(C, name="sg_wavepacket_threshold_noise_f32") result(status)
      import :: c_int32_t, c_double, c_float, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_float), intent(inout) :: coeffs(*)
      integer(c_int32_t), value, intent(in) :: mode
      real(c_double), value, intent(in) :: k
      real(c_double), value, intent(in) :: sigma
      integer(c_int32_t) :: status
    end function sg_wavepacket_threshold_noise_f32

    function sg_wavepacket_estimate_noise_f32(layout, coeffs, sigma) &
        bind(C, name="sg_wavepacket_estimate_noise_f32") result(status)
      import :: c_int32_t, c_double, c_float, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_float), intent(in) :: coeffs(*)
      real(c_double), intent(out) :: sigma
      integer(c_int32_t) :: status
    end function sg_wavepacket_estimate_noise_f32

    function sg_wavepacket_sparse_approximation_f32(layout, data, coeffs, s, options, kept, &
        residual) bind(C, name="sg_wavepacket_sparse_approximation_f32") result(status)
      import :: c_int32_t, c_size_t, c_double, c_float, c_ptr, sg_wavepacket_sparse_options
      type(c_ptr), value, intent(in) :: layout
      real(c_float), intent(in) :: data(*)
      real(c_float), intent(inout) :: coeffs(*)      ! interleaved re, im
      integer(c_size_t), value, intent(in) :: s
      type(sg_wavepacket_sparse_options), intent(in) :: options
      integer(c_size_t), intent(inout) :: kept
      real(c_double), intent(inout) :: residual
      integer(c_int32_t) :: status
    end function sg_wavepacket_sparse_approximation_f32

    function sg_wavepacket_forward_f64(layout, data, coeffs) &
        bind(C, name="sg_wavepacket_forward_f64") result(status)
      import :: c_int32_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_double), intent(in) :: data(*)
      real(c_double), intent(inout) :: coeffs(*)      ! interleaved re, im
      integer(c_int32_t) :: status
    end function sg_wavepacket_forward_f64

    function sg_wavepacket_adjoint_f64(layout, coeffs, data) &
        bind(C, name="sg_wavepacket_adjoint_f64") result(status)
      import :: c_int32_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_double), intent(in) :: coeffs(*)
      real(c_double), intent(inout) :: data(*)
      integer(c_int32_t) :: status
    end function sg_wavepacket_adjoint_f64

    function sg_wavepacket_inverse_f64(layout, coeffs, data, tolerance, max_iterations, &
        iterations, residual) bind(C, name="sg_wavepacket_inverse_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_double), intent(in) :: coeffs(*)
      real(c_double), intent(inout) :: data(*)
      real(c_double), value, intent(in) :: tolerance
      integer(c_size_t), value, intent(in) :: max_iterations
      integer(c_size_t), intent(inout) :: iterations
      real(c_double), intent(inout) :: residual
      integer(c_int32_t) :: status
    end function sg_wavepacket_inverse_f64

    function sg_wavepacket_keep_largest_f64(layout, coeffs, s) &
        bind(C, name="sg_wavepacket_keep_largest_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_double), intent(inout) :: coeffs(*)
      integer(c_size_t), value, intent(in) :: s
      integer(c_int32_t) :: status
    end function sg_wavepacket_keep_largest_f64

    function sg_wavepacket_threshold_f64(layout, coeffs, mode, kind, value) &
        bind(C, name="sg_wavepacket_threshold_f64") result(status)
      import :: c_int32_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_double), intent(inout) :: coeffs(*)
      integer(c_int32_t), value, intent(in) :: mode
      integer(c_int32_t), value, intent(in) :: kind
      real(c_double), value, intent(in) :: value
      integer(c_int32_t) :: status
    end function sg_wavepacket_threshold_f64

    function sg_wavepacket_pocs_f64(layout, data, live, n_traces, options) &
        bind(C, name="sg_wavepacket_pocs_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr, sg_wavepacket_pocs_options
      type(c_ptr), value, intent(in) :: layout
      real(c_double), intent(inout) :: data(*)
      integer(c_int32_t), intent(in) :: live(*)
      integer(c_size_t), value, intent(in) :: n_traces
      type(sg_wavepacket_pocs_options), intent(in) :: options
      integer(c_int32_t) :: status
    end function sg_wavepacket_pocs_f64

    function sg_wavepacket_threshold_noise_f64(layout, coeffs, mode, k, sigma) &
        bind(C, name="sg_wavepacket_threshold_noise_f64") result(status)
      import :: c_int32_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_double), intent(inout) :: coeffs(*)
      integer(c_int32_t), value, intent(in) :: mode
      real(c_double), value, intent(in) :: k
      real(c_double), value, intent(in) :: sigma
      integer(c_int32_t) :: status
    end function sg_wavepacket_threshold_noise_f64

    function sg_wavepacket_estimate_noise_f64(layout, coeffs, sigma) &
        bind(C, name="sg_wavepacket_estimate_noise_f64") result(status)
      import :: c_int32_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      real(c_double), intent(in) :: coeffs(*)
      real(c_double), intent(out) :: sigma
      integer(c_int32_t) :: status
    end function sg_wavepacket_estimate_noise_f64

    function sg_wavepacket_sparse_approximation_f64(layout, data, coeffs, s, options, kept, &
        residual) bind(C, name="sg_wavepacket_sparse_approximation_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr, sg_wavepacket_sparse_options
      type(c_ptr), value, intent(in) :: layout
      real(c_double), intent(in) :: data(*)
      real(c_double), intent(inout) :: coeffs(*)      ! interleaved re, im
      integer(c_size_t), value, intent(in) :: s
      type(sg_wavepacket_sparse_options), intent(in) :: options
      integer(c_size_t), intent(inout) :: kept
      real(c_double), intent(inout) :: residual
      integer(c_int32_t) :: status
    end function sg_wavepacket_sparse_approximation_f64

    ! data, coeffs: device addresses (CUdeviceptr, e.g. transfer(c_devloc(x), 0_c_int64_t) in
    ! CUDA Fortran); coeffs interleaved re, im.
    function sg_wavepacket_forward_device_f32(layout, data, coeffs) &
        bind(C, name="sg_wavepacket_forward_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: data
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int32_t) :: status
    end function sg_wavepacket_forward_device_f32

    ! coeffs, data: device addresses (CUdeviceptr, e.g. transfer(c_devloc(x), 0_c_int64_t) in
    ! CUDA Fortran); coeffs interleaved re, im.
    function sg_wavepacket_adjoint_device_f32(layout, coeffs, data) &
        bind(C, name="sg_wavepacket_adjoint_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int64_t), value, intent(in) :: data
      integer(c_int32_t) :: status
    end function sg_wavepacket_adjoint_device_f32

    ! coeffs, data: device addresses (as sg_wavepacket_forward_device_f32); waits.
    function sg_wavepacket_inverse_device_f32(layout, coeffs, data, tolerance, &
        max_iterations, iterations, residual) bind(C, name="sg_wavepacket_inverse_device_f32") &
        result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int64_t), value, intent(in) :: data
      real(c_double), value, intent(in) :: tolerance
      integer(c_size_t), value, intent(in) :: max_iterations
      integer(c_size_t), intent(inout) :: iterations
      real(c_double), intent(inout) :: residual
      integer(c_int32_t) :: status
    end function sg_wavepacket_inverse_device_f32

    ! coeffs: a device address (as sg_wavepacket_forward_device_f32), thresholded in place.
    function sg_wavepacket_threshold_device_f32(layout, coeffs, mode, kind, value) &
        bind(C, name="sg_wavepacket_threshold_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int32_t), value, intent(in) :: mode
      integer(c_int32_t), value, intent(in) :: kind
      real(c_double), value, intent(in) :: value
      integer(c_int32_t) :: status
    end function sg_wavepacket_threshold_device_f32

    ! data, coeffs: device addresses (CUdeviceptr, e.g. transfer(c_devloc(x), 0_c_int64_t) in
    ! CUDA Fortran); coeffs interleaved re, im.
    function sg_wavepacket_forward_device_f64(layout, data, coeffs) &
        bind(C, name="sg_wavepacket_forward_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: data
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int32_t) :: status
    end function sg_wavepacket_forward_device_f64

    ! coeffs, data: device addresses (CUdeviceptr, e.g. transfer(c_devloc(x), 0_c_int64_t) in
    ! CUDA Fortran); coeffs interleaved re, im.
    function sg_wavepacket_adjoint_device_f64(layout, coeffs, data) &
        bind(C, name="sg_wavepacket_adjoint_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int64_t), value, intent(in) :: data
      integer(c_int32_t) :: status
    end function sg_wavepacket_adjoint_device_f64

    ! coeffs, data: device addresses (as sg_wavepacket_forward_device_f64); waits.
    function sg_wavepacket_inverse_device_f64(layout, coeffs, data, tolerance, &
        max_iterations, iterations, residual) bind(C, name="sg_wavepacket_inverse_device_f64") &
        result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int64_t), value, intent(in) :: data
      real(c_double), value, intent(in) :: tolerance
      integer(c_size_t), value, intent(in) :: max_iterations
      integer(c_size_t), intent(inout) :: iterations
      real(c_double), intent(inout) :: residual
      integer(c_int32_t) :: status
    end function sg_wavepacket_inverse_device_f64

    ! coeffs: a device address (as sg_wavepacket_forward_device_f64), thresholded in place.
    function sg_wavepacket_threshold_device_f64(layout, coeffs, mode, kind, value) &
        bind(C, name="sg_wavepacket_threshold_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int32_t), value, intent(in) :: mode
      integer(c_int32_t), value, intent(in) :: kind
      real(c_double), value, intent(in) :: value
      integer(c_int32_t) :: status
    end function sg_wavepacket_threshold_device_f64

    ! Keep the s largest of device coefficients (CUdeviceptr), in place.
    function sg_wavepacket_keep_largest_device_f32(layout, coeffs, s) &
        bind(C, name="sg_wavepacket_keep_largest_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_size_t), value, intent(in) :: s
      integer(c_int32_t) :: status
    end function sg_wavepacket_keep_largest_device_f32

    ! Keep the s largest of device coefficients (CUdeviceptr), in place.
    function sg_wavepacket_keep_largest_device_f64(layout, coeffs, s) &
        bind(C, name="sg_wavepacket_keep_largest_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_size_t), value, intent(in) :: s
      integer(c_int32_t) :: status
    end function sg_wavepacket_keep_largest_device_f64

    ! The white-noise threshold k*sigma*norm_b on device coefficients, in place.
    function sg_wavepacket_threshold_noise_device_f32(layout, coeffs, mode, k, sigma) &
        bind(C, name="sg_wavepacket_threshold_noise_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int32_t), value, intent(in) :: mode
      real(c_double), value, intent(in) :: k
      real(c_double), value, intent(in) :: sigma
      integer(c_int32_t) :: status
    end function sg_wavepacket_threshold_noise_device_f32

    ! The white-noise threshold k*sigma*norm_b on device coefficients, in place.
    function sg_wavepacket_threshold_noise_device_f64(layout, coeffs, mode, k, sigma) &
        bind(C, name="sg_wavepacket_threshold_noise_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int32_t), value, intent(in) :: mode
      real(c_double), value, intent(in) :: k
      real(c_double), value, intent(in) :: sigma
      integer(c_int32_t) :: status
    end function sg_wavepacket_threshold_noise_device_f64

    ! The noise estimate of device coefficients (waits for sigma, a host value).
    function sg_wavepacket_estimate_noise_device_f32(layout, coeffs, sigma) &
        bind(C, name="sg_wavepacket_estimate_noise_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: coeffs
      real(c_double), intent(out) :: sigma
      integer(c_int32_t) :: status
    end function sg_wavepacket_estimate_noise_device_f32

    ! The noise estimate of device coefficients (waits for sigma, a host value).
    function sg_wavepacket_estimate_noise_device_f64(layout, coeffs, sigma) &
        bind(C, name="sg_wavepacket_estimate_noise_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: coeffs
      real(c_double), intent(out) :: sigma
      integer(c_int32_t) :: status
    end function sg_wavepacket_estimate_noise_device_f64

    ! POCS on device data in place (data: a device address; live, options host memory);
    ! waits.
    function sg_wavepacket_pocs_device_f32(layout, data, live, n_traces, options) &
        bind(C, name="sg_wavepacket_pocs_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr, sg_wavepacket_pocs_options
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: data
      integer(c_int32_t), intent(in) :: live(*)
      integer(c_size_t), value, intent(in) :: n_traces
      type(sg_wavepacket_pocs_options), intent(in) :: options
      integer(c_int32_t) :: status
    end function sg_wavepacket_pocs_device_f32

    ! POCS on device data in place (data: a device address; live, options host memory);
    ! waits.
    function sg_wavepacket_pocs_device_f64(layout, data, live, n_traces, options) &
        bind(C, name="sg_wavepacket_pocs_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr, sg_wavepacket_pocs_options
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: data
      integer(c_int32_t), intent(in) :: live(*)
      integer(c_size_t), value, intent(in) :: n_traces
      type(sg_wavepacket_pocs_options), intent(in) :: options
      integer(c_int32_t) :: status
    end function sg_wavepacket_pocs_device_f64

    ! The sparse approximation of device data into device coefficients (device addresses,
    ! coeffs interleaved re, im); waits.
    function sg_wavepacket_sparse_approximation_device_f32(layout, data, coeffs, s, options, &
        kept, residual) bind(C, name="sg_wavepacket_sparse_approximation_device_f32") &
        result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_double, c_ptr, sg_wavepacket_sparse_options
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: data
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_size_t), value, intent(in) :: s
      type(sg_wavepacket_sparse_options), intent(in) :: options
      integer(c_size_t), intent(inout) :: kept
      real(c_double), intent(inout) :: residual
      integer(c_int32_t) :: status
    end function sg_wavepacket_sparse_approximation_device_f32

    ! The sparse approximation of device data into device coefficients (device addresses,
    ! coeffs interleaved re, im); waits.
    function sg_wavepacket_sparse_approximation_device_f64(layout, data, coeffs, s, options, &
        kept, residual) bind(C, name="sg_wavepacket_sparse_approximation_device_f64") &
        result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_double, c_ptr, sg_wavepacket_sparse_options
      type(c_ptr), value, intent(in) :: layout
      integer(c_int64_t), value, intent(in) :: data
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_size_t), value, intent(in) :: s
      type(sg_wavepacket_sparse_options), intent(in) :: options
      integer(c_size_t), intent(inout) :: kept
      real(c_double), intent(inout) :: residual
      integer(c_int32_t) :: status
    end function sg_wavepacket_sparse_approximation_device_f64

    ! A volume larger than one layout, in tiles whose box grids share one common grid.
    function sg_wavepacket_volume_create(ctx, dim, volume_shape, tile_shape, precision, &
        options, out) bind(C, name="sg_wavepacket_volume_create") result(status)
      import :: c_int32_t, c_size_t, c_ptr, sg_wavepacket_layout_options
      type(c_ptr), value, intent(in) :: ctx
      integer(c_int32_t), value, intent(in) :: dim
      integer(c_size_t), intent(in) :: volume_shape(*)
      integer(c_size_t), intent(in) :: tile_shape(*)
      integer(c_int32_t), value, intent(in) :: precision
      type(sg_wavepacket_layout_options), intent(in) :: options
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_create

    ! The same, the tiles dealt out over n_contexts contexts (e.g. one per GPU).
    function sg_wavepacket_volume_create_on_contexts(contexts, n_contexts, dim, volume_shape, &
        tile_shape, precision, options, out) &
        bind(C, name="sg_wavepacket_volume_create_on_contexts") result(status)
      import :: c_int32_t, c_size_t, c_ptr, sg_wavepacket_layout_options
      type(c_ptr), intent(in) :: contexts(*)
      integer(c_size_t), value, intent(in) :: n_contexts
      integer(c_int32_t), value, intent(in) :: dim
      integer(c_size_t), intent(in) :: volume_shape(*)
      integer(c_size_t), intent(in) :: tile_shape(*)
      integer(c_int32_t), value, intent(in) :: precision
      type(sg_wavepacket_layout_options), intent(in) :: options
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_create_on_contexts

    ! The same with each context's device memory capped at max_device_bytes (0: no cap).
    function sg_wavepacket_volume_create_capped(contexts, n_contexts, dim, volume_shape, &
        tile_shape, precision, options, max_device_bytes, out) &
        bind(C, name="sg_wavepacket_volume_create_capped") result(status)
      import :: c_int32_t, c_size_t, c_ptr, sg_wavepacket_layout_options
      type(c_ptr), intent(in) :: contexts(*)
      integer(c_size_t), value, intent(in) :: n_contexts
      integer(c_int32_t), value, intent(in) :: dim
      integer(c_size_t), intent(in) :: volume_shape(*)
      integer(c_size_t), intent(in) :: tile_shape(*)
      integer(c_int32_t), value, intent(in) :: precision
      type(sg_wavepacket_layout_options), intent(in) :: options
      integer(c_size_t), value, intent(in) :: max_device_bytes
      type(c_ptr), intent(inout) :: out
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_create_capped

    subroutine sg_wavepacket_volume_destroy(volume) &
        bind(C, name="sg_wavepacket_volume_destroy")
      import :: c_ptr
      type(c_ptr), value, intent(in) :: volume
    end subroutine sg_wavepacket_volume_destroy

    function sg_wavepacket_volume_workspace_bytes(volume, bytes) &
        bind(C, name="sg_wavepacket_volume_workspace_bytes") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_size_t), intent(out) :: bytes
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_workspace_bytes

    function sg_wavepacket_volume_sizes(volume, n_samples, n_coefficients, tiles, n_boxes) &
        bind(C, name="sg_wavepacket_volume_sizes") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_size_t), intent(out) :: n_samples
      integer(c_size_t), intent(out) :: n_coefficients
      integer(c_size_t), intent(out) :: tiles(3)
      integer(c_size_t), intent(out) :: n_boxes
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_sizes

    function sg_wavepacket_volume_box_info(volume, box_index, level, direction, offset, &
        count) bind(C, name="sg_wavepacket_volume_box_info") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_size_t), value, intent(in) :: box_index
      integer(c_int32_t), intent(out) :: level
      integer(c_int32_t), intent(out) :: direction
      integer(c_size_t), intent(out) :: offset
      integer(c_size_t), intent(out) :: count
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_box_info

    function sg_wavepacket_volume_forward_f32(volume, data, coeffs) &
        bind(C, name="sg_wavepacket_volume_forward_f32") result(status)
      import :: c_int32_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: volume
      real(c_float), intent(in) :: data(*)
      real(c_float), intent(inout) :: coeffs(*)      ! interleaved re, im
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_forward_f32

    function sg_wavepacket_volume_adjoint_f32(volume, coeffs, data) &
        bind(C, name="sg_wavepacket_volume_adjoint_f32") result(status)
      import :: c_int32_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: volume
      real(c_float), intent(in) :: coeffs(*)
      real(c_float), intent(inout) :: data(*)
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_adjoint_f32

    function sg_wavepacket_volume_inverse_f32(volume, coeffs, data, tolerance, &
        max_iterations, iterations, residual) &
        bind(C, name="sg_wavepacket_volume_inverse_f32") result(status)
      import :: c_int32_t, c_size_t, c_double, c_float, c_ptr
      type(c_ptr), value, intent(in) :: volume
      real(c_float), intent(in) :: coeffs(*)
      real(c_float), intent(inout) :: data(*)
      real(c_double), value, intent(in) :: tolerance
      integer(c_size_t), value, intent(in) :: max_iterations
      integer(c_size_t), intent(inout) :: iterations
      real(c_double), intent(inout) :: residual
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_inverse_f32

    function sg_wavepacket_volume_forward_f64(volume, data, coeffs) &
        bind(C, name="sg_wavepacket_volume_forward_f64") result(status)
      import :: c_int32_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: volume
      real(c_double), intent(in) :: data(*)
      real(c_double), intent(inout) :: coeffs(*)      ! interleaved re, im
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_forward_f64

    function sg_wavepacket_volume_adjoint_f64(volume, coeffs, data) &
        bind(C, name="sg_wavepacket_volume_adjoint_f64") result(status)
      import :: c_int32_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: volume
      real(c_double), intent(in) :: coeffs(*)
      real(c_double), intent(inout) :: data(*)
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_adjoint_f64

    function sg_wavepacket_volume_inverse_f64(volume, coeffs, data, tolerance, &
        max_iterations, iterations, residual) &
        bind(C, name="sg_wavepacket_volume_inverse_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: volume
      real(c_double), intent(in) :: coeffs(*)
      real(c_double), intent(inout) :: data(*)
      real(c_double), value, intent(in) :: tolerance
      integer(c_size_t), value, intent(in) :: max_iterations
      integer(c_size_t), intent(inout) :: iterations
      real(c_double), intent(inout) :: residual
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_inverse_f64

    ! One tile at a time, for processes that share a volume's tiles (MPI ranks).
    function sg_wavepacket_volume_tile_info(volume, tile, origin, n_tile_samples, &
        n_tile_coefficients) bind(C, name="sg_wavepacket_volume_tile_info") result(status)
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_size_t), value, intent(in) :: tile
      integer(c_size_t), intent(out) :: origin(3)
      integer(c_size_t), intent(out) :: n_tile_samples
      integer(c_size_t), intent(out) :: n_tile_coefficients
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_tile_info

    function sg_wavepacket_volume_tile_data_f32(volume, tile, data, tile_data) &
        bind(C, name="sg_wavepacket_volume_tile_data_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_size_t), value, intent(in) :: tile
      real(c_float), intent(in) :: data(*)
      real(c_float), intent(inout) :: tile_data(*)
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_tile_data_f32

    function sg_wavepacket_volume_forward_tile_f32(volume, tile, tile_data, tile_coeffs) &
        bind(C, name="sg_wavepacket_volume_forward_tile_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_size_t), value, intent(in) :: tile
      real(c_float), intent(in) :: tile_data(*)
      real(c_float), intent(inout) :: tile_coeffs(*)      ! interleaved re, im
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_forward_tile_f32

    function sg_wavepacket_volume_add_tile_f32(volume, tile, tile_coeffs, coeffs) &
        bind(C, name="sg_wavepacket_volume_add_tile_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_size_t), value, intent(in) :: tile
      real(c_float), intent(in) :: tile_coeffs(*)      ! interleaved re, im
      real(c_float), intent(inout) :: coeffs(*)      ! interleaved re, im
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_add_tile_f32

    function sg_wavepacket_volume_adjoint_tile_f32(volume, tile, coeffs, tile_data) &
        bind(C, name="sg_wavepacket_volume_adjoint_tile_f32") result(status)
      import :: c_int32_t, c_size_t, c_float, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_size_t), value, intent(in) :: tile
      real(c_float), intent(in) :: coeffs(*)      ! interleaved re, im
      real(c_float), intent(inout) :: tile_data(*)
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_adjoint_tile_f32

    function sg_wavepacket_volume_tile_data_f64(volume, tile, data, tile_data) &
        bind(C, name="sg_wavepacket_volume_tile_data_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_size_t), value, intent(in) :: tile
      real(c_double), intent(in) :: data(*)
      real(c_double), intent(inout) :: tile_data(*)
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_tile_data_f64

    function sg_wavepacket_volume_forward_tile_f64(volume, tile, tile_data, tile_coeffs) &
        bind(C, name="sg_wavepacket_volume_forward_tile_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_size_t), value, intent(in) :: tile
      real(c_double), intent(in) :: tile_data(*)
      real(c_double), intent(inout) :: tile_coeffs(*)      ! interleaved re, im
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_forward_tile_f64

    function sg_wavepacket_volume_add_tile_f64(volume, tile, tile_coeffs, coeffs) &
        bind(C, name="sg_wavepacket_volume_add_tile_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_size_t), value, intent(in) :: tile
      real(c_double), intent(in) :: tile_coeffs(*)      ! interleaved re, im
      real(c_double), intent(inout) :: coeffs(*)      ! interleaved re, im
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_add_tile_f64

    function sg_wavepacket_volume_adjoint_tile_f64(volume, tile, coeffs, tile_data) &
        bind(C, name="sg_wavepacket_volume_adjoint_tile_f64") result(status)
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_size_t), value, intent(in) :: tile
      real(c_double), intent(in) :: coeffs(*)      ! interleaved re, im
      real(c_double), intent(inout) :: tile_data(*)
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_adjoint_tile_f64

    ! data, coeffs: device addresses (as sg_wavepacket_forward_device_f32); waits.
    function sg_wavepacket_volume_forward_device_f32(volume, data, coeffs) &
        bind(C, name="sg_wavepacket_volume_forward_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_int64_t), value, intent(in) :: data
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_forward_device_f32

    ! coeffs, data: device addresses (as sg_wavepacket_forward_device_f32); waits.
    function sg_wavepacket_volume_adjoint_device_f32(volume, coeffs, data) &
        bind(C, name="sg_wavepacket_volume_adjoint_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int64_t), value, intent(in) :: data
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_adjoint_device_f32

    ! coeffs, data: device addresses (as sg_wavepacket_forward_device_f32); waits.
    function sg_wavepacket_volume_inverse_device_f32(volume, coeffs, data, tolerance, &
        max_iterations, iterations, residual) &
        bind(C, name="sg_wavepacket_volume_inverse_device_f32") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int64_t), value, intent(in) :: data
      real(c_double), value, intent(in) :: tolerance
      integer(c_size_t), value, intent(in) :: max_iterations
      integer(c_size_t), intent(inout) :: iterations
      real(c_double), intent(inout) :: residual
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_inverse_device_f32

    ! data, coeffs: device addresses (as sg_wavepacket_forward_device_f32); waits.
    function sg_wavepacket_volume_forward_device_f64(volume, data, coeffs) &
        bind(C, name="sg_wavepacket_volume_forward_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_int64_t), value, intent(in) :: data
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_forward_device_f64

    ! coeffs, data: device addresses (as sg_wavepacket_forward_device_f32); waits.
    function sg_wavepacket_volume_adjoint_device_f64(volume, coeffs, data) &
        bind(C, name="sg_wavepacket_volume_adjoint_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int64_t), value, intent(in) :: data
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_adjoint_device_f64

    ! coeffs, data: device addresses (as sg_wavepacket_forward_device_f32); waits.
    function sg_wavepacket_volume_inverse_device_f64(volume, coeffs, data, tolerance, &
        max_iterations, iterations, residual) &
        bind(C, name="sg_wavepacket_volume_inverse_device_f64") result(status)
      import :: c_int32_t, c_int64_t, c_size_t, c_double, c_ptr
      type(c_ptr), value, intent(in) :: volume
      integer(c_int64_t), value, intent(in) :: coeffs
      integer(c_int64_t), value, intent(in) :: data
      real(c_double), value, intent(in) :: tolerance
      integer(c_size_t), value, intent(in) :: max_iterations
      integer(c_size_t), intent(inout) :: iterations
      real(c_double), intent(inout) :: residual
      integer(c_int32_t) :: status
    end function sg_wavepacket_volume_inverse_device_f64
  end interface

contains

  ! The message of the last failed sg_* call on this thread ("" after a success), as a
  ! Fortran string of exactly its length. Leaves that message unchanged.
  function sg_last_error() result(message)
    character(len=:), allocatable :: message
    character(kind=c_char), allocatable :: buf(:)
    character(kind=c_char) :: none(1)
    integer(c_size_t) :: needed, capacity
    integer(c_int32_t) :: status
    integer :: i

    ! Size query (len = 0), then the copy; neither changes the message.
    needed = 0
    status = sg_last_error_copy(none, 0_c_size_t, needed)
    capacity = max(needed, 1_c_size_t)
    allocate(buf(capacity))
    status = sg_last_error_copy(buf, capacity, needed)
    if (status /= SG_OK) then
      message = ""
      return
    end if
    i = 0
    do while (i < size(buf))
      if (buf(i + 1) == c_null_char) exit
      i = i + 1
    end do
    allocate(character(len=i) :: message)
    do i = 1, len(message)
      message(i:i) = buf(i)
    end do
  end function sg_last_error

  ! The description of a context (backend; device and libraries, or why the CPU was
  ! chosen), lines separated by new_line('a'). On failure, status (if present) receives
  ! the status and the result is "".
  function sg_context_description(ctx, status) result(text)
    type(c_ptr), intent(in) :: ctx
    integer(c_int32_t), intent(out), optional :: status
    character(len=:), allocatable :: text
    character(kind=c_char), allocatable :: buf(:)
    character(kind=c_char) :: none(1)
    integer(c_size_t) :: needed, capacity
    integer(c_int32_t) :: st
    integer :: i, n

    needed = 0
    st = sg_context_describe(ctx, none, 0_c_size_t, needed)
    if (st == SG_OK .or. st == SG_ERR_BUFFER_TOO_SMALL) then
      capacity = max(needed, 1_c_size_t)
      allocate(buf(capacity))
      st = sg_context_describe(ctx, buf, capacity, needed)
    end if
    if (present(status)) status = st
    if (st /= SG_OK) then
      text = ""
      return
    end if
    n = 0
    do while (n < size(buf))
      if (buf(n + 1) == c_null_char) exit
      n = n + 1
    end do
    allocate(character(len=n) :: text)
    do i = 1, n
      text(i:i) = buf(i)
    end do
  end function sg_context_description

  ! The name of a status code ("SG_OK", "SG_ERR_NULL_POINTER", ...).
  function sg_status_name(status) result(name)
    integer(c_int32_t), intent(in) :: status
    character(len=:), allocatable :: name
    name = c_ptr_to_string(sg_status_string(status))
  end function sg_status_name

  ! The library's version, e.g. "0.1.0".
  function sg_version_string() result(version)
    character(len=:), allocatable :: version
    version = c_ptr_to_string(sg_version())
  end function sg_version_string

  ! A one-line account of a failed call: "<what>: <status name>: <message>".
  function sg_error_summary(status, what) result(line)
    integer(c_int32_t), intent(in) :: status
    character(len=*), intent(in) :: what
    character(len=:), allocatable :: line
    line = what // ": " // sg_status_name(status) // ": " // sg_last_error()
  end function sg_error_summary

  ! Copies a NUL-terminated C string (static, from the library) into a Fortran string.
  function c_ptr_to_string(p) result(text)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i

    if (.not. c_associated(p)) then
      text = ""
      return
    end if
    ! The bound only lets the scan below run; it stops at the first NUL.
    call c_f_pointer(p, chars, [huge(0)])
    n = 0
    do while (chars(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate(character(len=n) :: text)
    do i = 1, n
      text(i:i) = chars(i)
    end do
  end function c_ptr_to_string

end module seisgpu

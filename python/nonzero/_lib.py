"""_lib.py: find and load libnonzero.so.0 and declare the C prototypes of include/nonzero.h
(declared in its parts include/nonzero/*.h)."""
import ctypes
import ctypes.util
import os

SONAME = "libnonzero.so.0"

c_void_p = ctypes.c_void_p
c_int = ctypes.c_int
c_int64 = ctypes.c_int64
c_double = ctypes.c_double
c_size_t = ctypes.c_size_t
c_char_p = ctypes.c_char_p
P = ctypes.POINTER

# enum values and flags (nonzero.h, declared in its parts nonzero/*.h)
F32, F64 = 1, 2
INDEX_AUTO, I32, I64 = 0, 4, 8
HOST, DEVICE = 0, 1
BACKEND_CPU, BACKEND_CUDA = 0, 1
OP_N, OP_T = 0, 1
COL_MAJOR, ROW_MAJOR = 0, 1
PLAN_DETERMINISTIC, PLAN_TUNE, PLAN_MIXED = 0x1, 0x2, 0x4
PLAN_CACHE_HINTS, PLAN_LIGHT_PER_ROW = 0x8, 0x10
PLAN_COLUMN_PANELS, PLAN_REORDER, PLAN_COMPRESS_INDICES = 0x20, 0x40, 0x80
PLAN_REUSE = 0x100
PRECOND_NONE, PRECOND_JACOBI, PRECOND_USER = 0, 1, 2
PRECOND_L1_JACOBI, PRECOND_ILU0, PRECOND_IC0 = 3, 4, 5
PRECOND_BLOCK_JACOBI, PRECOND_CHEBYSHEV, PRECOND_AMG = 6, 7, 8
# nz_amg_smoother_t (AUTO: Chebyshev for a symmetric A, l1-Jacobi otherwise)
AMG_SMOOTHER_AUTO, AMG_SMOOTHER_CHEBYSHEV, AMG_SMOOTHER_L1_JACOBI = 0, 1, 2
AMG_CYCLE_V, AMG_CYCLE_W = 0, 1  # nz_amg_cycle_t
AMG_MAX_LEVELS = 24  # NZ_AMG_MAX_LEVELS: the bound of max_levels, the length of AmgInfo's arrays
LOWER, UPPER = 0, 1  # nz_fill_mode_t
NON_UNIT, UNIT = 0, 1  # nz_diag_type_t
METHOD_CG, METHOD_BICGSTAB, METHOD_GMRES, METHOD_FGMRES, METHOD_MINRES = 0, 1, 2, 3, 4
# nz_solve_reason_t, by value: the names of nz_solve_result_t.reason
SOLVE_REASONS = ("not_run", "converged", "max_iterations", "stagnated", "breakdown_rho",
                 "breakdown_omega", "breakdown_nan", "breakdown_singular", "precond_failed",
                 "breakdown_indefinite", "monitor_stopped")
SOLVE_BREAKDOWN_INDEFINITE, SOLVE_MONITOR_STOPPED = 9, 10
SPGEMM_AUTO, SPGEMM_CPU, SPGEMM_ESC, SPGEMM_HYSPMM, SPGEMM_HASH = 0, 1, 2, 3, 4  # nz_spgemm_alg_t
FORMAT_CSR, FORMAT_COUNT = 0, 8
SUCCESS, MAX_ITERATIONS, STAGNATED = 0, 1, 2
ERR_INVALID_ARGUMENT = -2
ERR_NOT_SORTED = -21
ERR_DEVICE_OUT_OF_MEMORY = -61
ERR_BREAKDOWN = -120


def _candidates():
    """Every path tried, in order: (path, description)."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("NONZERO_LIBRARY")
    if env:
        return [(env, "NONZERO_LIBRARY")]
    paths = [(os.path.join(here, "_lib", SONAME), "next to the package")]
    try:
        from ._config import LIBDIR_RELATIVE  # written by `cmake --install`
        paths.append((os.path.normpath(os.path.join(here, LIBDIR_RELATIVE, SONAME)),
                      "the installed prefix (_config.py)"))
    except ImportError:
        pass
    # P/lib/python3/dist-packages/nonzero -> P/lib
    paths.append((os.path.normpath(os.path.join(here, "..", "..", "..", SONAME)), "the prefix lib dir"))
    found = ctypes.util.find_library("nonzero")
    if found:
        paths.append((found, "ctypes.util.find_library"))
    paths.append((SONAME, "the dynamic loader's search path"))
    return paths


def _load():
    tried = []
    for path, why in _candidates():
        if "\0" in path:
            tried.append("%r (%s): the path holds a NUL byte" % (path, why))
            continue
        if os.sep in path and not os.path.exists(path):
            tried.append("%s (%s): no such file" % (path, why))
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s): %s" % (path, why, e))
    raise ImportError("nonzero: cannot load the shared library libnonzero.so.0; tried:\n  " +
                      "\n  ".join(tried) +
                      "\nSet NONZERO_LIBRARY to the path of libnonzero.so.0, or install the "
                      "library (cmake --install build --prefix P).")


lib, path = _load()
_origin = dict(_candidates()).get(path, "")


class AllocStats(ctypes.Structure):
    _fields_ = [("live_blocks", c_int64), ("live_bytes", c_int64), ("total_allocs", c_int64),
                ("failed_allocs", c_int64), ("peak_device_bytes", c_int64)]


class MatrixInfo(ctypes.Structure):
    _fields_ = [("rows", c_int64), ("cols", c_int64), ("nnz", c_int64), ("stored", c_int64),
                ("format", c_int), ("value_type", c_int), ("offset_type", c_int),
                ("location", c_int), ("bytes", c_size_t), ("transfer_seconds", c_double),
                ("sell_chunk", c_int), ("sell_sigma", c_int), ("bsr_block", c_int),
                ("ell_width", c_int64), ("num_diagonals", c_int64)]


class MatrixStats(ctypes.Structure):
    _fields_ = [("rows", c_int64), ("cols", c_int64), ("nnz", c_int64), ("row_min", c_int64),
                ("row_max", c_int64), ("row_mean", c_double), ("row_std", c_double),
                ("empty_rows", c_int64), ("lower_bandwidth", c_int64),
                ("upper_bandwidth", c_int64), ("num_diagonals", c_int64), ("symmetric", c_int),
                ("bytes", c_size_t * FORMAT_COUNT), ("hot_share", c_double)]


class FormatOptions(ctypes.Structure):
    _fields_ = [("sell_chunk", c_int), ("sell_sigma", c_int), ("bsr_block", c_int),
                ("hyb_ell_width", c_int64), ("max_padding_ratio", c_double)]


class SpmvPlanInfo(ctypes.Structure):
    _fields_ = [("format", c_int), ("alg", c_int), ("backend", c_int), ("reproducible", c_int),
                ("vector_width", c_int), ("plan_seconds", c_double),
                ("workspace_bytes", c_size_t), ("flags", ctypes.c_uint), ("layout_parts", c_int),
                ("vector_warps", c_int)]


class SpmmPlanInfo(ctypes.Structure):
    _fields_ = [("format", c_int), ("alg", c_int), ("backend", c_int), ("op", c_int),
                ("k", c_int64), ("layout", c_int), ("reproducible", c_int),
                ("vector_width", c_int), ("plan_seconds", c_double),
                ("workspace_bytes", c_size_t)]


class CgOptions(ctypes.Structure):
    _fields_ = [("rtol", c_double), ("atol", c_double), ("max_iterations", c_int64),
                ("precond", c_int), ("alg", c_int), ("plan_flags", ctypes.c_uint),
                ("record_history", c_int), ("use_graph", c_int), ("check_interval", c_int),
                ("keep_format", c_int)]


class CgResult(ctypes.Structure):
    _fields_ = [("iterations", c_int64), ("residual_norm", c_double),
                ("relative_residual", c_double), ("setup_seconds", c_double),
                ("solve_seconds", c_double), ("seconds_per_iteration", c_double),
                ("spmv_seconds", c_double), ("alg", c_int), ("used_graph", c_int),
                ("history_length", c_int64), ("history", P(c_double)), ("format", c_int)]


# nz_precond_apply_t: z = M^-1 r (status, user, r, z)
PrecondApply = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p)
# nz_solve_monitor_t: once per iteration (status, user, iteration, residual_norm, x); x is the
# current iterate where A lives (host or device pointer), NULL for GMRES / FGMRES
SolveMonitor = ctypes.CFUNCTYPE(c_int, c_void_p, c_int64, c_double, c_void_p)


class SolveOptions(ctypes.Structure):
    _fields_ = [("method", c_int), ("rtol", c_double), ("atol", c_double),
                ("max_iterations", c_int64), ("restart", c_int), ("precond", c_int),
                ("precond_apply", PrecondApply), ("precond_user", c_void_p), ("alg", c_int),
                ("plan_flags", ctypes.c_uint), ("record_history", c_int),
                ("preconditioner", c_void_p), ("block_size", c_int), ("cheb_degree", c_int),
                ("monitor", SolveMonitor), ("monitor_user", c_void_p),
                ("precond_sweeps", c_int)]


class AmgOptions(ctypes.Structure):
    """nz_amg_options_t (112 bytes on LP64)."""
    _fields_ = [("threshold", c_double), ("omega", c_double), ("max_levels", c_int),
                ("max_coarse", c_int64), ("smoother", c_int), ("smoother_degree", c_int),
                ("cheb_ratio", c_double), ("cycle", c_int), ("block_size", c_int),
                ("nullspace_dim", c_int), ("near_nullspace", P(c_double)),
                ("plan_flags", ctypes.c_uint), ("reserved", c_int64 * 4)]


class PrecondOptions(ctypes.Structure):
    """nz_precond_options_t (80 bytes on LP64; `amg` appended after `reserved`)."""
    _fields_ = [("block_size", c_int), ("degree", c_int), ("lambda_min", c_double),
                ("lambda_max", c_double), ("apply", PrecondApply), ("user", c_void_p),
                ("sweeps", c_int), ("reserved0", ctypes.c_int32), ("reserved", c_int64 * 3),
                ("amg", P(AmgOptions))]


class AmgInfo(ctypes.Structure):
    """nz_amg_info_t (1072 bytes on LP64): the hierarchy of an AMG preconditioner."""
    _fields_ = [("levels", c_int), ("rows", c_int64 * AMG_MAX_LEVELS),
                ("nnz", c_int64 * AMG_MAX_LEVELS), ("block_size", c_int * AMG_MAX_LEVELS),
                ("lambda_max", c_double * AMG_MAX_LEVELS), ("mis_rounds", c_int * AMG_MAX_LEVELS),
                ("unaggregated", c_int64 * AMG_MAX_LEVELS), ("operator_complexity", c_double),
                ("grid_complexity", c_double), ("smoother", c_int), ("coarse_direct", c_int),
                ("coarse_shift", c_double),
                ("strength_seconds", c_double), ("aggregate_seconds", c_double),
                ("tentative_seconds", c_double), ("smooth_seconds", c_double),
                ("rap_seconds", c_double), ("coarse_seconds", c_double),
                ("transfer_seconds", c_double), ("setup_seconds", c_double),
                ("update_seconds", c_double)]


class PrecondInfo(ctypes.Structure):
    _fields_ = [("kind", c_int), ("rows", c_int64), ("value_type", c_int), ("location", c_int),
                ("setup_seconds", c_double), ("shift", c_double), ("attempts", c_int),
                ("block_size", c_int), ("degree", c_int), ("lambda_min", c_double),
                ("lambda_max", c_double), ("lambda_estimate", c_double), ("sweeps", c_int)]


class SolveResult(ctypes.Structure):
    _fields_ = [("status", c_int), ("reason", c_int), ("method", c_int),
                ("iterations", c_int64), ("restarts", c_int64), ("residual_norm", c_double),
                ("relative_residual", c_double), ("setup_seconds", c_double),
                ("solve_seconds", c_double), ("history_length", c_int64),
                ("history", P(c_double)), ("precond_shift", c_double),
                ("precond_attempts", c_int)]


class SpgemmOptions(ctypes.Structure):
    _fields_ = [("alg", c_int), ("gpu_memory_limit", c_size_t), ("threads", c_int)]


class SpgemmInfo(ctypes.Structure):
    _fields_ = [("alg", c_int), ("products", c_int64), ("panels", c_int64), ("seconds", c_double),
                ("symbolic_seconds", c_double), ("numeric_seconds", c_double),
                ("transfer_seconds", c_double), ("stage_seconds_sum", c_double),
                ("peak_device_bytes", c_int64)]


def _proto(name, restype, *argtypes, optional=False):
    try:
        fn = getattr(lib, name)
    except AttributeError:
        if optional:
            raise
        # a library that loads but is not (this version of) libnonzero, e.g. NONZERO_LIBRARY
        # naming another one: say which file and which symbol, not a bare AttributeError
        origin = " (from %s)" % _origin if _origin else ""
        raise ImportError("nonzero: %s%s is not a usable libnonzero.so.0: it lacks the symbol %s "
                          "(another library, or an older libnonzero); set NONZERO_LIBRARY to the "
                          "path of libnonzero.so.0" % (path, origin, name)) from None
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


S = c_int  # nz_status_t
pp = P(c_void_p)
_proto("nz_version", c_char_p)
_proto("nz_status_string", c_char_p, c_int)
_proto("nz_alg_name", c_char_p, c_int)
_proto("nz_alg_from_name", S, P(c_int), c_char_p)
_proto("nz_format_name", c_char_p, c_int)
_proto("nz_format_from_name", S, P(c_int), c_char_p)
_proto("nz_spgemm_alg_name", c_char_p, c_int)
_proto("nz_spgemm_alg_from_name", S, P(c_int), c_char_p)
_proto("nz_context_create", S, pp)
_proto("nz_context_destroy", S, pp)
_proto("nz_context_set_device", S, c_void_p, c_int, c_void_p)
_proto("nz_device_count", c_int)
_proto("nz_context_device_name", c_char_p, c_void_p)
_proto("nz_context_set_threads", S, c_void_p, c_int)
_proto("nz_context_get_threads", S, c_void_p, P(c_int))
_proto("nz_context_last_error", c_char_p, c_void_p)
_proto("nz_context_alloc_stats", S, c_void_p, P(AllocStats))
_proto("nz_context_synchronize", S, c_void_p)
_proto("nz_free", S, c_void_p, c_void_p)
_proto("nz_device_free", S, c_void_p, c_void_p)
_proto("nz_matrix_create_csr", S, c_void_p, pp, c_int64, c_int64, c_int, c_void_p, c_void_p,
       c_int, c_void_p)
_proto("nz_matrix_wrap_csr", S, c_void_p, pp, c_int64, c_int64, c_int, c_void_p, c_void_p, c_int,
       c_void_p)
_proto("nz_matrix_wrap_csr_device", S, c_void_p, pp, c_int64, c_int64, c_int64, c_int, c_void_p,
       c_void_p, c_int, c_void_p, c_int)
_proto("nz_matrix_destroy", S, pp)
_proto("nz_matrix_convert", S, c_void_p, pp, c_void_p, c_int, P(FormatOptions))
_proto("nz_matrix_transpose", S, c_void_p, pp, c_void_p)
_proto("nz_matrix_to_device", S, c_void_p, pp, c_void_p, c_int)
_proto("nz_matrix_to_host", S, c_void_p, pp, c_void_p)
_proto("nz_matrix_info", S, c_void_p, P(MatrixInfo), c_void_p)
_proto("nz_matrix_csr_arrays", S, c_void_p, pp, pp, pp, c_void_p)
_proto("nz_matrix_stats", S, c_void_p, P(MatrixStats), c_void_p)
_proto("nz_mm_read", S, c_void_p, pp, c_char_p, c_int)
_proto("nz_mm_write", S, c_void_p, c_char_p, c_void_p)
_proto("nz_mm_read_dense", S, c_void_p, pp, P(c_int64), P(c_int64), c_char_p, c_int)
_proto("nz_mm_write_dense", S, c_void_p, c_char_p, c_int, c_int64, c_int64, c_void_p)
_proto("nz_binary_write", S, c_void_p, c_char_p, c_void_p)
_proto("nz_matrix_convert_values", S, c_void_p, pp, c_void_p, c_int)
_proto("nz_matrix_read", S, c_void_p, pp, c_char_p, c_int)
_proto("nz_gen_laplace2d", S, c_void_p, pp, c_int64, c_int64, c_int)
_proto("nz_gen_laplace3d", S, c_void_p, pp, c_int64, c_int64, c_int64, c_int)
_proto("nz_gen_convdiff2d", S, c_void_p, pp, c_int64, c_int64, c_double, c_int)
_proto("nz_gen_convdiff3d", S, c_void_p, pp, c_int64, c_int64, c_int64, c_double, c_int)
_proto("nz_gen_fe3d", S, c_void_p, pp, pp, pp, c_int64, c_int)
_proto("nz_gen_rmat", S, c_void_p, pp, c_int, c_int, c_double, c_double, c_double,
       ctypes.c_uint64, c_int)
_proto("nz_gen_random", S, c_void_p, pp, c_int64, c_int64, c_double, ctypes.c_uint64, c_int)
_proto("nz_gen_rail", S, c_void_p, pp, c_int64, c_int64, c_int64, ctypes.c_uint64, c_int)
_proto("nz_gen_mixed", S, c_void_p, pp, c_int64, c_int64, c_int64, c_int64, ctypes.c_uint64, c_int)
_proto("nz_gen_banded", S, c_void_p, pp, c_int64, c_int64, c_int64, c_int)
_proto("nz_spmv_plan_create", S, c_void_p, pp, c_void_p, c_int, c_int, ctypes.c_uint)
_proto("nz_spmv_execute", S, c_void_p, c_double, c_void_p, c_double, c_void_p)
_proto("nz_spmv_plan_destroy", S, pp)
_proto("nz_spmv_plan_info", S, c_void_p, P(SpmvPlanInfo))
_proto("nz_spmv_plan_choose", S, P(c_int), P(c_int), c_char_p, c_size_t, P(MatrixStats), c_int,
       c_int, ctypes.c_uint)
_proto("nz_spmm_plan_create", S, c_void_p, pp, c_void_p, c_int, c_int64, c_int, c_int,
       ctypes.c_uint)
_proto("nz_spmm_execute", S, c_void_p, c_double, c_void_p, c_int64, c_double, c_void_p, c_int64)
_proto("nz_spmm_plan_destroy", S, pp)
_proto("nz_spmm_plan_info", S, c_void_p, P(SpmmPlanInfo))
_proto("nz_cg_solve", S, c_void_p, c_void_p, c_void_p, c_void_p, P(CgOptions), P(CgResult))
_proto("nz_solve", S, c_void_p, c_void_p, c_void_p, c_void_p, P(SolveOptions), P(SolveResult))
_proto("nz_spgemm", S, c_void_p, pp, c_void_p, c_void_p, P(SpgemmOptions), P(SpgemmInfo))
_proto("nz_spgemm_plan_create", S, c_void_p, pp, pp, c_void_p, c_void_p, P(SpgemmOptions),
       P(SpgemmInfo))
_proto("nz_spgemm_plan_execute", S, c_void_p, c_void_p, c_void_p, c_void_p)
_proto("nz_spgemm_plan_destroy", S, pp)
_proto("nz_spgeam", S, c_void_p, pp, c_double, c_void_p, c_double, c_void_p)
_proto("nz_spgeam_plan_create", S, c_void_p, pp, pp, c_double, c_void_p, c_double, c_void_p)
_proto("nz_spgeam_plan_execute", S, c_void_p, c_double, c_void_p, c_double, c_void_p, c_void_p)
_proto("nz_spgeam_plan_destroy", S, pp)
_proto("nz_rap_plan_create", S, c_void_p, pp, pp, c_void_p, c_void_p, P(SpgemmOptions),
       P(SpgemmInfo))
_proto("nz_rap_plan_execute", S, c_void_p, c_void_p, c_void_p, c_void_p)
_proto("nz_rap_plan_destroy", S, pp)
_proto("nz_precond_create", S, c_void_p, pp, c_void_p, c_int, P(PrecondOptions))
_proto("nz_precond_apply", S, c_void_p, c_void_p, c_void_p)
_proto("nz_precond_info", S, c_void_p, P(PrecondInfo))
_proto("nz_precond_update", S, c_void_p, c_void_p)
_proto("nz_amg_info", S, c_void_p, P(AmgInfo))
_proto("nz_precond_destroy", S, pp)
_proto("nz_precond_name", c_char_p, c_int)
_proto("nz_spsv", S, c_void_p, c_void_p, c_int, c_int, c_int, c_double, c_void_p, c_void_p)
_proto("nz_spsv_plan_create", S, c_void_p, pp, c_void_p, c_int, c_int, c_int, ctypes.c_uint)
_proto("nz_spsv_execute", S, c_void_p, c_double, c_void_p, c_void_p)
_proto("nz_spsv_plan_destroy", S, pp)
try:  # added with the Python binding; absent from older libraries
    _proto("nz_matrix_csr_device_arrays", S, c_void_p, pp, P(c_int), pp, pp, c_void_p,
           optional=True)
    HAVE_DEVICE_ARRAYS = True
except AttributeError:
    HAVE_DEVICE_ARRAYS = False

"""_context.py: nz_context_t handles, cached per (device, thread, stream), and status checks."""
import ctypes
import operator
import sys
import threading

from . import _lib
from ._errors import error_class

L = _lib.lib


def status_string(status):
    return L.nz_status_string(status).decode()


def format_error(what, status, msg):
    """'what: status string: message', the function named once: the library's messages often
    start with the function's own name already."""
    msg = msg or ""
    if msg.startswith(what + ":"):
        msg = msg[len(what) + 1:].lstrip()
    return "%s: %s%s" % (what, status_string(status), ": " + msg if msg else "")


# The CPU threads every context uses (set_num_threads): the setting (0: the library's default,
# OpenMP's, clamped to the online CPUs) and a generation, so a cached context of any Python thread
# takes a new setting the next time it is looked up.
_threads_lock = threading.Lock()
_threads_setting = 0
_threads_generation = 0


class Context:
    """One nz_context_t: the library's state for a host thread or a device stream.

    Matrices, plans and preconditioners keep a reference to the context they were made in, so
    it is destroyed last. Most programs never make one: the package keeps a CPU context per
    Python thread (``host_context``) and one per device and CuPy stream (``device_context``).

    Parameters
    ----------
    device : int, optional
        Bind the context to this CUDA device (None: a CPU context).
    stream : int, optional
        The cudaStream_t (as an integer) the context's device work is queued on (None: its
        own).

    Examples
    --------
    >>> import nonzero
    >>> ctx = nonzero.Context()
    >>> ctx.alloc_stats()["live_blocks"] >= 0
    True
    """

    def __init__(self, device=None, stream=None):
        self._handle = ctypes.c_void_p()
        self.device = device
        self.stream = stream
        self._threads_generation = 0
        st = L.nz_context_create(ctypes.byref(self._handle))
        if st < 0:
            raise error_class(st)("nz_context_create: " + status_string(st), st)
        if device is not None:
            st = L.nz_context_set_device(self._handle, device, stream)
            if st < 0:
                msg = self.last_error()
                L.nz_context_destroy(ctypes.byref(self._handle))
                raise error_class(st)(format_error("nz_context_set_device", st, msg), st)

    @property
    def handle(self):
        """The nz_context_t, brought to the current set_num_threads setting first (every call
        into the library goes through here, so a new setting reaches contexts that matrices,
        plans and preconditioners hold, in any Python thread)."""
        if self._threads_generation != _threads_generation:
            self._apply_threads()
        return self._handle

    def _apply_threads(self):
        """Bring this context to the current set_num_threads setting (a no-op when it has it)."""
        if self._threads_generation != _threads_generation:
            setting, generation = _threads_setting, _threads_generation
            self.check(L.nz_context_set_threads(self._handle, setting), "nz_context_set_threads")
            self._threads_generation = generation
        return self

    def last_error(self):
        """The message of the context's last failed call ('' when none).

        Returns
        -------
        str
        """
        if not self._handle:
            return ""
        return (L.nz_context_last_error(self._handle) or b"").decode(errors="replace")

    def check(self, status, what):
        """Raise the NonzeroError subclass of status (< 0), with the library's message.

        Parameters
        ----------
        status : int
            An nz_status_t.
        what : str
            The call's name, the start of the message.

        Returns
        -------
        int
            status, when it is not an error.

        Raises
        ------
        NonzeroError
            The subclass of the status (InvalidArgumentError, DeviceError, ...).
        """
        if status < 0:
            raise error_class(status)(format_error(what, status, self.last_error()), status)
        return status

    def alloc_stats(self):
        """The context's allocation counters (nz_context_alloc_stats).

        Returns
        -------
        dict
            Live blocks and bytes, totals and failures, host and device.
        """
        s = _lib.AllocStats()
        self.check(L.nz_context_alloc_stats(self.handle, ctypes.byref(s)), "nz_context_alloc_stats")
        return {k: getattr(s, k) for k, _ in s._fields_}

    def synchronize(self):
        """Wait until the context's queued device work has finished (nothing on the CPU)."""
        self.check(L.nz_context_synchronize(self.handle), "nz_context_synchronize")

    def device_name(self):
        """The bound device's name ('' or the CPU's description otherwise).

        Returns
        -------
        str
        """
        return L.nz_context_device_name(self.handle).decode()

    _destroy = L.nz_context_destroy  # bound here: module globals may be gone at exit
    _byref = ctypes.byref
    # At interpreter exit finalizers run in no fixed order: a context destroyed before a matrix
    # or plan made with it would leave them a dangling context, so exit leaves all to the OS.
    _finalizing = sys.is_finalizing

    def __del__(self):
        h = getattr(self, "_handle", None)
        if h and not self._finalizing():
            self._destroy(self._byref(h))


_tls = threading.local()


def _cache():
    c = getattr(_tls, "contexts", None)
    if c is None:
        c = _tls.contexts = {}
    return c


def host_context():
    """The calling thread's CPU context."""
    c = _cache()
    ctx = c.get(None)
    if ctx is None:
        ctx = c[None] = Context()
    return ctx


def cupy_stream_ptr():
    """CuPy's current stream as a cudaStream_t for nz_context_set_device. CuPy's default (legacy
    NULL) stream becomes cudaStreamLegacy (0x1): NULL would make the context create a
    non-blocking stream of its own that does not order with the caller's work."""
    import cupy
    ptr = cupy.cuda.get_current_stream().ptr
    return ptr if ptr else 1


def device_context(device=None, stream=None):
    """The calling thread's context for (device, stream); defaults: CuPy's current device and
    stream when CuPy is importable, else device 0 with cudaStreamLegacy."""
    if device is None or stream is None:
        try:
            import cupy
            if device is None:
                device = cupy.cuda.runtime.getDevice()
            if stream is None:
                with cupy.cuda.Device(device):
                    stream = cupy_stream_ptr()
        except ImportError:
            device = 0 if device is None else device
            stream = 1 if stream is None else stream
    key = (int(device), int(stream))
    c = _cache()
    ctx = c.get(key)
    if ctx is None:
        ctx = c[key] = Context(int(device), ctypes.c_void_p(int(stream)))
    return ctx


def device_count():
    """The number of CUDA devices Nonzero can use.

    Returns
    -------
    int
        0 when the library was built without CUDA, or no device (or driver) is present.

    Examples
    --------
    >>> import nonzero
    >>> nonzero.device_count() >= 0
    True
    """
    return L.nz_device_count()


def set_num_threads(n):
    """Set the number of CPU threads Nonzero's host kernels use, for every context of the
    process (existing ones take it at their next use).

    Parameters
    ----------
    n : int
        Threads, 1 .. 1024; 0 or None restores the default (OpenMP's, clamped to the online
        CPUs). A count above the online CPUs is accepted and clamped to them
        (``nz_context_set_threads``).

    Raises
    ------
    TypeError
        `n` is not an integer.
    InvalidArgumentError
        `n` is negative or above 1024 (the setting is then unchanged).

    Examples
    --------
    >>> import nonzero
    >>> nonzero.set_num_threads(1)
    >>> nonzero.get_num_threads()
    1
    >>> nonzero.set_num_threads(None)
    """
    global _threads_setting, _threads_generation
    if n is None:
        n = 0
    try:
        if isinstance(n, bool):
            raise TypeError
        n = operator.index(n)  # int and NumPy integers; not floats, strings or bools
    except TypeError:
        raise TypeError("nonzero.set_num_threads: n must be an integer, not %r" % (n,)) from None
    with _threads_lock:
        # checked by the library on a scratch context first, so a refused value changes nothing
        probe = Context()
        probe.check(L.nz_context_set_threads(probe._handle, n), "nonzero.set_num_threads")
        _threads_setting = n
        _threads_generation += 1


def get_num_threads():
    """The number of CPU threads Nonzero's host kernels use now (the setting after clamping to
    the online CPUs, or the clamped OpenMP default; 1 in a build without OpenMP).

    Examples
    --------
    >>> import nonzero
    >>> nonzero.get_num_threads() >= 1
    True
    """
    ctx = host_context()
    out = ctypes.c_int()
    ctx.check(L.nz_context_get_threads(ctx.handle, ctypes.byref(out)), "nz_context_get_threads")
    return out.value


class threads:
    """Context manager: ``with nonzero.threads(n): ...`` runs the block with `n` CPU threads
    (set_num_threads) and restores the previous setting after it, also on an exception. The
    setting is process-wide, as set_num_threads'.

    Examples
    --------
    >>> import nonzero
    >>> with nonzero.threads(1):
    ...     nonzero.get_num_threads()
    1
    """

    def __init__(self, n):
        self.n = n
        self.previous = None

    def __enter__(self):
        self.previous = _threads_setting
        set_num_threads(self.n)
        return self

    def __exit__(self, *exc):
        set_num_threads(self.previous)
        return False

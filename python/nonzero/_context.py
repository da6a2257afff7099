"""_context.py: nz_context_t handles, cached per (device, thread, stream), and status checks."""
import ctypes
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


class Context:
    """One nz_context_t. Objects made from it keep a reference, so it is destroyed last."""

    def __init__(self, device=None, stream=None):
        self.handle = ctypes.c_void_p()
        self.device = device
        self.stream = stream
        st = L.nz_context_create(ctypes.byref(self.handle))
        if st < 0:
            raise error_class(st)("nz_context_create: " + status_string(st), st)
        if device is not None:
            st = L.nz_context_set_device(self.handle, device, stream)
            if st < 0:
                msg = self.last_error()
                L.nz_context_destroy(ctypes.byref(self.handle))
                raise error_class(st)(format_error("nz_context_set_device", st, msg), st)

    def last_error(self):
        if not self.handle:
            return ""
        return (L.nz_context_last_error(self.handle) or b"").decode(errors="replace")

    def check(self, status, what):
        """Raise the NonzeroError subclass of status (< 0), with the library's message."""
        if status < 0:
            raise error_class(status)(format_error(what, status, self.last_error()), status)
        return status

    def alloc_stats(self):
        s = _lib.AllocStats()
        self.check(L.nz_context_alloc_stats(self.handle, ctypes.byref(s)), "nz_context_alloc_stats")
        return {k: getattr(s, k) for k, _ in s._fields_}

    def synchronize(self):
        self.check(L.nz_context_synchronize(self.handle), "nz_context_synchronize")

    def device_name(self):
        return L.nz_context_device_name(self.handle).decode()

    _destroy = L.nz_context_destroy  # bound here: module globals may be gone at exit
    _byref = ctypes.byref
    # At interpreter exit finalizers run in no fixed order: a context destroyed before a matrix
    # or plan made with it would leave them a dangling context, so exit leaves all to the OS.
    _finalizing = sys.is_finalizing

    def __del__(self):
        h = getattr(self, "handle", None)
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
    return L.nz_device_count()

"""Devices and compiled ops (lb_ctx, lb_op), with raw device pointers.

Torch-free: pointers are integers (cudaMalloc, torch's data_ptr()) and a
stream is an integer handle (0: the default stream).  One Context per device
and one Op per (recipe, N, K, device) are cached for the life of the process:
creating an op generates and compiles (or hits the cache), and contexts hold
the device's primary context.
"""
import ctypes
import threading

from . import _lib
from ._errors import check
from .recipe import as_recipe

MAX_M = 1 << 20  # rows lb_op_run takes per launch (LB_MAX_ROWS)

_lock = threading.RLock()  # op() creates the context under it
_contexts = {}
_ops = {}


class Context:
    """lb_ctx: a device's primary context (the one PyTorch uses)."""

    def __init__(self, device=0):
        h = ctypes.c_void_p()
        check(_lib.lib.lb_ctx_create(int(device), ctypes.byref(h)))
        self._h = h
        self.device = int(device)

    @property
    def handle(self):
        return self._h

    def pack(self, recipe, n, k, codes, packed, stream=0):
        """lb_pack_device: codes (device pointer, uint8 [n][k]) packed into
        packed (device pointer, lowbit.sizes(...).packed bytes) on this
        device; waits for the stream.  Bit-identical to lowbit.pack."""
        r = as_recipe(recipe)
        check(_lib.lib.lb_pack_device(self._h, r.handle, int(n), int(k),
                                      ctypes.c_void_p(codes),
                                      ctypes.c_void_p(packed),
                                      ctypes.c_void_p(stream)))

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and _lib is not None and _lib.lib is not None:
            _lib.lib.lb_ctx_destroy(h)


class Op:
    """lb_op: (recipe, N, K) compiled for one device."""

    def __init__(self, ctx, recipe, n, k):
        self.ctx = ctx  # keeps the context alive as long as the op
        self.recipe = as_recipe(recipe)
        self.n, self.k = int(n), int(k)
        h = ctypes.c_void_p()
        check(_lib.lib.lb_op_create(ctx.handle, self.recipe.handle, self.n,
                                    self.k, ctypes.byref(h)))
        self._h = h
        self._run = _lib.lib.lb_op_run_ws
        self._ws = {}  # m -> work-space bytes (a plan's property: cached)

    def info(self):
        ci = _lib.CompileInfo()
        check(_lib.lib.lb_op_info(self._h, ctypes.byref(ci)))
        return {f: getattr(ci, f) for f, _ in ci._fields_}

    def prepare(self, m_lo, m_hi):
        """Compiles the kernels rows m_lo..m_hi use now (a GEMM bucket, or
        the GEMV's two- or four-fragment kernel, is otherwise compiled on
        its first run: do this before capturing a CUDA graph or serving)."""
        check(_lib.lib.lb_op_prepare(self._h, int(m_lo), int(m_hi)))

    def overlap(self, on=True):
        """Lets this op's kernels start while the kernel before them on the
        stream ends (lb_op_overlap: programmatic dependent launch, sm_90+).
        The promise: its packed weights, scales and zeros are complete
        before the stream's run of overlapping kernels begins (write them,
        synchronize, then run).  The op is shared by every user of (recipe,
        N, K) in the process.  Switching makes the op's GEMV again (an early
        one reads x by plain loads; compiled or from the cache).  LowbitError
        (LB_EUNSUP) before sm_90."""
        check(_lib.lib.lb_op_overlap(self._h, 1 if on else 0))

    def workspace(self, m):
        """Bytes of split-K work space that run() can use for m rows (0: the
        plan for m never splits K, or its splits meet in a cluster;
        lb_op_workspace)."""
        b = self._ws.get(m)
        if b is None:
            v = ctypes.c_size_t()
            check(_lib.lib.lb_op_workspace(self._h, int(m), ctypes.byref(v)))
            b = self._ws[m] = v.value
        return b

    def splits(self, m):
        """(ways, in_cluster): how the kernel of m rows splits K (1: not at
        all), and whether the splits meet in a cluster (sm_90: no work
        space) rather than in workspace(m) (lb_op_splits)."""
        sp, cl = ctypes.c_int(), ctypes.c_int()
        check(_lib.lib.lb_op_splits(self._h, int(m), ctypes.byref(sp),
                                    ctypes.byref(cl)))
        return sp.value, bool(cl.value)

    def tail(self, m):
        """Rows at the end of m that run as a second launch on the kernel of
        their own count, after the rest (0: one launch; lb_op_tail)."""
        t = ctypes.c_int()
        check(_lib.lib.lb_op_tail(self._h, int(m), ctypes.byref(t)))
        return t.value

    def run(self, m, x, packed, scales, zeros, bias, y, stream=0,
            workspace=None, workspace_bytes=0):
        """y[m][N] = x[m][K] * W^T (+ bias), enqueued on `stream`; m = 1..2^20
        (the GEMV up to its reach, 8 to 32 rows by recipe and shape, more
        the GEMM of m's bucket).
        Arguments are device addresses (0 or None for absent zeros/bias);
        workspace: workspace(m) bytes of device memory for split-K, or None
        (the plan that needs none).  Streams running at once need a work
        space each.  About 1 us of host time through ctypes (a fresh
        lb_weights per call costs no more than reusing one, and keeps
        threads apart)."""
        st = self._run(self._h, m, x, _lib.Weights(packed, scales, zeros, bias),
                       y, workspace, workspace_bytes if workspace else 0,
                       stream)
        if st:
            check(st)

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and _lib is not None and _lib.lib is not None:
            _lib.lib.lb_op_destroy(h)


def _cached(table, key, make):
    """table[key], made once (checked again under the lock)."""
    v = table.get(key)
    if v is None:
        with _lock:
            v = table.get(key)
            if v is None:
                v = table[key] = make()
    return v


def context(device=0):
    """The cached Context of a device."""
    return _cached(_contexts, device, lambda: Context(device))


def op(recipe, n, k, device=0):
    """The cached Op of (recipe, N, K) on a device; recipe is a Recipe, a
    shipped name or a path (a Recipe is keyed by its path, or by identity
    when loaded from text)."""
    key = (recipe if isinstance(recipe, str) else (recipe.path or id(recipe)),
           n, k, device)
    return _cached(_ops, key, lambda: Op(context(device), recipe, n, k))

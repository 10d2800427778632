"""Generation and offline compilation: CUDA source text and NVRTC, no GPU."""
import ctypes
import dataclasses

from . import _lib
from ._errors import check
from .recipe import as_recipe


def generate(recipe, n, k, sms=132, m=1, plan=None):
    """The self-contained CUDA source lowbit generates for (recipe, n, k) on a
    device with `sms` multiprocessors, for the kernel that m activation rows
    use (the GEMV up to its reach, 8 to 32 rows by recipe and shape, more a
    GEMM bucket); deterministic: equal inputs,
    equal text.  plan: knobs in words replacing the planner's choices
    ("wn=2,st=3" for a GEMM, "split=2" for the GEMV; include/lowbit.h lists
    them); a malformed plan raises LowbitError naming the knob."""
    r = as_recipe(recipe)
    p = ctypes.c_void_p()
    if plan is None:
        check(_lib.lib.lb_generate_m(r.handle, int(n), int(k), int(m),
                                     int(sms), ctypes.byref(p)))
    else:
        check(_lib.lib.lb_generate_plan(r.handle, int(n), int(k), int(m),
                                        int(sms), str(plan).encode(),
                                        ctypes.byref(p)))
    return _lib.take_string(p)


def plan_candidates(recipe, n, k, m, sms=132, arch=90, base=None, most=64):
    """The plans `lowbit tune` tries for the kernel m rows use on sm_<arch>:
    base's (None: the planner's rules) first, then those one knob away from
    it that fit and differ, each with every knob named."""
    r = as_recipe(recipe)
    most = int(most)
    if most < 1:
        raise ValueError(f"most = {most}: at least 1")
    buf = ctypes.create_string_buffer(most * _lib.PLAN_LEN)
    count = ctypes.c_int()
    check(_lib.lib.lb_plan_candidates(
        r.handle, int(n), int(k), int(m), int(sms), _arch(arch),
        None if base is None else str(base).encode(), buf, most,
        ctypes.byref(count)))
    raw = buf.raw
    return [raw[i * _lib.PLAN_LEN:(i + 1) * _lib.PLAN_LEN].split(b"\0", 1)[0]
            .decode() for i in range(count.value)]


def workspace_for(recipe, n, k, m, sms=132, arch=90):
    """Bytes of work space m rows need on an op made for (recipe, n, k) on a
    device of `sms` SMs of sm_<arch>, by the planner's rules (no tuning
    table), without a GPU: what lb_op_workspace would say (0: none)."""
    r = as_recipe(recipe)
    b = ctypes.c_size_t(0)
    check(_lib.lib.lb_workspace_for(r.handle, int(n), int(k), int(m),
                                    int(sms), _arch(arch), ctypes.byref(b)))
    return b.value


@dataclasses.dataclass(frozen=True)
class Kernel:
    """What lb_describe says of the kernel m rows use (nothing compiled)."""
    kind: str       # "gemv" or "gemm"
    plan: str       # the plan in words
    threads: int    # per block
    smem_hi: int    # dynamic shared memory on sm_80 / sm_90 / sm_100, bytes
    smem_lo: int    # the same on 99 KB parts (sm_86, sm_89, sm_120)


def describe_kernel(recipe, n, k, m, sms=132):
    """The kind, plan, threads and shared memory of the kernel m rows use."""
    r = as_recipe(recipe)
    d = _lib.KernelDesc()
    check(_lib.lib.lb_describe(r.handle, int(n), int(k), int(m), int(sms),
                               ctypes.byref(d)))
    # the whole text (lb_kernel_desc's is cut at 200 bytes)
    need = ctypes.c_size_t(0)
    buf = ctypes.create_string_buffer(1024)
    st = _lib.lib.lb_describe_plan(r.handle, int(n), int(k), int(m), int(sms),
                                   buf, len(buf), ctypes.byref(need))
    if st != 0 and need.value > len(buf):
        buf = ctypes.create_string_buffer(need.value)
        st = _lib.lib.lb_describe_plan(r.handle, int(n), int(k), int(m),
                                       int(sms), buf, len(buf), None)
    check(st)
    return Kernel(kind=d.kind.decode(), plan=buf.value.decode(),
                  threads=d.threads, smem_hi=d.smem_hi, smem_lo=d.smem_lo)


@dataclasses.dataclass(frozen=True)
class Compiled:
    """What lb_compile_offline reported."""
    seconds: float
    cache: bool       # True: served by the disk cache
    warnings: int     # warning lines in the NVRTC log
    ptx: bool         # True: NVRTC does not know the arch; the binary is PTX
    binary: int       # bytes of CUBIN (or PTX)
    log: str


def _arch(arch):
    if isinstance(arch, str):
        a = arch[3:] if arch.startswith("sm_") else arch
        if not a.isdigit():
            raise ValueError(f"arch {arch!r}: expected sm_XY or an integer such as 90")
        return int(a)
    return int(arch)


def compile_offline(src, arch):
    """Compiles generated source for sm_<arch> (80, "sm_90", ...) with NVRTC,
    through the disk cache; no device needed.  A rejected source raises
    LowbitError (LB_ECOMPILE) with NVRTC's log in the message."""
    info = _lib.Offline()
    log = ctypes.c_void_p()
    data = src.encode() if isinstance(src, str) else bytes(src)
    try:
        check(_lib.lib.lb_compile_offline(data, _arch(arch), ctypes.byref(info),
                                          ctypes.byref(log)))
    finally:
        text = _lib.take_string(log)
    return Compiled(seconds=info.seconds, cache=info.cache != 0,
                    warnings=info.warnings, ptx=bool(info.ptx),
                    binary=info.binary, log=text or "")

"""Loads liblowbit.so and declares the C API that the package calls.

The library is found, in order, at $LOWBIT_LIB (a path to a built
liblowbit.so: the in-tree tests use the build directory's), then in the
package's own _lib/ (where `pip install .` puts it).  Every prototype is
declared here once, so a call with a wrong argument type fails in ctypes
instead of corrupting memory in C.
"""
import ctypes
import os
from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_int,
                    c_longlong, c_size_t, c_uint8, c_uint32, c_uint64,
                    c_void_p)

_HERE = os.path.dirname(os.path.abspath(__file__))


class RecipeInfo(Structure):
    _fields_ = [("name", c_char_p), ("file", c_char_p), ("bits", c_int),
                ("is_signed", c_int), ("packing", c_char_p), ("group", c_int),
                ("activations", c_char_p), ("scales", c_char_p),
                ("zeros", c_char_p), ("dequant", c_char_p),
                ("accumulator", c_char_p), ("output", c_char_p),
                ("bias", c_int)]


class Sizes(Structure):
    _fields_ = [("packed", c_size_t), ("scales", c_size_t),
                ("zeros", c_size_t), ("groups", c_int), ("kpad", c_int)]


class CompileInfo(Structure):
    _fields_ = [("seconds", c_double), ("cache", c_int), ("arch", c_int),
                ("ptx", c_int), ("regs", c_int), ("spill", c_int)]


class Weights(Structure):
    _fields_ = [("packed", c_void_p), ("scales", c_void_p),
                ("zeros", c_void_p), ("bias", c_void_p)]


class KernelDesc(Structure):
    _fields_ = [("kind", c_char * 8), ("plan", c_char * 200), ("threads", c_int),
                ("smem_hi", c_int), ("smem_lo", c_int)]


class Offline(Structure):
    _fields_ = [("seconds", c_double), ("cache", c_int), ("warnings", c_int),
                ("ptx", c_int), ("binary", c_size_t)]


class CacheState(Structure):
    _fields_ = [("dir", c_char * 4096), ("enabled", c_int),
                ("writable", c_int), ("why", c_char * 512)]


class CacheEntry(Structure):
    _fields_ = [("file", c_char * 32), ("bytes", c_uint64),
                ("mtime", c_longlong), ("recipe", c_char * 64), ("n", c_int),
                ("k", c_int), ("arch", c_int), ("ptx", c_int)]


def library_path():
    """The liblowbit.so this process uses (or would use)."""
    env = os.environ.get("LOWBIT_LIB")
    if env:
        return env
    return os.path.join(_HERE, "_lib", "liblowbit.so")


def _open():
    path = library_path()
    if not os.path.exists(path):
        raise ImportError(
            f"lowbit: {path} does not exist (build the package with "
            f"`pip install .`, or set LOWBIT_LIB to a built liblowbit.so)")
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        # A sanitized build (LB_SANITIZE) cannot be opened by an
        # unsanitized interpreter; say so instead of a bare dlopen error.
        hint = (" (an LB_SANITIZE build needs libasan preloaded)"
                if "asan" in str(e).lower() else "")
        raise ImportError(f"lowbit: cannot open {path}: {e}{hint}") from e


lib = _open()

_R = c_void_p  # lb_recipe *, lb_ctx *, lb_op *: opaque handles


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_proto("lb_errmsg", c_char_p)
_proto("lb_status_name", c_char_p, c_int)
_proto("lb_free", None, c_void_p)
_proto("lb_version", c_char_p)
_proto("lb_recipe_load", c_int, c_char_p, POINTER(_R))
_proto("lb_recipe_load_text", c_int, c_char_p, c_char_p, c_size_t, POINTER(_R))
_proto("lb_recipe_free", None, _R)
_proto("lb_recipe_name", c_char_p, _R)
_proto("lb_recipe_describe", c_int, _R, POINTER(RecipeInfo))
_proto("lb_sizes_of", c_int, _R, c_int, c_int, POINTER(Sizes))
_proto("lb_pack", c_int, _R, c_int, c_int, POINTER(c_uint8), POINTER(c_uint32))
_proto("lb_unpack", c_int, _R, c_int, c_int, POINTER(c_uint32), POINTER(c_uint8))
# char ** out-parameters are void pointers, so that the string can be
# handed back to lb_free after it is copied.
_proto("lb_generate", c_int, _R, c_int, c_int, c_int, POINTER(c_void_p))
_proto("lb_generate_m", c_int, _R, c_int, c_int, c_int, c_int, POINTER(c_void_p))
_proto("lb_describe", c_int, _R, c_int, c_int, c_int, c_int, POINTER(KernelDesc))
_proto("lb_describe_plan", c_int, _R, c_int, c_int, c_int, c_int, c_char_p,
       c_size_t, POINTER(c_size_t))
_proto("lb_generate_plan", c_int, _R, c_int, c_int, c_int, c_int, c_char_p,
       POINTER(c_void_p))
# out: max plans of PLAN_LEN characters each, in one buffer
_proto("lb_plan_candidates", c_int, _R, c_int, c_int, c_int, c_int, c_int,
       c_char_p, c_void_p, c_int, POINTER(c_int))
_proto("lb_workspace_for", c_int, _R, c_int, c_int, c_int, c_int, c_int,
       POINTER(c_size_t))
_proto("lb_ctx_create", c_int, c_int, POINTER(_R))
_proto("lb_ctx_destroy", None, _R)
_proto("lb_pack_device", c_int, _R, _R, c_int, c_int, c_void_p, c_void_p,
       c_void_p)
_proto("lb_op_create", c_int, _R, _R, c_int, c_int, POINTER(_R))
_proto("lb_op_destroy", None, _R)
_proto("lb_op_info", c_int, _R, POINTER(CompileInfo))
_proto("lb_op_prepare", c_int, _R, c_int, c_int)
_proto("lb_op_overlap", c_int, _R, c_int)
_proto("lb_op_run", c_int, _R, c_int, c_void_p, POINTER(Weights), c_void_p,
       c_void_p)
_proto("lb_op_workspace", c_int, _R, c_int, POINTER(c_size_t))
_proto("lb_op_splits", c_int, _R, c_int, POINTER(c_int), POINTER(c_int))
_proto("lb_op_tail", c_int, _R, c_int, POINTER(c_int))
_proto("lb_op_run_ws", c_int, _R, c_int, c_void_p, POINTER(Weights), c_void_p,
       c_void_p, c_size_t, c_void_p)
_proto("lb_compile_offline", c_int, c_char_p, c_int, POINTER(Offline),
       POINTER(c_void_p))
_proto("lb_cache_query", c_int, POINTER(CacheState))
_proto("lb_cache_list", c_int, POINTER(c_void_p), POINTER(c_int))
_proto("lb_cache_clear", c_int, POINTER(c_int))


PLAN_LEN = 128   # LB_PLAN_LEN in lowbit.h


def take_string(p):
    """Copies a C string lowbit allocated for us, then frees it."""
    if not p:
        return None
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        lib.lb_free(p)

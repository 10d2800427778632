import pytest

import lowbit
from conftest import SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_deterministic(name):
    a = lowbit.generate(name, 4096, 4096)
    b = lowbit.generate(lowbit.Recipe(name), 4096, 4096, sms=132)
    assert a == b
    assert 'extern "C"' in a and "lb_gemv" in a


def test_shape_changes_source():
    assert lowbit.generate("a16w4_g128", 4096, 4096) != \
        lowbit.generate("a16w4_g128", 8192, 4096)


@pytest.mark.parametrize("arch", [80, "sm_90"])
@pytest.mark.parametrize("name", ["a16w4_g128", "a16w3_g128", "bf16w4_g128"])
def test_compile_offline(name, arch):
    src = lowbit.generate(name, 4096, 4096)
    c = lowbit.compile_offline(src, arch)
    assert c.warnings == 0, c.log
    assert c.binary > 0 and not c.ptx
    again = lowbit.compile_offline(src, arch)
    assert again.cache and again.binary == c.binary


def test_compile_error_has_log():
    with pytest.raises(lowbit.LowbitError) as e:
        lowbit.compile_offline("this is not CUDA;\n", 90)
    assert e.value.status == "LB_ECOMPILE"
    assert "error" in e.value.message


def test_bad_arguments():
    with pytest.raises(lowbit.LowbitError, match="sms = 0 out of range"):
        lowbit.generate("a16w4_g128", 4096, 4096, sms=0)
    with pytest.raises(lowbit.LowbitError, match="multiple of 32"):
        lowbit.generate("a16w4_g128", 4096, 100)
    with pytest.raises(lowbit.LowbitError, match="arch sm_7 out of range"):
        lowbit.compile_offline("", 7)
    with pytest.raises(ValueError, match="sm_XY"):
        lowbit.compile_offline("", "hopper")


def test_gemm_source_per_bucket():
    gemv = lowbit.generate("a16w4_g128", 4096, 4096, m=8)
    assert gemv == lowbit.generate("a16w4_g128", 4096, 4096)
    # 9..16 rows of 4-bit codes: the GEMV with two fragments of x
    g16 = lowbit.generate("a16w4_g128", 4096, 4096, m=16)
    assert "constexpr int LB_NF = 2;" in g16 and g16 != gemv
    assert g16 == lowbit.generate("a16w4_g128", 4096, 4096, m=9)
    # 8-bit codes: the GEMM's first bucket
    assert "lb_gemm" in lowbit.generate("a16w8_channel", 4096, 4096, m=16)
    g32 = lowbit.generate("a16w4_g128", 4096, 4096, m=32)
    assert "lb_gemm" in g32 and g32 != g16
    assert g32 == lowbit.generate("a16w4_g128", 4096, 4096, m=17)   # one bucket
    assert g32 != lowbit.generate("a16w4_g128", 4096, 4096, m=33)
    for src in (g16, g32):
        c = lowbit.compile_offline(src, 90)
        assert c.warnings == 0 and c.binary > 0, c.log


def test_slices():
    # a small layer (8 blocks at N = 256, K = 1024): 9..32 rows run the
    # one-fragment kernel in rows of blocks, not two or four fragments
    g16 = lowbit.generate("a16w4_g128", 256, 1024, m=16)
    assert "constexpr int LB_NF = 1;" in g16 and "blockIdx.y" in g16
    assert "blockIdx.y" not in lowbit.generate("a16w4_g128", 256, 1024)
    k = lowbit.describe_kernel("a16w4_g128", 256, 1024, 32)
    assert k.kind == "gemv" and "4 rows of blocks (slices)" in k.plan


def test_describe_kernel():
    k8 = lowbit.describe_kernel("a16w4_g128", 8192, 8192, 8)
    k16 = lowbit.describe_kernel("a16w4_g128", 8192, 8192, 16)
    k32 = lowbit.describe_kernel("a16w4_g128", 8192, 8192, 32)
    assert k8.kind == "gemv" and k16.kind == "gemv" and k32.kind == "gemm"
    assert "two fragments" in k16.plan and "two fragments" not in k8.plan
    assert "bucket 0" in lowbit.describe_kernel("a16w8_channel", 8192, 8192,
                                                16).plan
    assert "bucket 1" in k32.plan and k32.threads > 0
    # the whole text, sm_90's wgmma plan included (past lb_kernel_desc's 200)
    k128 = lowbit.describe_kernel("a16w3_g128", 8192, 8192, 128)
    assert "sm_90 wgmma" in k128.plan and k128.plan.endswith(
        "bytes of shared memory") and len(k128.plan) > 200
    assert 0 < k32.smem_lo <= 99 * 1024 and k32.smem_hi >= k32.smem_lo
    with pytest.raises(lowbit.LowbitError, match="m = 0"):
        lowbit.describe_kernel("a16w4_g128", 8192, 8192, 0)
    with pytest.raises(lowbit.LowbitError, match="m = 0"):
        lowbit.generate("a16w4_g128", 8192, 8192, m=0)


def test_plan_in_words():
    rules = lowbit.generate("a16w4_g128", 4096, 4096, m=64)
    assert lowbit.generate("a16w4_g128", 4096, 4096, m=64, plan="") == rules
    src = lowbit.generate("a16w4_g128", 4096, 4096, m=64, plan="wn=2,st=3")
    assert 'Plan changed by the caller: "wn=2,st=3"' in src
    assert "LB_WARPS_N = 2;" in src
    gemv = lowbit.generate("a16w4_g128", 4096, 4096, m=4, plan="split=2")
    assert 'Plan changed by the caller: "split=2"' in gemv
    with pytest.raises(lowbit.LowbitError, match="wn must be a power of two"):
        lowbit.generate("a16w4_g128", 4096, 4096, m=64, plan="wn=3")
    with pytest.raises(lowbit.LowbitError, match='unknown knob at "wn=2"'):
        lowbit.generate("a16w4_g128", 4096, 4096, m=4, plan="wn=2")


@pytest.mark.parametrize("m", [1, 16, 128, 1024])
def test_plan_candidates(m):
    plans = lowbit.plan_candidates("a16w4_g128", 4096, 4096, m)
    assert len(plans) >= 4 and len(set(plans)) == len(plans)
    # each regenerates: the first is the rules' own plan, every knob named
    first = lowbit.generate("a16w4_g128", 4096, 4096, m=m, plan=plans[0])
    assert plans[0] in first
    around = lowbit.plan_candidates("a16w4_g128", 4096, 4096, m,
                                    base=plans[1], most=3)
    assert around[0] == plans[1] and len(around) <= 3
    with pytest.raises(ValueError):
        lowbit.plan_candidates("a16w4_g128", 4096, 4096, m, most=0)


def test_plan_len_matches_header():
    # plan buffers are PLAN_LEN bytes a plan on both sides of ctypes: a
    # mismatch cuts plans or overruns the buffer
    import re
    from conftest import ROOT
    from lowbit import _lib
    header = (ROOT / "include" / "lowbit.h").read_text()
    assert int(re.search(r"#define LB_PLAN_LEN (\d+)", header).group(1)) == \
        _lib.PLAN_LEN


def test_workspace_for():
    # none for the GEMV's rows; split-K's f32 sums where K splits across
    # blocks (8192 x 8192 at 32 rows: on sm_80 with a work space, on sm_90
    # in a cluster, none); bad arguments raise
    assert lowbit.workspace_for("a16w4_g128", 8192, 8192, 8) == 0
    b80 = lowbit.workspace_for("a16w4_g128", 8192, 8192, 32, arch=80)
    assert b80 > 0 and b80 % (32 * 8192 * 4) == 0
    assert lowbit.workspace_for("a16w4_g128", 8192, 8192, 32, arch="sm_90") == 0
    with pytest.raises(lowbit.LowbitError, match="m = 0"):
        lowbit.workspace_for("a16w4_g128", 8192, 8192, 0)
    with pytest.raises(lowbit.LowbitError, match="sm_75"):
        lowbit.workspace_for("a16w4_g128", 8192, 8192, 16, arch=75)

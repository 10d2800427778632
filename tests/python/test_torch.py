"""The PyTorch parts without a GPU: quantization, Linear's buffers,
quantize_, and the op's checks and fake implementation (meta tensors)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

import lowbit  # noqa: E402
from lowbit import quant  # noqa: E402
from conftest import SHIPPED  # noqa: E402

ACT = {"f16": torch.float16, "bf16": torch.bfloat16}


@pytest.mark.parametrize("name", SHIPPED)
def test_quantize_error_bound(name):
    info = lowbit.Recipe(name).info
    torch.manual_seed(0)
    w = torch.randn(48, 512)
    w[3, :] = 0.25            # a constant channel: any scale is exact
    codes, s, z = quant.quantize(w, info)
    assert codes.dtype == torch.uint8 and codes.shape == w.shape
    assert int(codes.max()) < (1 << info.bits)
    groups = 512 // info.group if info.group else 1
    assert s.shape == (48, groups) and s.dtype == quant.DTYPES[info.scales]
    assert (z is None) == (info.zeros is None)
    wq = quant.dequantize(codes, s, z, info)
    g = info.group or 512
    err = (wq - w.double()).abs().reshape(48, groups, g).amax(-1)
    # half a step, plus the zero's rounding to its dtype
    assert (err <= 0.6 * s.double()).all(), float((err / s.double()).max())
    if info.dequant != "q * s":
        assert torch.allclose(wq[3], torch.full((512,), 0.25, dtype=torch.float64),
                              atol=1e-3)


def test_from_float_buffers():
    lin = torch.nn.Linear(256, 40)
    q = lowbit.Linear.from_float(lin, recipe="a16w4_g128")
    assert q.packed.dtype == torch.int32
    assert q.scales.shape == (40, 2) and q.scales.dtype == torch.float16
    assert q.zeros.shape == (40, 2) and q.bias.dtype == torch.float16
    codes, s, z = quant.quantize(lin.weight, q.info)
    want = lowbit.pack("a16w4_g128", codes.numpy()).view(np.int32)
    np.testing.assert_array_equal(q.packed.numpy(), want)
    torch.testing.assert_close(q.scales, s)
    # .float()/.half() leave the recipe's dtypes alone
    q.float()
    assert q.scales.dtype == torch.float16 and q.bias.dtype == torch.float16
    assert "a16w4_g128" in repr(q)
    sd = q.state_dict()
    empty = lowbit.Linear("a16w4_g128", 256, 40, bias=True)
    empty.load_state_dict(sd)
    assert torch.equal(empty.packed, q.packed)


def test_from_quantized_refuses():
    codes = torch.zeros(8, 128, dtype=torch.uint8)
    s = torch.ones(8, 1, dtype=torch.float16)
    z = torch.zeros(8, 1, dtype=torch.float16)
    with pytest.raises(ValueError, match="needs zeros"):
        lowbit.Linear.from_quantized("a16w4_g128", codes, s)
    with pytest.raises(ValueError, match=r"scales must be \[8, 1\]"):
        lowbit.Linear.from_quantized("a16w4_g128", codes, s.repeat(1, 2), z)
    with pytest.raises(TypeError, match="float16"):
        lowbit.Linear.from_quantized("a16w4_g128", codes, s.float(), z)
    with pytest.raises(ValueError, match="no zeros"):
        lowbit.Linear.from_quantized("a16w8_channel", codes, s, z)
    with pytest.raises(ValueError, match="bias"):
        lowbit.Linear.from_quantized("a16w2_g64", codes, s.repeat(1, 2),
                                     z.repeat(1, 2), bias=torch.zeros(8, dtype=torch.float16))
    bad = codes.clone()
    bad[0, 0] = 200
    with pytest.raises(lowbit.LowbitError, match="does not fit in 4 bits"):
        lowbit.Linear.from_quantized("a16w4_g128", bad, s, z)


def test_quantize_():
    model = torch.nn.Sequential(torch.nn.Linear(256, 128), torch.nn.ReLU(),
                                torch.nn.Sequential(torch.nn.Linear(128, 64)),
                                torch.nn.Linear(128, 8, bias=False))
    lowbit.quantize_(model, "a16w4_g128", filter=lambda m, name: name != "3")
    assert isinstance(model[0], lowbit.Linear)
    assert isinstance(model[2][0], lowbit.Linear)
    assert isinstance(model[3], torch.nn.Linear)
    with pytest.raises(ValueError, match="layer '0'.*bias"):
        lowbit.quantize_(torch.nn.Sequential(torch.nn.Linear(256, 8)), "a16w2_g64")
    with pytest.raises(lowbit.LowbitError, match="layer '0'.*multiple of 32"):
        lowbit.quantize_(torch.nn.Sequential(torch.nn.Linear(100, 8, bias=False)),
                         "a16w8_channel")
    with pytest.raises(ValueError, match="wrap"):
        lowbit.quantize_(torch.nn.Linear(256, 8), "a16w4_g128")


def _args(device="cpu", dtype=torch.float16, m=3):
    lin = lowbit.Linear.from_float(torch.nn.Linear(256, 40), "a16w4_g128")
    x = torch.randn(m, 256).to(dtype)
    args = [x, lin.packed, lin.scales, lin.zeros, lin.bias, lin.recipe, 40, 256]
    return [a.to(device) if torch.is_tensor(a) else a for a in args]


def test_op_checks():
    op = torch.ops.lowbit.linear
    a = _args()
    with pytest.raises(TypeError, match="x must be torch.float16"):
        op(a[0].float(), *a[1:])
    with pytest.raises(ValueError, match=r"x must be \[\.\.\., 256\]"):
        op(a[0][:, :128], *a[1:])
    with pytest.raises(ValueError, match="contiguous"):
        op(torch.randn(512, 3).half().t()[:, :256], *a[1:])
    with pytest.raises(ValueError, match="needs zeros"):
        op(*a[:3], None, *a[4:])
    with pytest.raises(ValueError, match="scales must have shape"):
        op(a[0], a[1], a[2][:, :1].contiguous(), *a[3:])
    with pytest.raises(ValueError, match="CUDA"):
        op(*a)


def test_fake_impl_on_meta():
    a = _args("meta")
    a[0] = torch.empty(2, 5, 256, dtype=torch.float16, device="meta")
    y = torch.ops.lowbit.linear(*a)
    assert y.shape == (2, 5, 40) and y.dtype == torch.float16
    assert y.device.type == "meta"
    a[0] = torch.empty(0, 256, dtype=torch.float16, device="meta")
    assert torch.ops.lowbit.linear(*a).shape == (0, 40)


def test_import_lowbit_nn_registers_op():
    lowbit.nn  # the lazy attribute imports it
    assert hasattr(torch.ops.lowbit, "linear")

"""lowbit.Linear on a GPU: output against a float64 reference of the
dequantized weights, on a non-default stream, under torch.compile
(fullgraph) and in a CUDA graph."""
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to PyTorch (torch.cuda.is_available() "
                "is False)", allow_module_level=True)

import lowbit  # noqa: E402
from lowbit import quant  # noqa: E402
from conftest import SHIPPED  # noqa: E402

N, K = 200, 1024  # N off every block size; K a multiple of every group


def make(name, bias=True, seed=0):
    torch.manual_seed(seed)
    info = lowbit.Recipe(name).info
    lin = torch.nn.Linear(K, N, bias=bias and info.bias)
    q = lowbit.Linear.from_float(lin, recipe=name).cuda()
    w = quant.dequantize(*quant.quantize(lin.weight, info), info).cuda()
    b = None if q.bias is None else q.bias.double()
    return q, w, b, quant.DTYPES[info.activations]


UNIT = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def check(y, x, w, b, dtype):
    """Elementwise form of tests/gpu's bound (bench/lb_ref.c lb_check):
    y's rounding to its dtype plus the weights' rounding to the activation
    dtype for the tensor cores, with a factor 2 of slack per element."""
    xd = x.double().reshape(-1, K)
    ref = xd @ w.T
    if b is not None:
        ref += b
    bound = (4 * UNIT[y.dtype] * ref.abs()
             + 8 * UNIT[dtype] * (xd.abs() @ w.abs().T) + 1e-6)
    err = (y.double().reshape(ref.shape) - ref).abs()
    assert torch.isfinite(y).all()
    worst = float((err / bound).max())
    assert worst <= 1, f"error {worst:.2f} times its bound"


@pytest.mark.parametrize("name", SHIPPED)
@pytest.mark.parametrize("m", [1, 3, 8, 13, 20, 40, 100])
def test_against_float64(name, m):
    q, w, b, dt = make(name)
    x = torch.randn(m, K, device="cuda").to(dt)
    y = q(x)
    assert y.shape == (m, N)
    check(y, x, w, b, dt)


def test_split_k():
    """40 and 100 rows of this narrow layer split K (on sm_90 40 in a
    cluster of 2, 100 in a work space that the op takes from PyTorch's
    allocator), so the cases above check split-K's result; 1..32 rows (the
    GEMV, which in a layer this small takes up to 32 rows with two and four
    fragments of x) never split."""
    op = lowbit.runtime.op("a16w4_g128", N, K, torch.cuda.current_device())
    for m in (8, 13, 20, 32):
        assert op.splits(m) == (1, False) and op.workspace(m) == 0, m
    for m in (40, 100):
        ways, cluster = op.splits(m)
        assert ways > 1 and (op.workspace(m) == 0) == cluster, (m, ways, cluster)
    q, w, b, dt = make("a16w4_g128")
    for m in (40, 100):
        x = torch.randn(m, K, device="cuda").to(dt)
        assert torch.equal(q(x), q(x)), "split-K results differ between runs"


def test_leading_shape_and_empty():
    q, w, b, dt = make("a16w4_g128")
    x = torch.randn(2, 3, K, device="cuda", dtype=dt)
    y = q(x)
    assert y.shape == (2, 3, N)
    check(y, x, w, b, dt)
    assert q(torch.empty(0, K, device="cuda", dtype=dt)).shape == (0, N)


def test_from_quantized():
    info = lowbit.Recipe("a16w3_g128").info
    g = torch.Generator().manual_seed(1)
    codes = torch.randint(0, 8, (N, K), dtype=torch.uint8, generator=g)
    s = (torch.rand(N, K // 128, generator=g) * 0.02 + 0.001).half()
    z = (torch.rand(N, K // 128, generator=g) * 7).half()
    bias = torch.randn(N, generator=g).half()
    q = lowbit.Linear.from_quantized("a16w3_g128", codes, s, z, bias, device="cuda")
    x = torch.randn(5, K, device="cuda", dtype=torch.float16)
    check(q(x), x, quant.dequantize(codes, s, z, info).cuda(), bias.double().cuda(),
          torch.float16)


@pytest.mark.parametrize("name", SHIPPED)
def test_pack_on_gpu(name):
    """Codes in CUDA memory are packed there (lb_pack_device), to the same
    words as the host packer; a code too wide is refused with its place."""
    info = lowbit.Recipe(name).info
    g = torch.Generator().manual_seed(2)
    k = K + (info.group or 32)   # off the 3-bit packing tile (1024)
    codes = torch.randint(0, 2 ** info.bits, (N, k), dtype=torch.uint8, generator=g)
    want = torch.from_numpy(lowbit.pack(name, codes.numpy()).view("int32"))
    groups = k // info.group if info.group else 1
    s = torch.ones(N, groups, dtype=quant.DTYPES[info.scales])
    z = None if info.zeros is None else torch.zeros(N, groups, dtype=quant.DTYPES[info.zeros])
    q = lowbit.Linear.from_quantized(name, codes.cuda(), s.cuda(),
                                     None if z is None else z.cuda())
    assert q.packed.is_cuda and torch.equal(q.packed.cpu(), want)
    if info.bits < 8:
        bad = codes.clone()
        bad[3, 17] = 2 ** info.bits
        with pytest.raises(lowbit.LowbitError, match=r"\[3\]\[17\]"):
            lowbit.Linear.from_quantized(name, bad.cuda(), s.cuda(),
                                         None if z is None else z.cuda())


def test_non_default_stream():
    q, w, b, dt = make("bf16w4_g128")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.randn(4, K, device="cuda", dtype=dt)
        y = q(x)
    s.synchronize()
    check(y, x, w, b, dt)


def test_torch_compile_fullgraph():
    q, w, b, dt = make("a16w4_g128")
    model = torch.nn.Sequential(q, torch.nn.ReLU())
    compiled = torch.compile(model, fullgraph=True)
    for m in (1, 8, 11):
        x = torch.randn(m, K, device="cuda", dtype=dt)
        torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=0)


def test_cuda_graph():
    q, w, b, dt = make("a16w2_g64")
    x = torch.randn(8, K, device="cuda", dtype=dt)
    q(x)  # compile the kernel before capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = q(x)
    for seed in range(3):
        torch.manual_seed(seed)
        x.copy_(torch.randn(8, K, device="cuda", dtype=dt))
        graph.replay()
        torch.cuda.synchronize()
        check(y, x, w, b, dt)


def test_opcheck():
    q, w, b, dt = make("a16w4_g128")
    x = torch.randn(3, K, device="cuda", dtype=dt)
    torch.library.opcheck(torch.ops.lowbit.linear.default,
                          (x, q.packed, q.scales, q.zeros, q.bias, q.recipe, N, K),
                          test_utils=("test_schema", "test_faketensor"))


def test_eager_path():
    """Linear's eager calls (ops.eager, past the dispatcher) give the op's
    bits, read buffers changed in place, follow buffers that are replaced,
    and a layer that has run still copies (its bound op is made again)."""
    import copy
    q, w, b, dt = make("a16w4_g128")
    x = torch.randn(5, K, device="cuda", dtype=dt)

    def op():
        return torch.ops.lowbit.linear(x, q.packed, q.scales, q.zeros, q.bias,
                                       q.recipe, N, K)
    y = q(x)
    assert q.__dict__.get("_bound") is not None, "the eager path was not taken"
    want = op()
    assert torch.equal(y, want)
    check(y, x, w, b, dt)
    q.scales.mul_(2)                 # in place: the same tensor and address
    assert torch.equal(q(x), op()) and not torch.equal(q(x), want)
    q.scales = q.scales / 2          # a new tensor in the buffer's place
    assert torch.equal(q(x), want)
    assert q.__dict__["_bound"].key[1][0] is q.scales
    q2 = copy.deepcopy(q)
    assert q2.__dict__["_bound"] is None
    assert torch.equal(q2(x), want)
    with pytest.raises(TypeError, match="x must be torch.float16"):
        q(x.float())                 # refused by the op, as without the path


def test_refusals():
    q, w, b, dt = make("a16w4_g128")
    with pytest.raises(ValueError, match="x is on cpu"):
        q(torch.randn(2, K, dtype=dt))
    with pytest.raises(TypeError, match="x must be torch.float16"):
        q(torch.randn(2, K, device="cuda"))
    x = torch.randn(2 * K + 1, device="cuda", dtype=dt)[1:].view(2, K)
    with pytest.raises(lowbit.LowbitError, match="16-byte aligned"):
        q(x)
    if torch.cuda.device_count() > 1:
        with pytest.raises(ValueError, match="on cuda:0, x on cuda:1"):
            q(torch.randn(2, K, device="cuda:1", dtype=dt))


def test_overlap():
    """overlap_ (programmatic dependent launch): three layers chained, each
    reading the one before's output, give the same bits with it as without,
    eagerly and replayed in a CUDA graph; the GEMV (1, 8 rows) and the GEMM
    with split-K (40 rows); and narrow layers (4096 -> 128 -> 4096 -> 128),
    whose GEMV splits K over clusters of 8 blocks, launched early with the
    shared memory of an even spread (runtime/lb_op.c, spread_of)."""
    if torch.cuda.get_device_capability() < (9, 0):
        with pytest.raises(lowbit.LowbitError):
            lowbit.overlap_(lowbit.Linear("a16w4_g128", K, N, device="cuda"))
        pytest.skip("programmatic dependent launch needs sm_90")
    torch.manual_seed(5)
    model = lowbit.quantize_(torch.nn.Sequential(
        torch.nn.Linear(K, K, bias=False), torch.nn.Linear(K, K, bias=False),
        torch.nn.Linear(K, N, bias=False)), "a16w4_g128").cuda()
    narrow = lowbit.quantize_(torch.nn.Sequential(
        torch.nn.Linear(4096, 128, bias=False),
        torch.nn.Linear(128, 4096, bias=False),
        torch.nn.Linear(4096, 128, bias=False)), "a16w4_g128").cuda()
    torch.cuda.synchronize()
    try:
        for net, k, m in [(model, K, 1), (model, K, 8), (model, K, 40),
                          (narrow, 4096, 1), (narrow, 4096, 8)]:
            x = torch.randn(m, k, device="cuda", dtype=torch.float16)
            lowbit.overlap_(net, False)
            want = net(x)
            lowbit.overlap_(net)
            assert torch.equal(net(x), want)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                y = net(x)
            for seed in range(3):
                torch.manual_seed(seed)
                x.copy_(torch.randn(m, k, device="cuda", dtype=torch.float16))
                lowbit.overlap_(net, False)
                want = net(x)
                graph.replay()
                torch.cuda.synchronize()
                assert torch.equal(y, want), f"k={k} m={m}: graph replay differs"
    finally:
        lowbit.overlap_(model, False)
        lowbit.overlap_(narrow, False)


# ---- checkpoints converted on the GPU ------------------------------------------


def _same(conv_gpu, conv_np):
    """The GPU conversion gives the NumPy one's values, bit for bit."""
    assert conv_gpu.codes.is_cuda and conv_gpu.scales.is_cuda and conv_gpu.zeros.is_cuda
    assert conv_gpu.recipe_text == conv_np.recipe_text
    assert torch.equal(conv_gpu.codes.cpu(), torch.from_numpy(conv_np.codes))
    assert torch.equal(conv_gpu.scales.cpu(), torch.from_numpy(conv_np.scales))
    assert torch.equal(conv_gpu.zeros.cpu(), torch.from_numpy(conv_np.zeros))
    if conv_np.bias is not None:
        assert torch.equal(conv_gpu.bias.cpu(), torch.from_numpy(conv_np.bias))


def _run_converted(conv, w_ref, bias=None):
    """Linear.from_converted packs on the GPU; y against x W_ref^T."""
    q = lowbit.Linear.from_converted(conv)
    assert q.packed.is_cuda and (q.perm is None) == (conv.perm is None)
    x = torch.randn(3, conv.k, device="cuda", dtype=torch.float16)
    w = torch.from_numpy(w_ref).cuda()
    b = None if bias is None else torch.from_numpy(bias).double().cuda()
    y = q(x)
    xd = x.double()
    ref = xd @ w.T + (0 if b is None else b)
    bound = 4 * UNIT[torch.float16] * ref.abs() + 8 * UNIT[torch.float16] * (
        xd.abs() @ w.abs().T) + 1e-6
    assert float(((y.double() - ref).abs() / bound).max()) <= 1


@pytest.mark.parametrize("bits", [2, 3, 4, 8])
@pytest.mark.parametrize("group_size", [128, -1])
def test_gptq_on_gpu(bits, group_size):
    """from_gptq on CUDA tensors: the NumPy converter's codes, scales and
    zeros, on the GPU; a layer from it matches GPTQ's own dequantisation
    (test_convert.py's packer and formula), packed on the GPU."""
    import numpy as np
    from test_convert import gptq_layer
    from lowbit.convert import from_gptq

    rng = np.random.default_rng(70 + bits + group_size)
    # negative words (top bit set) included: torch's shifts are arithmetic
    t, _, w_ref = gptq_layer(rng, bits, group_size, k=512, n=96)
    conv_np = from_gptq(**t, bits=bits, group_size=group_size)
    tg = {k: torch.from_numpy(v).cuda() for k, v in t.items()}
    conv = from_gptq(**tg, bits=bits, group_size=group_size)
    _same(conv, conv_np)
    _run_converted(conv, w_ref)
    # act-order (desc_act): the same order and codes as the NumPy path, and
    # a layer that gathers x[..., perm] itself matches the checkpoint's W
    if group_size != -1:
        gi = (np.arange(512) // group_size).astype(np.int32)
        gi = gi[np.random.default_rng(3).permutation(512)]
        t2, _, w2 = gptq_layer(rng, bits, group_size, k=512, n=96, g_idx=gi)
        a_np = from_gptq(**t2, bits=bits, group_size=group_size, act_order=True)
        t2g = {k: torch.from_numpy(v).cuda() for k, v in t2.items()}
        a_gpu = from_gptq(**t2g, bits=bits, group_size=group_size, act_order=True)
        assert a_gpu.perm is not None and np.array_equal(a_gpu.perm, a_np.perm)
        assert torch.equal(a_gpu.codes.cpu(), torch.from_numpy(a_np.codes))
        _run_converted(a_gpu, w2)


def test_awq_on_gpu():
    import numpy as np
    from test_convert import awq_pack, rand_scales
    from lowbit.convert import from_awq

    rng = np.random.default_rng(80)
    k, n, group = 512, 96, 128
    q = rng.integers(0, 16, size=(k, n))
    z = rng.integers(0, 16, size=(k // group, n))
    s = rand_scales(rng, (k // group, n))
    bias = rng.standard_normal(n).astype(np.float16)
    args = (awq_pack(q), awq_pack(z), s, bias)
    conv_np = from_awq(*args, group_size=group)
    conv = from_awq(*(torch.from_numpy(a).cuda() for a in args), group_size=group)
    _same(conv, conv_np)
    w_ref = ((q - np.repeat(z, group, axis=0)) *
             np.repeat(s.astype(np.float64), group, axis=0)).T
    _run_converted(conv, w_ref, bias)
    with pytest.raises(ValueError, match="int32"):
        from_awq(torch.from_numpy(args[0]).cuda().float(), *args[1:], group_size=group)


@pytest.mark.parametrize("bits,packed", [(1, True), (2, True), (3, True), (4, True),
                                         (8, True), (5, False), (7, False)])
def test_hqq_on_gpu(bits, packed):
    """from_hqq on a CUDA W_q (HQQ's packing, or GemLite's unpacked codes):
    the NumPy converter's values, and a layer matching HQQ's dequantisation."""
    import numpy as np
    from test_convert import hqq_layer, hqq_pack
    from lowbit.convert import from_hqq

    rng = np.random.default_rng(90 + bits)
    n, k, group = 96, 512, 64
    w_q, scale, zero, w_ref = hqq_layer(rng, bits, group, n=n, k=k)
    wq = hqq_pack(w_q, bits) if packed else w_q.reshape(n, k).astype(np.uint8)
    conv_np = from_hqq(wq, scale, zero, bits, group, (n, k))
    conv = from_hqq(torch.from_numpy(wq).cuda(), torch.from_numpy(scale).cuda(),
                    torch.from_numpy(zero).cuda(), bits, group, (n, k))
    _same(conv, conv_np)
    _run_converted(conv, w_ref)


class _GPTQLinear(torch.nn.Module):
    """Stands for AutoGPTQ's QuantLinear: its buffers and attributes."""

    def __init__(self, t, bits, group_size, bias=None):
        super().__init__()
        self.bits, self.group_size = bits, group_size
        for k, v in t.items():
            self.register_buffer(k, torch.from_numpy(v))
        self.register_buffer("bias", None if bias is None else torch.from_numpy(bias))


class _AWQLinear(torch.nn.Module):
    """Stands for AutoAWQ's WQLinear_GEMM."""

    def __init__(self, qweight, qzeros, scales, bias, group_size):
        super().__init__()
        self.w_bit, self.group_size = 4, group_size
        for k, v in (("qweight", qweight), ("qzeros", qzeros), ("scales", scales),
                     ("bias", bias)):
            self.register_buffer(k, None if v is None else torch.from_numpy(v))


def test_from_checkpoint():
    """from_checkpoint_ swaps a model's GPTQ (act-order included) and AWQ
    layers in place, on the GPU, and leaves other modules alone; the model
    then computes x W^T with each checkpoint's own W."""
    import numpy as np
    from test_convert import awq_pack, gptq_layer, rand_scales

    rng = np.random.default_rng(11)
    k, n = 512, 96
    gi = (np.arange(k) // 128).astype(np.int32)[np.random.default_rng(4).permutation(k)]
    t1, _, w1 = gptq_layer(rng, 4, 128, k=k, n=k)            # 512 -> 512
    t2, _, w2 = gptq_layer(rng, 3, 128, k=k, n=n, g_idx=gi)  # 512 -> 96, act-order
    q = rng.integers(0, 16, size=(k, n))
    z = rng.integers(0, 16, size=(k // 64, n))
    s = rand_scales(rng, (k // 64, n))
    w3 = ((q - np.repeat(z, 64, axis=0)) * np.repeat(s.astype(np.float64), 64, axis=0)).T
    b3 = rng.standard_normal(n).astype(np.float16)
    model = torch.nn.Sequential(
        _GPTQLinear(t1, 4, 128), torch.nn.Identity(), _GPTQLinear(t2, 3, 128),
        torch.nn.Sequential(_AWQLinear(awq_pack(q), awq_pack(z), s, b3, 64))).cuda()
    # (every quantized layer takes 512 inputs: each is checked on the same x)
    assert lowbit.from_checkpoint_(model) == 3
    assert isinstance(model[0], lowbit.Linear) and isinstance(model[1], torch.nn.Identity)
    assert isinstance(model[2], lowbit.Linear) and model[2].perm is not None
    assert isinstance(model[3][0], lowbit.Linear)
    x = torch.randn(4, k, device="cuda", dtype=torch.float16)
    for lin, w, b in ((model[0], w1, None), (model[2], w2, None), (model[3][0], w3, b3)):
        wd = torch.from_numpy(np.ascontiguousarray(w)).cuda()
        xd = x.double()
        ref = xd @ wd.T + (0 if b is None else torch.from_numpy(b).double().cuda())
        bound = 4 * UNIT[torch.float16] * ref.abs() + 8 * UNIT[torch.float16] * (
            xd.abs() @ wd.abs().T) + 1e-6
        assert float(((lin(x).double() - ref).abs() / bound).max()) <= 1
    with pytest.raises(ValueError, match="from_checkpoint_: layer '0'.*act-order"):
        lowbit.from_checkpoint_(torch.nn.Sequential(_GPTQLinear(t2, 3, 128)).cuda(),
                                act_order=False)

import os
import subprocess
import sys

import lowbit


def test_import_needs_no_torch():
    # a fresh interpreter: this one may have imported torch for other tests
    code = ("import sys, lowbit; lowbit.Recipe('a16w4_g128'); "
            "assert 'torch' not in sys.modules, 'import lowbit imported torch'")
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ)


def test_version_and_library():
    assert lowbit.__version__.count(".") == 2
    assert os.path.isfile(lowbit.library_path())


def test_error_is_runtime_error():
    assert issubclass(lowbit.LowbitError, RuntimeError)


def test_unknown_attribute():
    try:
        lowbit.no_such_thing
    except AttributeError as e:
        assert "no_such_thing" in str(e)
    else:
        raise AssertionError("lowbit.no_such_thing did not raise")

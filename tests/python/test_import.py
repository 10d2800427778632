import os
import subprocess
import sys

import pytest

import lowbit


def test_import_needs_no_torch():
    # a fresh interpreter: this one may have imported torch for other tests
    code = ("import sys, lowbit; lowbit.Recipe('a16w4_g128'); "
            "assert 'torch' not in sys.modules, 'import lowbit imported torch'")
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ)


def test_version_and_library():
    assert lowbit.__version__.count(".") == 2
    assert os.path.isfile(lowbit.library_path())


def test_installed():
    # .ci/run sets LOWBIT_TEST_INSTALLED when it tests the pip-installed
    # package: then it must be that one, library and recipes inside it.
    if not os.environ.get("LOWBIT_TEST_INSTALLED"):
        pytest.skip("not testing an installed package (LOWBIT_TEST_INSTALLED unset)")
    here = os.path.dirname(lowbit.__file__)
    assert "site-packages" in here, here
    assert lowbit.library_path() == os.path.join(here, "_lib", "liblowbit.so")
    assert os.path.isdir(lowbit.RECIPE_DIR)


def test_error_is_runtime_error():
    assert issubclass(lowbit.LowbitError, RuntimeError)


def test_unknown_attribute():
    try:
        lowbit.no_such_thing
    except AttributeError as e:
        assert "no_such_thing" in str(e)
    else:
        raise AssertionError("lowbit.no_such_thing did not raise")

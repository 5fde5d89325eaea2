"""The installed package's metadata agrees with the package itself."""
import importlib.metadata

import pysched


def test_version_is_the_installed_distributions_version():
    assert pysched.__version__ == importlib.metadata.version("pysched")

"""The installed package's metadata agrees with the package itself."""
import importlib.metadata

import pysched


def test_version_is_the_installed_distributions_version():
    assert pysched.__version__ == importlib.metadata.version("pysched")


def test_the_license_is_declared_and_shipped():
    dist = importlib.metadata.distribution("pysched")
    assert dist.metadata["License-Expression"] == "GPL-2.0-or-later"
    shipped = [f for f in dist.files if f.name == "LICENSE"]
    assert shipped and "GNU GENERAL PUBLIC LICENSE" in shipped[0].read_text()

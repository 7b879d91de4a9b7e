"""setup.py - the build step pyproject.toml cannot say: `make lib cli` into setuptools' build
directory, and the two files it makes (the vramtrace command and libvramtrace.so, side by side as
`run` looks for them) copied into the package as vramtrace/_bin/. The wheel is tagged for the
platform only (py3-none-linux_*): it holds no Python extension, so any Python 3 can run it. It
links the system's json-c, zstd, lz4 and elfutils, as the source build does."""
import os
import re
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(ROOT, "include", "vramtrace", "vramtrace.h")) as f:
        return re.search(r'#define VRAMTRACE_VERSION "([^"]+)"', f.read()).group(1)


class BuildWithMake(build_py):
    def run(self):
        super().run()
        build = os.path.abspath(os.path.join(self.get_finalized_command("build").build_temp, "vramtrace-make"))
        # what is missing, named in one line (never installed from here)
        env = dict(os.environ, VT_DEPS_BUILD_ONLY="1", VT_DEPS_NO_INSTALL="1")
        subprocess.check_call(["sh", os.path.join(ROOT, "tools", "setup-deps.sh")], cwd=ROOT, env=env)
        jobs = str(max(1, min(os.cpu_count() or 1, 8)))
        subprocess.check_call(["make", "-C", ROOT, "-j" + jobs, "NO_DEPS=1", "BUILD=" + build, "lib", "cli"])
        dest = os.path.join(self.build_lib, "vramtrace", "_bin")
        os.makedirs(dest, exist_ok=True)
        for name in ("vramtrace", "libvramtrace.so"):
            shutil.copy2(os.path.join(build, name), os.path.join(dest, name))
            os.chmod(os.path.join(dest, name), 0o755)


class PlatformWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        return ("py3", "none", super().get_tag()[2])


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(version=version(), cmdclass={"build_py": BuildWithMake, "bdist_wheel": PlatformWheel}, distclass=BinaryDistribution)

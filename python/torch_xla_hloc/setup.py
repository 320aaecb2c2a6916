"""Bundles libhloc_pjrt.so into the wheel: from $HLOC_PJRT_LIBRARY, else from
this checkout's Bazel output (`bazel build -c opt //api:hloc_pjrt` first).
Everything else is in pyproject.toml."""
import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
LIBRARY = "libhloc_pjrt.so"


def find_library() -> Path:
    explicit = os.environ.get("HLOC_PJRT_LIBRARY")
    if explicit:
        return Path(explicit)
    for config in (["-c", "opt"], []):
        try:
            bin_dir = subprocess.run(
                ["bazel", "info", *config, "bazel-bin"], cwd=REPO, check=True,
                capture_output=True, text=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            continue
        candidate = Path(bin_dir) / "api" / "pjrt" / LIBRARY
        if candidate.is_file():
            return candidate
    raise SystemExit(
        f"{LIBRARY} not found: run `bazel build -c opt //api:hloc_pjrt` in {REPO} "
        "or set HLOC_PJRT_LIBRARY to the library's path")


class BuildWithPlugin(build_py):
    def run(self):
        library = find_library()
        target = HERE / "torch_xla_hloc" / "lib"
        target.mkdir(exist_ok=True)
        shutil.copyfile(library, target / LIBRARY)
        super().run()


setup(cmdclass={"build_py": BuildWithPlugin})

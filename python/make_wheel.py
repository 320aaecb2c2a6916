"""Packs the built `hloc` package into a wheel that `pip install` accepts.

  make_wheel.py OUT_DIR PACKAGE_DIR

PACKAGE_DIR holds the package as Bazel builds it (__init__.py, jax.py,
_hloc.so). The version is the one the extension reports, and the tags are
this interpreter's (the extension is built for it), e.g.
hloc-0.1.0-cp311-cp311-linux_x86_64.whl. The extension links the LLVM,
protobuf, Abseil and oneDNN shared libraries of the machine it was built on,
so the wheel installs on machines of the same image.
"""

import base64
import hashlib
import os
import sys
import sysconfig
import zipfile


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    out_dir, package_dir = sys.argv[1], sys.argv[2]
    sys.path.insert(0, package_dir)
    import _hloc  # the built extension, for its version
    version = _hloc.__version__
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    dist_info = f"hloc-{version}.dist-info"
    files = {}
    for name in sorted(os.listdir(package_dir)):
        if name.endswith((".py", ".so")):
            with open(os.path.join(package_dir, name), "rb") as f:
                files[f"hloc/{name}"] = f.read()
    files[f"{dist_info}/METADATA"] = (
        "Metadata-Version: 2.1\n"
        "Name: hloc\n"
        f"Version: {version}\n"
        "Summary: An XLA-style HLO compiler: compile and run HLO modules and JAX functions\n"
        "Requires-Python: >=3.10\n"
        "Requires-Dist: numpy\n"
        "Provides-Extra: jax\n"
        "Requires-Dist: jax; extra == \"jax\"\n").encode()
    files[f"{dist_info}/WHEEL"] = (
        "Wheel-Version: 1.0\n"
        "Generator: hloc make_wheel.py\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {tag}-{tag}-{platform}\n").encode()
    files[f"{dist_info}/top_level.txt"] = b"hloc\n"
    record = [_record_line(name, data) for name, data in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = os.path.join(out_dir, f"hloc-{version}-{tag}-{tag}-{platform}.whl")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    print(wheel)


if __name__ == "__main__":
    main()

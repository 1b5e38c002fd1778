#!/usr/bin/env python3
"""Fetch and cache everything the kernel test VM needs from Debian.

The harness boots Debian's own kernel, so the kernel image, its headers (to
build the mock drivers out of tree) and three files of its source (gpio-sim,
which Debian does not build) come from the package registry, not from the
project tree. Everything lands in one cache directory
(``$PBUS_CACHE``, default ``~/.cache/parambus/kernel``):

    debs/                    the downloaded .deb files
    <abi>/root/              image + headers + kbuild, extracted (dpkg-deb -x)
    <abi>/src/               gpio-sim.c, gpiolib.h, irq_sim.c from linux-source
    <abi>/vmlinux            the uncompressed kernel (qemu boots it via PVH)
    <abi>/.ready             written last: the tree above is complete

Every step writes into a temporary name and renames it when complete, so an
interrupted run leaves nothing half-done behind, and the whole fetch holds an
flock on ``<cache>/.lock`` so that concurrent runs wait for each other instead
of racing. A warm cache costs one stat of ``.ready``.

This is also a command: ``tests/kernel/fetch.py`` fetches and prints the
cache directory.
"""

import fcntl
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

# The kernel the harness was verified with. This is the ONE place to change
# it; ENVIRONMENT.md and the drivers assume the 6.1 API.
KERNEL_ABI = "6.1.0-56"                 # Debian's ABI name
KERNEL_FLAVOUR = "amd64"
KERNEL_PKG_VERSION = "6.1.192-2"        # version of every package below
KERNEL_SERIES = "6.1"                   # linux-kbuild-<series>, linux-source-<series>

KERNEL_RELEASE = f"{KERNEL_ABI}-{KERNEL_FLAVOUR}"   # uname -r in the guest

PACKAGES = [
    f"linux-image-{KERNEL_RELEASE}",
    f"linux-headers-{KERNEL_RELEASE}",
    f"linux-headers-{KERNEL_ABI}-common",
    f"linux-kbuild-{KERNEL_SERIES}",
    f"linux-source-{KERNEL_SERIES}",
]

# Members of linux-source's tarball needed to build gpio-sim out of tree.
SOURCE_MEMBERS = [
    "drivers/gpio/gpio-sim.c",
    "drivers/gpio/gpiolib.h",
    "kernel/irq/irq_sim.c",
]

HOST_TOOLS = {  # command -> Debian package providing it
    "qemu-system-x86_64": "qemu-system-x86",
    "busybox": "busybox-static",
}


def cache_dir():
    return os.environ.get("PBUS_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "parambus", "kernel")


class FetchError(Exception):
    pass


def _progress(quiet, msg):
    if not quiet:
        print(f"kernel-harness: {msg}", file=sys.stderr, flush=True)


def _run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    if r.returncode != 0:
        raise FetchError(f"command failed ({r.returncode}): {' '.join(cmd)}\n"
                         f"{r.stdout.strip()}")
    return r.stdout


def _busybox_is_static(path):
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
        # A static ELF has no PT_INTERP; checking for the loader path string is
        # a cheap and sufficient test for Debian's busybox vs busybox-static.
        return head[:4] == b"\x7fELF" and b"ld-linux" not in head
    except OSError:
        return False


def ensure_host_tools(quiet):
    missing = []
    for cmd, pkg in HOST_TOOLS.items():
        path = shutil.which(cmd)
        if path is None or (cmd == "busybox" and not _busybox_is_static(path)):
            missing.append(pkg)
    for cmd in ("gcc", "make", "dpkg-deb", "apt-get", "tar"):
        if shutil.which(cmd) is None:
            raise FetchError(f"'{cmd}' is required on the host and is missing")
    if not missing:
        return
    if os.geteuid() != 0:
        raise FetchError("missing host packages: " + " ".join(missing) +
                         " (run: apt-get install --no-install-recommends "
                         + " ".join(missing) + ")")
    _progress(quiet, "installing host tools: " + " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        _run(["apt-get", "install", "-y", "--no-install-recommends"] + missing,
             env=env, stdin=subprocess.DEVNULL)
    except FetchError:
        _run(["apt-get", "update"], env=env, stdin=subprocess.DEVNULL)
        _run(["apt-get", "install", "-y", "--no-install-recommends"] + missing,
             env=env, stdin=subprocess.DEVNULL)


def _deb_name(pkg):
    arch = "all" if pkg.endswith("-common") or pkg.startswith("linux-source") \
        else "amd64"
    return f"{pkg}_{KERNEL_PKG_VERSION}_{arch}.deb"


def _download(debs, quiet):
    want = [p for p in PACKAGES if not os.path.exists(os.path.join(debs, _deb_name(p)))]
    if not want:
        return
    _progress(quiet, "downloading " + ", ".join(want) + f" ({KERNEL_PKG_VERSION})")
    tmp = tempfile.mkdtemp(prefix=".dl-", dir=debs)
    try:
        cmd = ["apt-get", "download", "-q"] + [f"{p}={KERNEL_PKG_VERSION}" for p in want]
        r = subprocess.run(cmd, cwd=tmp, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
        if r.returncode != 0 and os.geteuid() == 0:
            # Stale package lists are the usual cause: refresh once, retry.
            _progress(quiet, "apt-get download failed; running apt-get update and retrying")
            subprocess.run(["apt-get", "update", "-q"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            r = subprocess.run(cmd, cwd=tmp, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise FetchError(
                f"cannot download the pinned kernel {KERNEL_RELEASE} "
                f"(package version {KERNEL_PKG_VERSION}) from the Debian mirror; it may "
                f"have been superseded. Check `apt-cache policy linux-image-{KERNEL_FLAVOUR}` "
                f"and update KERNEL_* in tests/kernel/fetch.py (then re-verify the "
                f"harness).\napt-get said:\n{r.stdout.strip()}")
        for p in want:
            name = _deb_name(p)
            src = os.path.join(tmp, name)
            if not os.path.exists(src):
                raise FetchError(f"apt-get download did not produce {name}")
            os.rename(src, os.path.join(debs, name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _extract_vmlinux(vmlinuz, out):
    """Decompress the xz payload of a bzImage into an ELF vmlinux."""
    with open(vmlinuz, "rb") as f:
        data = f.read()
    magic = b"\xfd7zXZ\x00"
    pos = data.find(magic)
    while pos >= 0:
        try:
            d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
            elf = d.decompress(data[pos:])
            if elf[:4] == b"\x7fELF":
                with open(out, "wb") as f:
                    f.write(elf)
                return
        except lzma.LZMAError:
            pass
        pos = data.find(magic, pos + 1)
    raise FetchError(f"no xz-compressed ELF kernel found inside {vmlinuz}")


def _extract_sources(deb, dest):
    """Pull the few gpio-sim members out of linux-source's 139 MB tarball
    without storing the tarball: dpkg-deb | tar -O | tar --occurrence."""
    top = f"linux-source-{KERNEL_SERIES}"
    members = [f"{top}/{m}" for m in SOURCE_MEMBERS]
    # No pipefail: tar --occurrence stops reading once it has every member,
    # so the producers die of SIGPIPE; success is judged by the files.
    script = (
        f"dpkg-deb --fsys-tarfile '{deb}' "
        f"| tar -xO ./usr/src/{top}.tar.xz "
        f"| tar -xJ --occurrence=1 -C '{dest}' " + " ".join(f"'{m}'" for m in members))
    subprocess.run(["bash", "-c", script], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    for m in members:
        p = os.path.join(dest, m)
        if not os.path.exists(p):
            raise FetchError(f"{m} not found in linux-source-{KERNEL_SERIES}")
        shutil.move(p, os.path.join(dest, os.path.basename(m)))
    shutil.rmtree(os.path.join(dest, top), ignore_errors=True)


def _prepare_tree(cache, kdir, quiet):
    debs = os.path.join(cache, "debs")
    tmp = tempfile.mkdtemp(prefix=f".{KERNEL_RELEASE}-", dir=cache)
    try:
        root = os.path.join(tmp, "root")
        os.mkdir(root)
        for p in PACKAGES[:4]:
            _progress(quiet, f"extracting {p}")
            _run(["dpkg-deb", "-x", os.path.join(debs, _deb_name(p)), root])
        # The flavour's Makefile includes the common one by absolute path.
        mk = os.path.join(root, "usr/src", f"linux-headers-{KERNEL_RELEASE}", "Makefile")
        with open(mk) as f:
            text = f.read()
        text = text.replace("/usr/src/", os.path.join(kdir, "root/usr/src") + "/")
        with open(mk, "w") as f:
            f.write(text)
        _progress(quiet, "extracting vmlinux from vmlinuz")
        _extract_vmlinux(os.path.join(root, "boot", f"vmlinuz-{KERNEL_RELEASE}"),
                         os.path.join(tmp, "vmlinux"))
        _progress(quiet, "running depmod")
        _run(["busybox", "depmod", "-b", root, KERNEL_RELEASE])
        _progress(quiet, f"extracting gpio-sim sources from linux-source-{KERNEL_SERIES}")
        src = os.path.join(tmp, "src")
        os.mkdir(src)
        _extract_sources(os.path.join(debs, _deb_name(PACKAGES[4])), src)
        with open(os.path.join(tmp, ".ready"), "w") as f:
            f.write(f"{KERNEL_RELEASE} {KERNEL_PKG_VERSION}\n")
        os.chmod(tmp, 0o755)  # mkdtemp made it private
        shutil.rmtree(kdir, ignore_errors=True)
        os.rename(tmp, kdir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class Kernel:
    """Paths into a complete cached kernel tree."""

    def __init__(self, cache):
        self.cache = cache
        self.dir = os.path.join(cache, KERNEL_RELEASE)
        self.release = KERNEL_RELEASE
        self.root = os.path.join(self.dir, "root")
        self.vmlinux = os.path.join(self.dir, "vmlinux")
        self.src = os.path.join(self.dir, "src")
        self.headers = os.path.join(self.root, "usr/src", f"linux-headers-{KERNEL_RELEASE}")
        self.modules = os.path.join(self.root, "lib/modules", KERNEL_RELEASE)


def fetch(quiet=False):
    """Make the cache complete; return a Kernel. Raises FetchError."""
    cache = cache_dir()
    kdir = os.path.join(cache, KERNEL_RELEASE)
    ensure_host_tools(quiet)
    if os.path.exists(os.path.join(kdir, ".ready")):
        return Kernel(cache)
    os.makedirs(os.path.join(cache, "debs"), exist_ok=True)
    with open(os.path.join(cache, ".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _progress(quiet, f"waiting for another run to finish filling {cache}")
            fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(kdir, ".ready")):
            _progress(quiet, f"filling the kernel cache {cache} (one-time)")
            _download(os.path.join(cache, "debs"), quiet)
            _prepare_tree(cache, kdir, quiet)
            _progress(quiet, "kernel cache ready")
    return Kernel(cache)


def main():
    try:
        k = fetch(quiet=False)
    except FetchError as e:
        print(f"kernel-harness: error: {e}", file=sys.stderr)
        return 2
    print(k.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Build what goes into the kernel test VM: modules, test binaries, initramfs.

Outputs are content-addressed under ``<cache>/build/`` (a key is the hash of
every input and of the command), written to a temporary name and renamed,
so that a warm run compiles nothing, parallel runs from several trees share
results safely, and an interrupted build never leaves a half-written file
under a final name. The initramfs is rebuilt for every run (it is cheap)
in the run's private temporary directory.

Test binaries follow the contract of tests/kernel/ENVIRONMENT.md, section 1.
"""

import concurrent.futures
import glob
import hashlib
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

CFLAGS = ["-static", "-O2", "-std=c11", "-D_GNU_SOURCE", "-Wall"]
INCLUDES = ["-Iinclude", "-Itests/kernel/suite", "-Itests/kernel/lib"]
DEFAULT_TIMEOUT = 60

# Debian modules the guest loads (their dependencies are added from modules.dep).
DEBIAN_MODULES = ["configfs", "i2c-dev", "i2c-stub"]


class BuildError(Exception):
    pass


def _sha(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def _file_digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _atomic_copy(src, dst, mode=None):
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(dst))
    os.close(fd)
    shutil.copyfile(src, tmp)
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, dst)


# ---- modules ---------------------------------------------------------------

IRQ_SIM_FROM = "handle_simple_irq(irq_to_desc(irqnum))"
IRQ_SIM_TO = "generic_handle_irq(irqnum)"


def build_modules(kernel, progress):
    """Build gpio-sim and the mocks; return the directory holding the .ko files."""
    drivers = os.path.join(HERE, "drivers")
    inputs = sorted(glob.glob(os.path.join(drivers, "*.c")) + [os.path.join(drivers, "Kbuild")])
    srcs = [os.path.join(kernel.src, n) for n in ("gpio-sim.c", "gpiolib.h", "irq_sim.c")]
    key = _sha(kernel.release, *[os.path.basename(p) + _file_digest(p) for p in inputs + srcs])
    out = os.path.join(kernel.cache, "build", f"modules-{key}")
    if os.path.isdir(out):
        return out
    progress("building kernel modules (gpio-sim, pbus-mock-i2c/spi/pwm)")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".modules-", dir=os.path.dirname(out))
    try:
        for p in inputs:
            shutil.copy(p, tmp)
        shutil.copy(srcs[0], os.path.join(tmp, "gpio-sim-main.c"))
        shutil.copy(srcs[1], tmp)
        with open(srcs[2]) as f:
            irq_sim = f.read()
        # irq_to_desc() is not exported to modules; generic_handle_irq() does
        # the same lookup and dispatch for this simple-handler domain.
        if IRQ_SIM_FROM not in irq_sim:
            raise BuildError("irq_sim.c does not contain the expected "
                             f"'{IRQ_SIM_FROM}': the kernel source changed")
        with open(os.path.join(tmp, "irq_sim.c"), "w") as f:
            f.write(irq_sim.replace(IRQ_SIM_FROM, IRQ_SIM_TO))
        r = subprocess.run(["make", "-C", kernel.headers, f"M={tmp}", "-j",
                            str(os.cpu_count() or 2), "modules"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise BuildError("module build failed:\n" + r.stdout)
        kos = glob.glob(os.path.join(tmp, "*.ko"))
        final = tempfile.mkdtemp(prefix=".modules-out-", dir=os.path.dirname(out))
        for ko in kos:
            shutil.copy(ko, final)
        if len(kos) != 4:
            raise BuildError(f"expected 4 modules, got {[os.path.basename(k) for k in kos]}")
        os.chmod(final, 0o755)  # mkdtemp made it private
        try:
            os.rename(final, out)
        except OSError:  # a parallel run finished first
            shutil.rmtree(final, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


# ---- test binaries -----------------------------------------------------------

class Program:
    def __init__(self, name, main, kind):
        self.name = name          # binary name, e.g. test-gpio
        self.main = main          # path relative to REPO, or None for bins
        self.kind = kind          # "test", "bin" or "runner"
        self.extra = []           # extra sources/flags (relative paths, globs)
        self.timeout = DEFAULT_TIMEOUT
        self.path = None          # built binary
        self.error = None         # compiler output when the build failed


def _expand(items):
    out = []
    for it in items:
        if it.startswith("-"):
            out.append(it)
        elif any(c in it for c in "*?["):
            out.extend(sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, it))))
        else:
            out.append(it)
    return out


def read_build_file():
    """Parse tests/kernel/suite/BUILD (optional); see ENVIRONMENT.md section 1."""
    cfg = {"sources": {}, "bin": {}, "file": [], "timeout": {}, "java": {}}
    path = os.path.join(REPO, "tests/kernel/suite/BUILD")
    if not os.path.exists(path):
        return cfg
    with open(path) as f:
        for n, line in enumerate(f, 1):
            words = shlex.split(line, comments=True)
            if not words:
                continue
            if len(words) < 3 or words[0] not in ("sources", "bin", "file", "timeout", "java"):
                raise BuildError(f"{path}:{n}: expected 'sources|bin|file|timeout|java NAME ARGS...'")
            d, name, args = words[0], words[1], words[2:]
            if d == "sources":
                cfg["sources"].setdefault(name, []).extend(args)
            elif d == "bin":
                cfg["bin"][name] = args
            elif d == "file":
                cfg["file"].append((name, args[0]))
            elif d == "java":
                if not name.startswith("test-"):
                    raise BuildError(f"{path}:{n}: a Java test program's name starts with 'test-'")
                cfg["java"][name] = args
            else:
                cfg["timeout"][name] = float(args[0])
    return cfg


def discover(only=None):
    """The test programs to build and run, selftest first, then the suite."""
    cfg = read_build_file()
    progs = []
    for pattern, kind in (("tests/kernel/selftest/test-*.c", "test"),
                          ("tests/kernel/suite/test-*.c", "test")):
        for p in sorted(glob.glob(os.path.join(REPO, pattern))):
            name = os.path.basename(p)[:-2]
            if only and name not in only:
                continue
            prog = Program(name, os.path.relpath(p, REPO), kind)
            prog.extra = cfg["sources"].get("*", []) + cfg["sources"].get(name, [])
            prog.timeout = cfg["timeout"].get(name, cfg["timeout"].get("*", DEFAULT_TIMEOUT))
            progs.append(prog)
    for name, args in sorted(cfg["java"].items()):
        if only and name not in only:
            continue
        prog = Program(name, None, "java")
        prog.extra = args  # main class, then its arguments
        prog.timeout = cfg["timeout"].get(name, cfg["timeout"].get("*", DEFAULT_TIMEOUT))
        progs.append(prog)
    progs.sort(key=lambda p: (not p.main or "/selftest/" not in p.main, p.name))
    if only:
        missing = set(only) - {p.name for p in progs}
        if missing:
            raise BuildError("no such test binary: " + ", ".join(sorted(missing)))
    bins = []
    for name, args in cfg["bin"].items():
        b = Program(name, None, "bin")
        b.extra = args
        bins.append(b)
    return progs, bins, cfg["file"]


def _compile_cmd(prog):
    if prog.kind == "runner":
        return ["gcc", "-static", "-O2", "-std=c11", "-D_GNU_SOURCE", "-Wall",
                prog.main]
    srcs = [prog.main] if prog.main else []
    if prog.kind == "test":
        srcs += _expand(["lib/hw/*.c", "tests/kernel/suite/common/*.c", "tests/kernel/lib/*.c"])
    return ["gcc"] + CFLAGS + INCLUDES + srcs + _expand(prog.extra)


def _headers_digest():
    """Every header a test can include, hashed once per run."""
    files = []
    # Also the programs' own headers (bins such as pbusd are built from
    # daemon/, hwd/, common/, ...): a header-only change must rebuild them.
    for pattern in ("include/**/*.h", "lib/**/*.h", "tests/kernel/suite/**/*.h",
                    "tests/kernel/lib/*.h", "common/*.h", "daemon/*.h", "hwd/*.h",
                    "pbus-scpi/*.h", "scpi/*.h", "tools/*.h"):
        files += glob.glob(os.path.join(REPO, pattern), recursive=True)
    return _sha(*[os.path.relpath(p, REPO) + _file_digest(p) for p in sorted(files)])


def _plan_one(prog, cache, hdr):
    """Set prog.path to the cached binary; return the compile job if not cached."""
    cmd = _compile_cmd(prog)
    inputs = [a for a in cmd[1:] if not a.startswith("-")]
    try:
        key = _sha(hdr if prog.kind != "runner" else "", *cmd, *[_file_digest(os.path.join(REPO, a)) for a in inputs])
    except OSError as e:
        prog.error = f"missing input: {e}"
        return None
    out = os.path.join(cache, "build", "bin", f"{prog.name}-{key}")
    if os.path.exists(out):
        os.utime(out)  # keeps it out of the pruning below
        prog.path = out
        return None
    return (prog, cmd, out)


def _compile(job):
    prog, cmd, out = job
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(out))
    os.close(fd)
    r = subprocess.run(cmd + ["-o", tmp], cwd=REPO, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        # gcc removes its output when it fails; the compile error is the news.
        if os.path.exists(tmp):
            os.unlink(tmp)
        prog.error = f"$ {' '.join(cmd)}\n{r.stdout}"
        return
    os.replace(tmp, out)
    prog.path = out


def build_programs(progs, cache, progress):
    """Compile in parallel what is not cached; failed builds set prog.error."""
    bindir = os.path.join(cache, "build", "bin")
    os.makedirs(bindir, exist_ok=True)
    hdr = _headers_digest()
    jobs = [j for j in (_plan_one(p, cache, hdr) for p in progs if p.kind != "java") if j]
    if jobs:
        progress(f"compiling {', '.join(j[0].name for j in jobs)}")
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
            list(ex.map(_compile, jobs))
    # Prune binaries nobody used for two weeks.
    limit = time.time() - 14 * 86400
    for p in glob.glob(os.path.join(bindir, "*")):
        try:
            if os.stat(p).st_mtime < limit:
                os.unlink(p)
        except OSError:
            pass


# ---- Java in the guest -----------------------------------------------------
#
# The guest runs Java test programs (BUILD: 'java test-NAME CLASS ARGS...') on
# a runtime cut from the host's JDK by jlink (the modules of JRE_MODULES), with the
# JDK's own class-data-sharing archive (the JVM starts about twice as fast
# under TCG with it), and the glibc libraries it links, copied from the host
# to the same paths. The classes are the binding's main sources and the
# guest tests of tests/kernel/java, compiled by javac into one jar. Both are
# content-addressed like everything else here.

# java.management and jdk.management: the tests count allocated bytes and threads.
JRE_MODULES = ["java.base", "jdk.net", "java.management", "jdk.management"]
GUEST_JRE = "/opt/jre"
GUEST_JAR = "/opt/parambus/parambus-vm.jar"
# Directories or single files; PsuGpioBridge is the Java hardware example, run by ExampleTest;
# bench/java-hw is the Java side of bench/run-java-hw.py (compiled here too, so that every
# kernel run checks it still builds).
JAVA_SOURCES = ["java/src/main/java", "tests/kernel/java", "examples/psu/java/PsuGpioBridge.java",
                "bench/java-hw"]


def java_home():
    r = subprocess.run([os.path.join(REPO, "scripts", "java-env")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise BuildError(r.stderr.strip() or "scripts/java-env found no JDK")
    return r.stdout.strip()


def _ldd(path):
    """The host paths of the shared libraries path needs (and the loader)."""
    r = subprocess.run(["ldd", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = []
    for line in r.stdout.splitlines():
        line = line.strip()
        if "=>" in line:
            target = line.split("=>", 1)[1].split("(")[0].strip()
            if target.startswith("/"):
                out.append(target)
        elif line.startswith("/"):
            out.append(line.split("(")[0].strip())
    return out


def build_jre(cache, progress):
    """A jlinked runtime plus the host libraries it needs, under <key>/{jre,sysroot}."""
    home = java_home()
    with open(os.path.join(home, "release"), "rb") as f:
        release = f.read()
    flags = ["--strip-debug", "--no-header-files", "--no-man-pages", "--generate-cds-archive"]
    key = _sha("jre", release, *JRE_MODULES, *flags)
    out = os.path.join(cache, "build", f"jre-{key}")
    if os.path.isdir(out):
        return out
    progress(f"cutting a Java runtime for the guest from {home} (jlink)")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".jre-", dir=os.path.dirname(out))
    try:
        jre = os.path.join(tmp, "jre")
        r = subprocess.run([os.path.join(home, "bin", "jlink"), "--add-modules", ",".join(JRE_MODULES),
                            *flags, "--output", jre],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0 or not os.path.exists(os.path.join(jre, "bin", "java")):
            raise BuildError("jlink failed:\n" + r.stdout)
        # Only the compressed-oops archive is used with a heap below 32 GiB.
        nocoops = os.path.join(jre, "lib", "server", "classes_nocoops.jsa")
        if os.path.exists(nocoops):
            os.unlink(nocoops)
        libs = set()
        for dirpath, _, names in os.walk(jre):
            for n in names:
                p = os.path.join(dirpath, n)
                if n.endswith(".so") or p == os.path.join(jre, "bin", "java"):
                    libs.update(l for l in _ldd(p) if not l.startswith(jre))
        if not any("ld-linux" in l for l in libs):
            raise BuildError(f"ldd found no dynamic loader for {jre}/bin/java")
        for lib in sorted(libs):
            dst = os.path.join(tmp, "sysroot", lib.lstrip("/"))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.realpath(lib), dst)
            os.chmod(dst, 0o755)  # the loader must be executable
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, out)
        except OSError:  # a parallel run finished first
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def build_java_jar(cache, progress, extra_sources=()):
    """javac the binding and the guest tests (and extra_sources: directories
    relative to the repository, e.g. a benchmark's) into one jar; its path."""
    home = java_home()
    srcs = []
    for d in JAVA_SOURCES + list(extra_sources):
        if d.endswith(".java"):
            srcs.append(os.path.join(REPO, d))
            continue
        for dirpath, _, names in os.walk(os.path.join(REPO, d)):
            srcs += [os.path.join(dirpath, n) for n in names
                     if n.endswith(".java") and n != "module-info.java"]
    srcs.sort()
    with open(os.path.join(home, "release"), "rb") as f:
        release = f.read()
    key = _sha("jar", release, *[os.path.relpath(p, REPO) + _file_digest(p) for p in srcs])
    out = os.path.join(cache, "build", "bin", f"parambus-vm-{key}.jar")
    if os.path.exists(out):
        os.utime(out)
        return out
    progress(f"compiling {len(srcs)} Java sources for the guest")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".javac-", dir=os.path.dirname(out))
    try:
        classes = os.path.join(tmp, "classes")
        r = subprocess.run([os.path.join(home, "bin", "javac"), "--release", "22", "-Xlint:all",
                            "-Xlint:-restricted", "-Werror", "-d", classes, *srcs],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise BuildError("javac failed:\n" + r.stdout)
        jar = os.path.join(tmp, "out.jar")
        r = subprocess.run([os.path.join(home, "bin", "jar"), "--create", "--file", jar,
                            "-C", classes, "."],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise BuildError("jar failed:\n" + r.stdout)
        os.chmod(jar, 0o644)
        os.replace(jar, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def java_launcher(prog):
    """The guest's /suite/bin/NAME of a Java test program."""
    args = " ".join(shlex.quote(a) for a in prog.extra)
    return (f"#!/bin/sh\n# {prog.name}: a Java test program (tests/kernel/suite/BUILD)\n"
            f"exec {GUEST_JRE}/bin/java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "
            f"--enable-native-access=ALL-UNNAMED -cp {GUEST_JAR} {args}\n").encode()


# ---- initramfs -------------------------------------------------------------

class Cpio:
    """A minimal writer of the kernel's initramfs format (cpio 'newc')."""

    def __init__(self, f):
        self.f = f
        self.ino = 1000
        self.seen = set()

    def _entry(self, name, mode, data=b"", rdev=(0, 0)):
        self.ino += 1
        name_b = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{v:08x}" for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1],
            len(name_b), 0))
        self.f.write(hdr.encode() + name_b)
        self.f.write(b"\0" * ((4 - (110 + len(name_b)) % 4) % 4))
        self.f.write(data)
        self.f.write(b"\0" * ((4 - len(data) % 4) % 4))

    def dir(self, path):
        parts = path.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i])
            if p and p not in self.seen:
                self.seen.add(p)
                self._entry(p, stat.S_IFDIR | 0o755)

    def file(self, path, src=None, data=None, mode=0o644):
        path = path.strip("/")
        self.dir(os.path.dirname(path))
        if data is None:
            with open(src, "rb") as f:
                data = f.read()
        self._entry(path, stat.S_IFREG | mode, data)

    def symlink(self, path, target):
        path = path.strip("/")
        self.dir(os.path.dirname(path))
        self._entry(path, stat.S_IFLNK | 0o777, target.encode())

    def chardev(self, path, major, minor):
        path = path.strip("/")
        self.dir(os.path.dirname(path))
        self._entry(path, stat.S_IFCHR | 0o600, rdev=(major, minor))

    def close(self):
        self._entry("TRAILER!!!", 0)


def _module_closure(kernel):
    deps = {}
    with open(os.path.join(kernel.modules, "modules.dep")) as f:
        for line in f:
            mod, _, rest = line.partition(":")
            deps[mod.strip()] = rest.split()
    by_name = {os.path.basename(m)[:-3].replace("_", "-"): m for m in deps}
    want, todo = set(), [by_name[n.replace("_", "-")] for n in DEBIAN_MODULES]
    while todo:
        m = todo.pop()
        if m not in want:
            want.add(m)
            todo.extend(deps.get(m, []))
    return sorted(want)


def build_initramfs(kernel, moddir, programs, bins, files, runner, out, java=None):
    """Write the initramfs to out; programs must be built.

    java: (jre directory of build_jre, jar of build_java_jar) when a Java
    test program is among programs."""
    stage = tempfile.mkdtemp(prefix="modstage-", dir=os.path.dirname(out))
    try:
        mroot = os.path.join(stage, "lib", "modules", kernel.release)
        for rel in _module_closure(kernel):
            dst = os.path.join(mroot, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(os.path.join(kernel.modules, rel), dst)
        os.makedirs(os.path.join(mroot, "extra"))
        for ko in glob.glob(os.path.join(moddir, "*.ko")):
            shutil.copy(ko, os.path.join(mroot, "extra"))
        for n in ("modules.builtin", "modules.builtin.modinfo", "modules.order"):
            shutil.copy(os.path.join(kernel.modules, n), mroot)
        r = subprocess.run(["busybox", "depmod", "-b", stage, kernel.release],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise BuildError("depmod failed: " + r.stdout)

        with open(out, "wb") as f:
            c = Cpio(f)
            for d in ("dev", "proc", "sys", "tmp", "run", "root", "etc", "sbin",
                      "usr/bin", "usr/sbin", "suite/bin"):
                c.dir(d)
            c.chardev("dev/console", 5, 1)
            c.chardev("dev/null", 1, 3)
            c.file("bin/busybox", shutil.which("busybox"), mode=0o755)
            c.symlink("bin/sh", "busybox")
            c.file("init", os.path.join(HERE, "guest", "init"), mode=0o755)
            c.file("usr/bin/pbus-guest-run", runner.path, mode=0o755)
            c.file("etc/passwd", data=b"root:x:0:0:root:/root:/bin/sh\n")
            c.file("etc/group", data=b"root:x:0:\n")
            for dirpath, _, names in os.walk(stage):
                for n in sorted(names):
                    p = os.path.join(dirpath, n)
                    c.file(os.path.relpath(p, stage), p)
            plan = []
            if java:
                jre, jar = java
                for root, prefix in ((os.path.join(jre, "jre"), GUEST_JRE),
                                     (os.path.join(jre, "sysroot"), "/")):
                    for dirpath, _, names in os.walk(root):
                        for n in sorted(names):
                            p = os.path.join(dirpath, n)
                            guest = os.path.join(prefix, os.path.relpath(p, root))
                            c.file(guest, p, mode=os.stat(p).st_mode & 0o777)
                c.file(GUEST_JAR, jar)
            for p in programs:
                if p.kind == "java":
                    c.file(f"suite/bin/{p.name}", data=java_launcher(p), mode=0o755)
                else:
                    c.file(f"suite/bin/{p.name}", p.path, mode=0o755)
                plan.append(f"{p.name} {p.timeout:g}\n")
            c.file("suite/plan", data="".join(plan).encode())
            for b in bins:
                if b.path:
                    c.file(f"usr/bin/{b.name}", b.path, mode=0o755)
            for guest, host in files:
                # A build output (a compiled schema) may be missing when
                # the host tree was not built; the test that needs it says so.
                if not os.path.exists(os.path.join(REPO, host)):
                    print(f"kernel-harness: warning: {host} does not exist; not copied to /{guest}",
                          file=sys.stderr)
                    continue
                c.file(guest, os.path.join(REPO, host))
            c.close()
    finally:
        shutil.rmtree(stage, ignore_errors=True)

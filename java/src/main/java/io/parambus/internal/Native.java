package io.parambus.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The C library's system-call wrappers that the table needs, through the FFM
 * {@link Linker}: no JNI and no native code of the project's own. Every function
 * here is a thin wrapper that returns the result or throws {@link Errno} with the
 * C {@code errno}; callers turn that into a {@code ParambusException} naming what
 * failed.
 *
 * <p>Architecture: only what differs between 64-bit Linux architectures is in
 * {@link #ARCH} (system-call numbers, {@code O_NOFOLLOW}); {@code statx}'s struct is
 * the same everywhere, and {@code struct shmid_ds} and {@code struct passwd} have
 * one layout on every LP64 Linux (glibc), checked against the C compiler by
 * {@code NativeLayoutTest}.
 *
 * <p>Threads: every function may be called from any thread.
 */
@SuppressWarnings("restricted") // the FFM API's restricted methods: this class is the binding's native boundary
public final class Native {
    private Native() {
    }

    /** errno values (the same on x86-64, arm64 and riscv64: asm-generic). */
    public static final int EPERM = 1, ENOENT = 2, ESRCH = 3, EINTR = 4, EAGAIN = 11, ENOMEM = 12,
            EACCES = 13, EFAULT = 14, EBUSY = 16, EINVAL = 22, ENOSYS = 38, ELOOP = 40, ETIMEDOUT = 110;

    /** A failed call's errno, thrown by the wrappers below. */
    public static final class Errno extends Exception {
        private static final long serialVersionUID = 1L;
        /** The C errno value. */
        public final int code;

        Errno(int code, String call) {
            super(call + ": " + name(code), null, false, false);
            this.code = code;
        }

        /** The errno's name, e.g. {@code "ENOENT"}. */
        public String errnoName() {
            return name(code);
        }
    }

    /** The symbolic name of an errno value ({@code "E" + number} for the rare others). */
    public static String name(int errno) {
        return switch (errno) {
            case EPERM -> "EPERM";
            case ENOENT -> "ENOENT";
            case ESRCH -> "ESRCH";
            case EINTR -> "EINTR";
            case 5 -> "EIO";
            case 9 -> "EBADF";
            case EAGAIN -> "EAGAIN";
            case ENOMEM -> "ENOMEM";
            case EACCES -> "EACCES";
            case EFAULT -> "EFAULT";
            case EBUSY -> "EBUSY";
            case 17 -> "EEXIST";
            case 19 -> "ENODEV";
            case 20 -> "ENOTDIR";
            case 21 -> "EISDIR";
            case EINVAL -> "EINVAL";
            case 23 -> "ENFILE";
            case 24 -> "EMFILE";
            case 28 -> "ENOSPC";
            case 34 -> "ERANGE";
            case 36 -> "ENAMETOOLONG";
            case ENOSYS -> "ENOSYS";
            case ELOOP -> "ELOOP";
            case 6 -> "ENXIO";
            case 25 -> "ENOTTY";
            case 32 -> "EPIPE";
            case 61 -> "ENODATA";
            case 71 -> "EPROTO";
            case 74 -> "EBADMSG";
            case 95 -> "EOPNOTSUPP";
            case 90 -> "EMSGSIZE"; // bus: I2C and SPI
            case 108 -> "ESHUTDOWN"; // bus: SPI
            case 121 -> "EREMOTEIO";
            case 75 -> "EOVERFLOW";
            case ETIMEDOUT -> "ETIMEDOUT";
            default -> "E" + errno;
        };
    }

    /** What differs between the 64-bit Linux architectures this binding runs on. */
    public record Arch(String name, long sysFutex, long sysMembarrier, int oNoFollow) {
    }

    /** This machine's {@link Arch}, or {@code null} on an architecture not known here. */
    public static final Arch ARCH = switch (System.getProperty("os.arch", "")) {
        case "amd64", "x86_64" -> new Arch("x86-64", 202, 324, 0x20000);
        case "aarch64" -> new Arch("arm64", 98, 283, 0x8000);
        case "riscv64" -> new Arch("riscv64", 98, 283, 0x20000);
        default -> null;
    };

    /** Whether this JVM can use the table at all: Linux, a known 64-bit architecture, little-endian. */
    public static String unsupportedReason() {
        if (!System.getProperty("os.name", "").equals("Linux")) {
            return "parambus needs Linux (futexes, /dev/shm, System V shared memory)";
        }
        if (ARCH == null) {
            return "architecture " + System.getProperty("os.arch") + " is not one parambus for Java knows";
        }
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            return "the segment is little-endian and is mapped in place: a little-endian host is required";
        }
        return null;
    }

    public static final int O_RDONLY = 0, O_WRONLY = 1, O_RDWR = 2, O_NOCTTY = 0x100, O_NONBLOCK = 0x800,
            O_CLOEXEC = 0x80000;
    public static final int EPOLL_CLOEXEC = 0x80000, EPOLL_CTL_ADD = 1, EPOLL_CTL_DEL = 2, EPOLL_CTL_MOD = 3;
    public static final int EPOLLIN = 0x1, EPOLLPRI = 0x2, EPOLLOUT = 0x4, EPOLLERR = 0x8, EPOLLHUP = 0x10;
    public static final int POLLIN = 0x1, POLLPRI = 0x2, POLLOUT = 0x4, POLLERR = 0x8, POLLHUP = 0x10, POLLNVAL = 0x20;
    public static final int EFD_CLOEXEC = 0x80000, EFD_NONBLOCK = 0x800;
    /** {@code struct epoll_event}: packed on x86-64 (12 bytes), naturally aligned elsewhere (16). */
    public static final long EPOLL_EVENT_SIZE = System.getProperty("os.arch", "").matches("amd64|x86_64") ? 12 : 16;
    /** Offset of {@code epoll_event.data} (after the 32-bit {@code events}). */
    public static final long EPOLL_EVENT_DATA = EPOLL_EVENT_SIZE == 12 ? 4 : 8;
    /** {@code struct pollfd}: {@code int fd; short events; short revents;}. */
    public static final long POLLFD_SIZE = 8, POLLFD_EVENTS = 4, POLLFD_REVENTS = 6;
    public static final int PROT_READ = 1, PROT_WRITE = 2, MAP_SHARED = 1;
    public static final int IPC_STAT = 2;
    public static final int CLOCK_REALTIME = 0, CLOCK_MONOTONIC = 1;
    public static final int FUTEX_WAIT_BITSET = 9, FUTEX_WAKE = 1, FUTEX_BITSET_MATCH_ANY = -1;
    public static final int MEMBARRIER_CMD_GLOBAL = 1, MEMBARRIER_CMD_GLOBAL_EXPEDITED = 2;
    public static final int S_IFMT = 0xF000, S_IFREG = 0x8000, S_IWOTH = 0x2;
    private static final int AT_EMPTY_PATH = 0x1000, STATX_BASIC_STATS = 0x7ff;

    /** Offsets in {@code struct statx} (the same on every architecture). */
    public static final long STATX_SIZE = 256, STATX_UID = 20, STATX_MODE = 28, STATX_FILE_SIZE = 40;
    /** Offsets in glibc's {@code struct shmid_ds} on LP64 Linux. */
    public static final long SHMID_DS_SIZE = 112, SHMID_DS_CUID = 12, SHMID_DS_SEGSZ = 48, SHMID_DS_CPID = 80;
    /** Offset of {@code pw_uid} in glibc's {@code struct passwd} on LP64 Linux (after two pointers). */
    public static final long PASSWD_UID = 16;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static MethodHandle function(String name, FunctionDescriptor fd, Linker.Option... options) {
        MemorySegment address = LIBC.find(name)
                .orElseThrow(() -> new UnsatisfiedLinkError("the C library has no " + name + "()"));
        return LINKER.downcallHandle(address, fd, options);
    }

    private static final MethodHandle OPEN = function("open",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
            Linker.Option.firstVariadicArg(2), CAPTURE_ERRNO);
    private static final MethodHandle CLOSE = function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle STATX = function("statx",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS), CAPTURE_ERRNO);
    private static final MethodHandle MMAP = function("mmap",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG),
            CAPTURE_ERRNO);
    private static final MethodHandle MUNMAP = function("munmap",
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle SHMAT = function("shmat",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle SHMDT = function("shmdt", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
    private static final MethodHandle SHMCTL = function("shmctl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS), CAPTURE_ERRNO);
    private static final MethodHandle SHMGET = function("shmget",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle CLOCK_GETTIME = function("clock_gettime",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS), Linker.Option.critical(false));
    private static final MethodHandle GETTID = function("gettid", FunctionDescriptor.of(JAVA_INT));
    private static final MethodHandle GETEUID = function("geteuid", FunctionDescriptor.of(JAVA_INT));
    private static final MethodHandle GETPWNAM = function("getpwnam", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle KILL = function("kill",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
    /* syscall(2) is variadic: every argument is passed as a long (what it reads). */
    private static final FunctionDescriptor SYSCALL6 = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle SYSCALL = function("syscall", SYSCALL6,
            Linker.Option.firstVariadicArg(1));
    private static final MethodHandle SYSCALL_ERRNO = function("syscall", SYSCALL6,
            Linker.Option.firstVariadicArg(1), CAPTURE_ERRNO);

    /* The calls of the hardware layer (io.parambus.hw): every one takes the caller's
     * errno buffer (one of captureLayout(), kept by the device object) so that a call
     * allocates nothing, and returns the result or -errno. */
    private static final MethodHandle IOCTL_PTR = function("ioctl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), Linker.Option.firstVariadicArg(2),
            CAPTURE_ERRNO);
    private static final MethodHandle IOCTL_LONG = function("ioctl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG), Linker.Option.firstVariadicArg(2),
            CAPTURE_ERRNO);
    private static final MethodHandle READ = function("read",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), CAPTURE_ERRNO);
    private static final MethodHandle WRITE = function("write",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), CAPTURE_ERRNO);
    private static final MethodHandle POLL = function("poll",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle EPOLL_CREATE1 = function("epoll_create1",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle EPOLL_CTL = function("epoll_ctl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS), CAPTURE_ERRNO);
    private static final MethodHandle EPOLL_WAIT = function("epoll_wait",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle EVENTFD = function("eventfd",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle STRERROR = function("strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private static RuntimeException unexpected(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    private static int errno(MemorySegment capture) {
        return (int) ERRNO.get(capture, 0L);
    }

    /** {@code open(path, flags)}: the descriptor. */
    public static int open(String path, int flags) throws Errno {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment capture = a.allocate(CAPTURE_LAYOUT);
            int fd = (int) OPEN.invokeExact(capture, a.allocateFrom(path), flags, 0);
            if (fd < 0) {
                throw new Errno(errno(capture), "open");
            }
            return fd;
        } catch (Errno e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code close(fd)}, errors ignored (as every destructor's). */
    public static void close(int fd) {
        try {
            int r = (int) CLOSE.invokeExact(fd);
            assert r == 0 || r == -1;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** What {@link #fstat} reports of an opened file. */
    public record FileStatus(int mode, int uid, long size) {
    }

    /** {@code statx(fd, "", AT_EMPTY_PATH)}: the opened descriptor itself, never a name. */
    public static FileStatus fstat(int fd) throws Errno {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment capture = a.allocate(CAPTURE_LAYOUT);
            MemorySegment buf = a.allocate(STATX_SIZE, 8);
            int r = (int) STATX.invokeExact(capture, fd, a.allocateFrom(""), AT_EMPTY_PATH, STATX_BASIC_STATS, buf);
            if (r < 0) {
                throw new Errno(errno(capture), "statx");
            }
            return new FileStatus(Short.toUnsignedInt(buf.get(JAVA_SHORT, STATX_MODE)), buf.get(JAVA_INT, STATX_UID),
                    buf.get(JAVA_LONG, STATX_FILE_SIZE));
        } catch (Errno e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code mmap(NULL, size, prot, MAP_SHARED, fd, 0)}: the address. */
    public static long mmapShared(long size, int prot, int fd) throws Errno {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment capture = a.allocate(CAPTURE_LAYOUT);
            long addr = (long) MMAP.invokeExact(capture, 0L, size, prot, MAP_SHARED, fd, 0L);
            if (addr == -1L) {
                throw new Errno(errno(capture), "mmap");
            }
            return addr;
        } catch (Errno e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code munmap(addr, size)}. */
    public static void munmap(long addr, long size) {
        try {
            int r = (int) MUNMAP.invokeExact(addr, size);
            assert r == 0;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code shmat(id, NULL, 0)} (read-write): the address. */
    public static long shmat(int id) throws Errno {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment capture = a.allocate(CAPTURE_LAYOUT);
            long addr = (long) SHMAT.invokeExact(capture, id, 0L, 0);
            if (addr == -1L) {
                throw new Errno(errno(capture), "shmat");
            }
            return addr;
        } catch (Errno e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code shmdt(addr)}. */
    public static void shmdt(long addr) {
        try {
            int r = (int) SHMDT.invokeExact(addr);
            assert r == 0 || r == -1;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** What {@code shmctl(IPC_STAT)} reports of a System V segment that is relevant here. */
    public record ShmStatus(int creatorUid, int creatorPid, long size) {
    }

    /** {@code shmctl(id, IPC_STAT)}. */
    public static ShmStatus shmStat(int id) throws Errno {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment capture = a.allocate(CAPTURE_LAYOUT);
            MemorySegment buf = a.allocate(SHMID_DS_SIZE, 8);
            int r = (int) SHMCTL.invokeExact(capture, id, IPC_STAT, buf);
            if (r < 0) {
                throw new Errno(errno(capture), "shmctl");
            }
            return new ShmStatus(buf.get(JAVA_INT, SHMID_DS_CUID), buf.get(JAVA_INT, SHMID_DS_CPID),
                    buf.get(JAVA_LONG, SHMID_DS_SEGSZ));
        } catch (Errno e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code shmctl(id, IPC_RMID, NULL)}: mark a segment for removal. */
    public static void shmRemove(int id) throws Errno {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment capture = a.allocate(CAPTURE_LAYOUT);
            int r = (int) SHMCTL.invokeExact(capture, id, 0, MemorySegment.NULL);
            if (r < 0) {
                throw new Errno(errno(capture), "shmctl");
            }
        } catch (Errno e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code shmget(IPC_PRIVATE, size, IPC_CREAT | mode)}: a new segment's id (tests install images with it). */
    public static int shmCreatePrivate(long size, int mode) throws Errno {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment capture = a.allocate(CAPTURE_LAYOUT);
            int id = (int) SHMGET.invokeExact(capture, 0, size, 0x200 | mode);
            if (id < 0) {
                throw new Errno(errno(capture), "shmget");
            }
            return id;
        } catch (Errno e) {
            throw e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /**
     * {@code clock_gettime(clock)} in ns, into {@code buf} (16 bytes of native memory that
     * the caller keeps, so that the call allocates nothing).
     */
    public static long clockNs(int clock, MemorySegment buf) {
        try {
            int r = (int) CLOCK_GETTIME.invokeExact(clock, buf);
            assert r == 0;
            return buf.get(JAVA_LONG, 0) * 1_000_000_000L + buf.get(JAVA_LONG, 8);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** The calling OS thread's id ({@code gettid()}). */
    public static int gettid() {
        try {
            return (int) GETTID.invokeExact();
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** The process's effective uid. */
    public static int geteuid() {
        try {
            return (int) GETEUID.invokeExact();
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** The uid of user {@code name} ({@code getpwnam}), or -1 if there is none. */
    public static synchronized long uidOfUser(String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pw = (MemorySegment) GETPWNAM.invokeExact(a.allocateFrom(name));
            if (pw.address() == 0) {
                return -1;
            }
            return Integer.toUnsignedLong(pw.reinterpret(PASSWD_UID + 4).get(JAVA_INT, PASSWD_UID));
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code kill(pid, 0)}: 0, or the errno. */
    public static int killZero(int pid) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment capture = a.allocate(CAPTURE_LAYOUT);
            int r = (int) KILL.invokeExact(capture, pid, 0);
            return r == 0 ? 0 : errno(capture);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /**
     * {@code FUTEX_WAIT_BITSET} on the shared (not private) 32-bit word at {@code address},
     * while it holds {@code expected}, until the absolute CLOCK_MONOTONIC time
     * {@code deadlineNs}. Returns 0 (woken, or the word had changed: EAGAIN), or
     * {@link #ETIMEDOUT}, {@link #EINTR}, or another errno.
     */
    public static int futexWait(long address, int expected, long deadlineNs) {
        try (Arena a = Arena.ofConfined()) {
            return futexWait(address, expected, deadlineNs, a.allocate(16, 8), a.allocate(CAPTURE_LAYOUT));
        }
    }

    /** The layout of the call state {@link #futexWait(long, int, long, MemorySegment, MemorySegment)} needs. */
    public static StructLayout captureLayout() {
        return CAPTURE_LAYOUT;
    }

    /**
     * {@link #futexWait(long, int, long)} with the caller's native buffers (16 bytes for the
     * timeout, and one of {@link #captureLayout()}), so that the call allocates nothing.
     */
    public static int futexWait(long address, int expected, long deadlineNs, MemorySegment timespec,
            MemorySegment capture) {
        try {
            timespec.set(JAVA_LONG, 0, deadlineNs / 1_000_000_000L);
            timespec.set(JAVA_LONG, 8, deadlineNs % 1_000_000_000L);
            long r = (long) SYSCALL_ERRNO.invokeExact(capture, ARCH.sysFutex(), address, (long) FUTEX_WAIT_BITSET,
                    Integer.toUnsignedLong(expected), timespec.address(), 0L, (long) FUTEX_BITSET_MATCH_ANY & 0xFFFFFFFFL);
            if (r == 0) {
                return 0;
            }
            int e = errno(capture);
            return e == EAGAIN ? 0 : e;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code FUTEX_WAKE} of every waiter on the shared word at {@code address}; allocates nothing. */
    public static void futexWakeAll(long address) {
        try {
            long r = (long) SYSCALL.invokeExact(ARCH.sysFutex(), address, (long) FUTEX_WAKE, (long) Integer.MAX_VALUE,
                    0L, 0L, 0L);
            assert r >= -1;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code membarrier(cmd, 0, 0)}: 0, or the errno. */
    public static int membarrier(int cmd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment capture = a.allocate(CAPTURE_LAYOUT);
            long r = (long) SYSCALL_ERRNO.invokeExact(capture, ARCH.sysMembarrier(), (long) cmd, 0L, 0L, 0L, 0L, 0L);
            return r == 0 ? 0 : errno(capture);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /**
     * The global barrier of the asymmetric handshakes (docs/segment-format.md §4.3, §5.1):
     * {@code MEMBARRIER_CMD_GLOBAL_EXPEDITED}, or if that fails {@code MEMBARRIER_CMD_GLOBAL}.
     * 0, or the errno of the second.
     */
    public static int globalBarrier() {
        int r = membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED);
        return r == 0 ? 0 : membarrier(MEMBARRIER_CMD_GLOBAL);
    }

    // ---- the hardware layer's calls: result or -errno, nothing allocated ----

    private static int result(long r, MemorySegment capture) {
        return r < 0 ? -errno(capture) : (int) r;
    }

    /** {@code ioctl(fd, request, arg)} with a pointer argument: the result, or -errno. */
    public static int ioctl(int fd, long request, MemorySegment arg, MemorySegment capture) {
        try {
            return result((int) IOCTL_PTR.invokeExact(capture, fd, request, arg), capture);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code ioctl(fd, request, arg)} with an integer argument: the result, or -errno. */
    public static int ioctl(int fd, long request, long arg, MemorySegment capture) {
        try {
            return result((int) IOCTL_LONG.invokeExact(capture, fd, request, arg), capture);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code read(fd, buf, len)}: the bytes read, or -errno. */
    public static long read(int fd, MemorySegment buf, long len, MemorySegment capture) {
        try {
            long r = (long) READ.invokeExact(capture, fd, buf, len);
            return r < 0 ? -errno(capture) : r;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code write(fd, buf, len)}: the bytes written, or -errno. */
    public static long write(int fd, MemorySegment buf, long len, MemorySegment capture) {
        try {
            long r = (long) WRITE.invokeExact(capture, fd, buf, len);
            return r < 0 ? -errno(capture) : r;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code poll(fds, n, timeoutMs)} over an array of {@link #POLLFD_SIZE}-byte entries: the count, or -errno. */
    public static int poll(MemorySegment fds, long n, int timeoutMs, MemorySegment capture) {
        try {
            return result((int) POLL.invokeExact(capture, fds, n, timeoutMs), capture);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code epoll_create1(flags)}: the descriptor, or -errno. */
    public static int epollCreate(int flags, MemorySegment capture) {
        try {
            return result((int) EPOLL_CREATE1.invokeExact(capture, flags), capture);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /**
     * {@code epoll_ctl(epfd, op, fd, event)} with an event of {@link #EPOLL_EVENT_SIZE} bytes
     * ({@code NULL} for {@link #EPOLL_CTL_DEL}): 0, or -errno.
     */
    public static int epollCtl(int epfd, int op, int fd, MemorySegment event, MemorySegment capture) {
        try {
            return result((int) EPOLL_CTL.invokeExact(capture, epfd, op, fd, event), capture);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code epoll_wait(epfd, events, max, timeoutMs)}: the count, or -errno. */
    public static int epollWait(int epfd, MemorySegment events, int max, int timeoutMs, MemorySegment capture) {
        try {
            return result((int) EPOLL_WAIT.invokeExact(capture, epfd, events, max, timeoutMs), capture);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code eventfd(initial, flags)}: the descriptor, or -errno. */
    public static int eventfd(int initial, int flags, MemorySegment capture) {
        try {
            return result((int) EVENTFD.invokeExact(capture, initial, flags), capture);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** The C library's text for an errno (English, e.g. "Device or resource busy"). */
    public static String strerror(int errno) {
        try {
            MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
            return s.address() == 0 ? "error " + errno : s.reinterpret(256).getString(0);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    // ---- serial (io.parambus.hw's PWM and UART): pread/pwrite for sysfs attribute files ----

    private static final MethodHandle PREAD = function("pread",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG), CAPTURE_ERRNO);
    private static final MethodHandle PWRITE = function("pwrite",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG), CAPTURE_ERRNO);

    /** {@code pread(fd, buf, len, offset)}: the bytes read, or -errno. */
    public static long pread(int fd, MemorySegment buf, long len, long offset, MemorySegment capture) {
        try {
            long r = (long) PREAD.invokeExact(capture, fd, buf, len, offset);
            return r < 0 ? -errno(capture) : r;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /** {@code pwrite(fd, buf, len, offset)}: the bytes written, or -errno. */
    public static long pwrite(int fd, MemorySegment buf, long len, long offset, MemorySegment capture) {
        try {
            long r = (long) PWRITE.invokeExact(capture, fd, buf, len, offset);
            return r < 0 ? -errno(capture) : r;
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    // ---- GPIO (io.parambus.hw.Gpio*): the calls only the GPIO layer and its tests use ----

    private static final MethodHandle PIPE2 = function("pipe2",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle IOCTL_PTR_NO_ERRNO = function("ioctl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), Linker.Option.firstVariadicArg(2));

    /**
     * {@code ioctl(fd, request, arg)} without capturing errno: the result, or -1 on
     * failure (errno lost). Why: the linker's errno capture allocates (40 bytes a call on
     * JDK 25) unless the caller is compiled by C2, whose escape analysis removes it; code
     * run by the interpreter or C1 (before C2 compiles it, or on a JVM limited to C1 such
     * as the test VM's) would allocate on every call. GPIO get and set call this first and,
     * only if it fails, the same ioctl again through {@link #ioctl(int, long, MemorySegment,
     * MemorySegment)} to learn the errno: safe for ioctls that change nothing when they
     * fail and are idempotent when they succeed (GPIO_V2_LINE_GET_VALUES/SET_VALUES).
     */
    public static int ioctlNoErrno(int fd, long request, MemorySegment arg) {
        try {
            return (int) IOCTL_PTR_NO_ERRNO.invokeExact(fd, request, arg);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }

    /**
     * {@code pipe2(fds, flags)}: the read and write ends as two ints at {@code fds}
     * (8 bytes of the caller's native memory); 0, or -errno. The GPIO tests feed the
     * kernel's 48-byte event records through a pipe adopted as a request's descriptor.
     */
    public static int pipe2(MemorySegment fds, int flags, MemorySegment capture) {
        try {
            return result((int) PIPE2.invokeExact(capture, fds, flags), capture);
        } catch (Throwable t) {
            throw unexpected(t);
        }
    }
}

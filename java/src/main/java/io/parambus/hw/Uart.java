package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.parambus.internal.Native;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A serial port (any tty: a UART's {@code /dev/ttyS1}, {@code /dev/ttyUSB0},
 * {@code /dev/ttyAMA0}, a pseudo-terminal), in raw mode, configured through termios2
 * with any baud rate ({@link UartConfig}).
 *
 * <p><b>I/O.</b> Reads wait for input with a deadline and never block longer
 * ({@link #read(MemorySegment, Duration)}); {@link #readFrame} also ends after a gap
 * between bytes (the inter-byte timeout that delimits e.g. a Modbus RTU frame).
 * {@link #writeAll(MemorySegment, Duration)} writes everything, waiting for room as
 * the driver sends. A caller's native segment is read into or written from directly;
 * a heap segment or a {@code byte[]} goes through a 4 KiB buffer of this object. No
 * call allocates, Java or native, on the way of a read or write that need not wait.
 *
 * <p><b>Threads.</b> The descriptor is non-blocking, so a {@code read(2)} or
 * {@code write(2)} never blocks; waiting is {@code poll(2)} with the deadline.
 * A platform thread polls itself. A virtual thread must not block in native code (it
 * would pin its carrier for the whole wait), so it hands the wait to this port's
 * waiter thread (one platform daemon thread, started on the first wait of a virtual
 * thread, ended by {@link #close()}) and parks until the port is ready. Reads are
 * serialised among themselves, writes too, and configuration calls too; one reader,
 * one writer and one configuring thread may work at the same time. A virtual thread
 * interrupted while it waits gets a {@link HwException} {@code EINTR} (interrupt flag
 * kept); a platform thread waits out its deadline (or {@link #close()}). The only
 * native calls that can block are {@link #drain(Duration)}'s last {@code TCSBRK},
 * once the queue is empty (the UART's FIFO, e.g. 16 characters), and none other.
 *
 * <p><b>Closing.</b> {@link #close()} may be called from any thread at any time: a
 * read or write waiting at that moment ends with {@link HwException} {@code EBADF}
 * ("closed"), and every later call too. Pending output is not waited for: drain first.
 *
 * <p><b>Errors.</b> Every failed system call is a {@link HwException} naming the
 * operation, the port and the errno; arguments out of range are
 * {@link IllegalArgumentException}s, before any system call.
 */
public final class Uart implements AutoCloseable {
    /** Which queue {@link #flush(Queue)} discards. */
    public enum Queue {
        /** Received, not yet read. */
        INPUT,
        /** Written, not yet sent. */
        OUTPUT,
        /** Both. */
        BOTH
    }

    /** Options of {@link #open(String, UartConfig, Option...)}. */
    public enum Option {
        /** {@code TIOCEXCL}: further opens of the port fail with {@code EBUSY} (except with CAP_SYS_ADMIN). */
        EXCLUSIVE
    }

    static final long BUFFER_SIZE = 4096;
    private static final long MAX_WAIT_NS = Long.MAX_VALUE / 4;

    /** One direction's lock and scratch memory: the buffer, two pollfds (port, close eventfd), errno. */
    private static final class Side {
        final ReentrantLock lock = new ReentrantLock();
        final MemorySegment buffer;
        final MemorySegment pollfds;
        final MemorySegment capture;
        final int slot;
        final short event;

        Side(DeviceFile file, int slot, short event, int fd, int closeFd) {
            this.buffer = file.arena().allocate(BUFFER_SIZE, 8);
            this.pollfds = file.arena().allocate(2 * Native.POLLFD_SIZE, 8);
            this.capture = file.arena().allocate(Native.captureLayout());
            this.slot = slot;
            this.event = event;
            pollfds.set(JAVA_INT, 0, fd);
            pollfds.set(JAVA_SHORT, Native.POLLFD_EVENTS, event);
            pollfds.set(JAVA_INT, Native.POLLFD_SIZE, closeFd);
            pollfds.set(JAVA_SHORT, Native.POLLFD_SIZE + Native.POLLFD_EVENTS, (short) Native.POLLIN);
        }
    }

    private final DeviceFile file;
    private final String path;
    private final int fd;
    private final int closeFd;
    private final MemorySegment one;
    private final MemorySegment closeCapture;
    private final MemorySegment termios;
    private final MemorySegment intArg;
    private final Side in;
    private final Side out;
    private final ReentrantLock waiterLock = new ReentrantLock();
    private UartWaiter waiter;
    private volatile boolean closing;

    private Uart(DeviceFile file, int closeFd) {
        this.file = file;
        this.path = file.path();
        this.closeFd = closeFd;
        file.lock().lock();
        try {
            this.fd = file.fd("UART open");
        } finally {
            file.lock().unlock();
        }
        this.one = file.arena().allocate(JAVA_LONG);
        one.set(JAVA_LONG, 0, 1L);
        this.closeCapture = file.arena().allocate(Native.captureLayout());
        this.termios = file.arena().allocate(UartTermios.TERMIOS2);
        this.intArg = file.arena().allocate(JAVA_INT);
        this.in = new Side(file, UartWaiter.READ, (short) Native.POLLIN, fd, closeFd);
        this.out = new Side(file, UartWaiter.WRITE, (short) Native.POLLOUT, fd, closeFd);
    }

    /** Opens path in raw mode keeping the port's rate and framing; see {@link #open(String, UartConfig, Option...)}. */
    public static Uart open(String path) {
        return open(path, null);
    }

    /**
     * Opens the tty at path ({@code O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC}: it
     * never becomes the controlling terminal, and the open never waits for a carrier),
     * puts it in raw mode (no echo, no line editing, no CR/LF translation, no signals,
     * modem lines ignored with {@code CLOCAL}) and applies config with one
     * {@code TCSETS2}, or keeps the port's rate and framing if config is null.
     *
     * @throws HwException {@code ENOENT}, {@code EACCES}, {@code ENOTTY} (not a tty),
     *     {@code EBUSY} (someone holds it with {@link Option#EXCLUSIVE}), ...
     */
    public static Uart open(String path, UartConfig config, Option... options) {
        Objects.requireNonNull(path, "path");
        if (path.isEmpty()) {
            throw new IllegalArgumentException("empty path");
        }
        boolean exclusive = false;
        for (Option o : options) {
            exclusive |= Objects.requireNonNull(o, "option") == Option.EXCLUSIVE;
        }
        DeviceFile file = DeviceFile.open("UART open", path, Native.O_RDWR | Native.O_NOCTTY | Native.O_NONBLOCK);
        int closeFd = -1;
        try {
            file.lock().lock();
            try {
                closeFd = Native.eventfd(0, Native.EFD_CLOEXEC | Native.EFD_NONBLOCK, file.capture());
                if (closeFd < 0) {
                    throw new HwException("UART open", path, -closeFd, "eventfd");
                }
            } finally {
                file.lock().unlock();
            }
            Uart u = new Uart(file, closeFd);
            u.setUp(config, exclusive);
            return u;
        } catch (RuntimeException | Error e) {
            if (closeFd >= 0) {
                Native.close(closeFd);
            }
            file.close();
            throw e;
        }
    }

    private void setUp(UartConfig config, boolean exclusive) {
        file.lock().lock();
        try {
            file.ioctl("UART open (TCGETS2)", UartTermios.TCGETS2, termios);
            if (exclusive) {
                file.ioctl("UART open (TIOCEXCL)", UartTermios.TIOCEXCL, 0L);
            }
            UartTermios.makeRaw(termios);
            if (config != null) {
                UartTermios.encode(termios, config);
            }
            file.ioctl("UART open (TCSETS2)", UartTermios.TCSETS2, termios);
        } finally {
            file.lock().unlock();
        }
    }

    /** The port's path, as given to open. */
    public String path() {
        return path;
    }

    /**
     * Applies config (raw mode kept) with one {@code TCSETS2}. The driver may make a
     * rate other than the one asked for: {@link #config()} tells.
     */
    public void configure(UartConfig config) {
        Objects.requireNonNull(config, "config");
        file.lock().lock();
        try {
            ensureOpen("UART configure");
            file.ioctl("UART configure (TCGETS2)", UartTermios.TCGETS2, termios);
            UartTermios.makeRaw(termios);
            UartTermios.encode(termios, config);
            file.ioctl("UART configure (TCSETS2)", UartTermios.TCSETS2, termios);
        } finally {
            file.lock().unlock();
        }
    }

    /** The settings the driver holds ({@code TCGETS2}): the rate is the one in effect. */
    public UartConfig config() {
        file.lock().lock();
        try {
            ensureOpen("UART get config");
            file.ioctl("UART get config (TCGETS2)", UartTermios.TCGETS2, termios);
            return UartTermios.decode(termios);
        } finally {
            file.lock().unlock();
        }
    }

    // ---- reading ----

    /**
     * Waits up to timeout for input, then reads what is there, up to dst's size.
     * Returns the number of bytes read (at least 1), or 0 if nothing arrived in time
     * ({@link Duration#ZERO}: only what is there already).
     *
     * @throws HwException {@code EIO} (the line hung up), {@code EBADF} (closed),
     *     {@code EINTR} (a virtual thread interrupted), or another read errno
     */
    public int read(MemorySegment dst, Duration timeout) {
        Objects.requireNonNull(dst, "dst");
        long deadline = deadline(timeout);
        in.lock.lock();
        try {
            ensureOpen("UART read");
            long len = Math.min(dst.byteSize(), Integer.MAX_VALUE);
            if (len == 0) {
                return 0;
            }
            if (dst.isNative()) {
                return (int) readSome(dst, len, deadline);
            }
            int n = (int) readSome(in.buffer, Math.min(len, BUFFER_SIZE), deadline);
            MemorySegment.copy(in.buffer, 0, dst, 0, n);
            return n;
        } finally {
            in.lock.unlock();
        }
    }

    /** {@link #read(MemorySegment, Duration)} into {@code dst[off, off + len)} (at most 4 KiB per call). */
    public int read(byte[] dst, int off, int len, Duration timeout) {
        Objects.checkFromIndexSize(off, len, dst.length);
        long deadline = deadline(timeout);
        in.lock.lock();
        try {
            ensureOpen("UART read");
            if (len == 0) {
                return 0;
            }
            int n = (int) readSome(in.buffer, Math.min(len, BUFFER_SIZE), deadline);
            MemorySegment.copy(in.buffer, JAVA_BYTE, 0, dst, off, n);
            return n;
        } finally {
            in.lock.unlock();
        }
    }

    /**
     * Reads a frame: waits up to timeout for its first byte, then keeps reading until
     * dst is full or no byte came for interByteTimeout (the gap that ends a frame).
     * Returns the number of bytes read, 0 if nothing arrived within timeout.
     *
     * @throws HwException as {@link #read(MemorySegment, Duration)}
     */
    public int readFrame(MemorySegment dst, Duration timeout, Duration interByteTimeout) {
        Objects.requireNonNull(dst, "dst");
        return readFrame(dst, null, 0, Math.min(dst.byteSize(), Integer.MAX_VALUE), timeout, interByteTimeout);
    }

    /** {@link #readFrame(MemorySegment, Duration, Duration)} into {@code dst[off, off + len)}. */
    public int readFrame(byte[] dst, int off, int len, Duration timeout, Duration interByteTimeout) {
        Objects.checkFromIndexSize(off, len, dst.length);
        return readFrame(null, dst, off, len, timeout, interByteTimeout);
    }

    private int readFrame(MemorySegment seg, byte[] arr, int off, long len, Duration timeout, Duration gap) {
        long deadline = deadline(timeout);
        long gapNs = nanos(gap, "inter-byte timeout");
        in.lock.lock();
        try {
            ensureOpen("UART read");
            long got = 0;
            while (got < len) {
                long until = deadline;
                if (got > 0) {
                    long byGap = System.nanoTime() + gapNs;
                    until = byGap - deadline < 0 ? byGap : deadline;
                }
                long n;
                if (seg != null && got == 0 && seg.isNative()) {
                    n = readSome(seg, len, until);
                } else {
                    n = readSome(in.buffer, Math.min(len - got, BUFFER_SIZE), until);
                    if (seg != null) {
                        MemorySegment.copy(in.buffer, 0, seg, got, n);
                    } else {
                        MemorySegment.copy(in.buffer, JAVA_BYTE, 0, arr, (int) (off + got), (int) n);
                    }
                }
                if (n == 0) {
                    break;
                }
                got += n;
            }
            return (int) got;
        } finally {
            in.lock.unlock();
        }
    }

    /** One read into buf, waiting for input until deadline: the count, 0 at the deadline. Holds in.lock. */
    private long readSome(MemorySegment buf, long len, long deadline) {
        for (;;) {
            long r = Native.read(fd, buf, len, in.capture);
            if (r > 0) {
                return r;
            }
            if (r == 0) {
                throw new HwException("UART read", path, 5, "end of file: the line hung up");
            }
            if (r == -Native.EINTR) {
                continue;
            }
            if (r != -Native.EAGAIN) {
                throw new HwException("UART read", path, (int) -r);
            }
            if (!await(in, deadline, "UART read")) {
                return 0;
            }
        }
    }

    // ---- writing ----

    /**
     * Writes what the driver accepts now, without waiting: the number of bytes taken
     * from the start of src (0 when the output buffer is full).
     */
    public int write(MemorySegment src) {
        Objects.requireNonNull(src, "src");
        out.lock.lock();
        try {
            ensureOpen("UART write");
            long len = Math.min(src.byteSize(), Integer.MAX_VALUE);
            for (;;) {
                long r;
                if (src.isNative()) {
                    r = len == 0 ? 0 : Native.write(fd, src, len, out.capture);
                } else {
                    long n = Math.min(len, BUFFER_SIZE);
                    MemorySegment.copy(src, 0, out.buffer, 0, n);
                    r = n == 0 ? 0 : Native.write(fd, out.buffer, n, out.capture);
                }
                if (r >= 0) {
                    return (int) r;
                }
                if (r == -Native.EAGAIN) {
                    return 0;
                }
                if (r != -Native.EINTR) {
                    throw new HwException("UART write", path, (int) -r);
                }
            }
        } finally {
            out.lock.unlock();
        }
    }

    /** {@link #writeAll(MemorySegment, Duration)} with no time limit. */
    public void writeAll(MemorySegment src) {
        writeAll(src, null);
    }

    /**
     * Writes all of src, handling partial writes: waits for room in the output buffer
     * as the driver sends (or as flow control lets it), until timeout (null: no limit).
     * Returns when the driver has taken everything; {@link #drain(Duration)} waits until
     * it is on the wire.
     *
     * @throws HwException {@code ETIMEDOUT} (with the count written) if timeout passed first,
     *     {@code EBADF} (closed), {@code EINTR} (a virtual thread interrupted), or a write errno
     */
    public void writeAll(MemorySegment src, Duration timeout) {
        Objects.requireNonNull(src, "src");
        writeAll(src, null, 0, src.byteSize(), timeout);
    }

    /** {@link #writeAll(MemorySegment, Duration)} of {@code src[off, off + len)}. */
    public void writeAll(byte[] src, int off, int len, Duration timeout) {
        Objects.checkFromIndexSize(off, len, src.length);
        writeAll(null, src, off, len, timeout);
    }

    private void writeAll(MemorySegment seg, byte[] arr, int off, long len, Duration timeout) {
        long deadline = timeout == null ? System.nanoTime() + MAX_WAIT_NS : deadline(timeout);
        out.lock.lock();
        try {
            ensureOpen("UART write");
            long done = 0;
            while (done < len) {
                long r;
                if (seg != null && done == 0 && seg.isNative()) {
                    r = Native.write(fd, seg, len, out.capture);
                } else {
                    long n = Math.min(len - done, BUFFER_SIZE);
                    if (seg != null) {
                        MemorySegment.copy(seg, done, out.buffer, 0, n);
                    } else {
                        MemorySegment.copy(arr, (int) (off + done), out.buffer, JAVA_BYTE, 0, (int) n);
                    }
                    r = Native.write(fd, out.buffer, n, out.capture);
                }
                if (r > 0) {
                    done += r;
                } else if (r == 0 || r == -Native.EAGAIN) {
                    if (!await(out, deadline, "UART write")) {
                        throw new HwException("UART write", path, Native.ETIMEDOUT,
                                done + " of " + len + " bytes written in " + timeout);
                    }
                } else if (r != -Native.EINTR) {
                    throw new HwException("UART write", path, (int) -r, done + " of " + len + " bytes written");
                }
            }
        } finally {
            out.lock.unlock();
        }
    }

    // ---- waiting ----

    /** Waits until side's event (or an error or hang-up), the deadline, or close: false at the deadline. */
    private boolean await(Side side, long deadline, String operation) {
        if (deadline - System.nanoTime() <= 0) {
            return false;
        }
        if (Thread.currentThread().isVirtual()) {
            return awaitParked(side, deadline, operation);
        }
        MemorySegment p = side.pollfds;
        for (;;) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            p.set(JAVA_SHORT, Native.POLLFD_REVENTS, (short) 0);
            p.set(JAVA_SHORT, Native.POLLFD_SIZE + Native.POLLFD_REVENTS, (short) 0);
            int r = Native.poll(p, 2, pollMillis(left), side.capture);
            if (r == -Native.EINTR) {
                continue;
            }
            if (r < 0) {
                throw new HwException(operation, path, -r, "poll");
            }
            if (closing || p.get(JAVA_SHORT, Native.POLLFD_SIZE + Native.POLLFD_REVENTS) != 0) {
                throw closed(operation);
            }
            if (p.get(JAVA_SHORT, Native.POLLFD_REVENTS) != 0) {
                return true;
            }
        }
    }

    private boolean awaitParked(Side side, long deadline, String operation) {
        UartWaiter w;
        waiterLock.lock();
        try {
            if (closing) {
                throw closed(operation);
            }
            if (waiter == null) {
                waiter = new UartWaiter(path, fd, closeFd, one, side.capture);
            }
            w = waiter;
        } finally {
            waiterLock.unlock();
        }
        int r;
        try {
            r = w.await(side.slot, side.event, deadline, side.capture);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HwException(operation, path, Native.EINTR, "interrupted while waiting");
        }
        return switch (r) {
            case UartWaiter.READY -> true;
            case UartWaiter.TIMED_OUT -> false;
            case UartWaiter.CLOSED -> throw closed(operation);
            default -> throw new HwException(operation, path, -r, "poll");
        };
    }

    /** A poll(2) timeout for ns nanoseconds: rounded up to whole ms, 0 if none are left. */
    static int pollMillis(long ns) {
        return ns <= 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, (ns + 999_999) / 1_000_000);
    }

    private static long nanos(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative()) {
            throw new IllegalArgumentException(what + " " + d + " is negative");
        }
        return d.compareTo(Duration.ofNanos(MAX_WAIT_NS)) >= 0 ? MAX_WAIT_NS : d.toNanos();
    }

    private static long deadline(Duration timeout) {
        return System.nanoTime() + nanos(timeout, "timeout");
    }

    // ---- control ----

    /**
     * Waits until everything written has been sent: until the output queue is empty
     * ({@code TIOCOUTQ}, checked at intervals of the time its bytes take on the wire),
     * then {@code TCSBRK 1} ({@code tcdrain}) for the UART's FIFO and shift register.
     *
     * @throws HwException {@code ETIMEDOUT} (bytes still queued after timeout, e.g. held
     *     back by flow control), {@code EBADF}, or an ioctl errno
     */
    public void drain(Duration timeout) {
        long deadline = deadline(timeout);
        file.lock().lock();
        try {
            ensureOpen("UART drain");
            file.ioctl("UART drain (TCGETS2)", UartTermios.TCGETS2, termios);
            long perChar = UartTermios.characterNanos(termios);
            for (;;) {
                ensureOpen("UART drain");
                file.ioctl("UART drain (TIOCOUTQ)", UartTermios.TIOCOUTQ, intArg);
                int queued = intArg.get(JAVA_INT, 0);
                if (queued <= 0) {
                    break;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new HwException("UART drain", path, Native.ETIMEDOUT,
                            queued + " bytes still queued after " + timeout);
                }
                long ns = Math.clamp(queued * perChar, 100_000L, 50_000_000L);
                sleep(Math.min(ns, left), "UART drain");
            }
            file.ioctl("UART drain (TCSBRK)", UartTermios.TCSBRK, 1L);
        } finally {
            file.lock().unlock();
        }
    }

    /** Discards a queue ({@code TCFLSH}). */
    public void flush(Queue queue) {
        Objects.requireNonNull(queue, "queue");
        file.lock().lock();
        try {
            ensureOpen("UART flush");
            file.ioctl("UART flush (TCFLSH)", UartTermios.TCFLSH, switch (queue) {
                case INPUT -> UartTermios.TCIFLUSH;
                case OUTPUT -> UartTermios.TCOFLUSH;
                case BOTH -> UartTermios.TCIOFLUSH;
            });
        } finally {
            file.lock().unlock();
        }
    }

    /**
     * Sends a break (the line held at space) for duration: {@code TIOCSBRK}, a sleep
     * (which a virtual thread spends unmounted), {@code TIOCCBRK}. The break is cleared
     * even if the sleep is interrupted.
     */
    public void sendBreak(Duration duration) {
        long ns = nanos(duration, "break duration");
        file.lock().lock();
        try {
            ensureOpen("UART break");
            file.ioctl("UART break (TIOCSBRK)", UartTermios.TIOCSBRK, 0L);
            try {
                sleep(ns, "UART break");
            } finally {
                file.ioctl("UART break (TIOCCBRK)", UartTermios.TIOCCBRK, 0L);
            }
        } finally {
            file.lock().unlock();
        }
    }

    /** Refuses ({@code TIOCEXCL}) or allows again ({@code TIOCNXCL}) further opens of the port. */
    public void setExclusive(boolean exclusive) {
        file.lock().lock();
        try {
            ensureOpen("UART exclusive");
            file.ioctl(exclusive ? "UART exclusive (TIOCEXCL)" : "UART exclusive (TIOCNXCL)",
                    exclusive ? UartTermios.TIOCEXCL : UartTermios.TIOCNXCL, 0L);
        } finally {
            file.lock().unlock();
        }
    }

    /** Bytes received and not yet read ({@code FIONREAD}). */
    public int inputPending() {
        return intIoctl("UART input pending (FIONREAD)", UartTermios.FIONREAD);
    }

    /** Bytes written and not yet sent by the driver ({@code TIOCOUTQ}; the FIFO not counted). */
    public int outputPending() {
        return intIoctl("UART output pending (TIOCOUTQ)", UartTermios.TIOCOUTQ);
    }

    private int intIoctl(String operation, long request) {
        file.lock().lock();
        try {
            ensureOpen(operation);
            file.ioctl(operation, request, intArg);
            return intArg.get(JAVA_INT, 0);
        } finally {
            file.lock().unlock();
        }
    }

    private void sleep(long ns, String operation) {
        try {
            Thread.sleep(Duration.ofNanos(ns));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HwException(operation, path, Native.EINTR, "interrupted");
        }
    }

    private void ensureOpen(String operation) {
        if (closing) {
            throw closed(operation);
        }
    }

    private HwException closed(String operation) {
        return new HwException(operation, path, 9, "closed");
    }

    /**
     * Closes the port: a read or write waiting now ends with {@code EBADF}, the waiter
     * thread (if any) ends, the descriptor and the native memory are freed. Idempotent.
     */
    @Override
    public void close() {
        waiterLock.lock();
        try {
            if (closing) {
                return;
            }
            closing = true;
        } finally {
            waiterLock.unlock();
        }
        // Wake whoever polls: the close eventfd stays readable from now on.
        long w = Native.write(closeFd, one, 8, closeCapture);
        assert w == 8 : w;
        in.lock.lock();
        out.lock.lock();
        try {
            if (waiter != null) {
                waiter.stop();
            }
            file.close();
            Native.close(closeFd);
        } finally {
            out.lock.unlock();
            in.lock.unlock();
        }
    }

    /** The port's path and whether it is closed. */
    @Override
    public String toString() {
        return "Uart[" + path + (closing ? ", closed" : "") + "]";
    }
}

package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.parambus.internal.Native;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * A pseudo-terminal pair for the UART tests: the master side held here (raw FFM, not
 * the class under test), the slave's path for {@link Uart#open}. Opened as
 * {@code posix_openpt} + {@code unlockpt} + {@code ptsname} do: {@code /dev/ptmx},
 * {@code TIOCSPTLCK 0}, {@code TIOCGPTN}.
 */
final class UartPty implements AutoCloseable {
    /** {@code _IOR('T', 0x30, unsigned int)}, {@code _IOW('T', 0x31, int)} (checked by UartLayoutTest). */
    static final long TIOCGPTN = Ioc.ior('T', 0x30, 4), TIOCSPTLCK = Ioc.iow('T', 0x31, 4);

    private final Arena arena = Arena.ofShared();
    private final MemorySegment capture = arena.allocate(Native.captureLayout());
    private final MemorySegment buf = arena.allocate(65536);
    private final MemorySegment pollfd = arena.allocate(Native.POLLFD_SIZE, 8);
    private final MemorySegment intArg = arena.allocate(JAVA_INT);
    private final int master;
    private final String slave;
    private boolean closed;

    UartPty() throws Native.Errno {
        master = Native.open("/dev/ptmx", Native.O_RDWR | Native.O_NOCTTY | Native.O_NONBLOCK | Native.O_CLOEXEC);
        intArg.set(JAVA_INT, 0, 0);
        check(Native.ioctl(master, TIOCSPTLCK, intArg, capture), "TIOCSPTLCK");
        check(Native.ioctl(master, TIOCGPTN, intArg, capture), "TIOCGPTN");
        slave = "/dev/pts/" + intArg.get(JAVA_INT, 0);
    }

    private void check(int r, String what) {
        if (r < 0) {
            Native.close(master);
            throw new IllegalStateException(what + " on /dev/ptmx: " + Native.name(-r));
        }
    }

    /** The slave side's path. */
    String slavePath() {
        return slave;
    }

    private boolean poll(short events, long deadline) {
        long left = deadline - System.nanoTime();
        pollfd.set(JAVA_INT, 0, master);
        pollfd.set(JAVA_SHORT, Native.POLLFD_EVENTS, events);
        pollfd.set(JAVA_SHORT, Native.POLLFD_REVENTS, (short) 0);
        int r = Native.poll(pollfd, 1, Uart.pollMillis(Math.max(0, left)), capture);
        return r > 0;
    }

    /** Writes all of data into the master (what the slave then reads), within 10 s. */
    void write(byte[] data) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        int off = 0;
        while (off < data.length) {
            int n = Math.min(data.length - off, (int) buf.byteSize());
            MemorySegment.copy(data, off, buf, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, n);
            long r = Native.write(master, buf, n, capture);
            if (r > 0) {
                off += (int) r;
            } else if (r == -Native.EAGAIN) {
                if (!poll((short) Native.POLLOUT, deadline)) {
                    throw new IllegalStateException("pty master: no room to write for 10 s");
                }
            } else {
                throw new IllegalStateException("write to the pty master: " + Native.name((int) -r));
            }
        }
    }

    /** Reads from the master until n bytes came or timeout passed: what came. */
    byte[] read(int n, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (out.size() < n) {
            long r = Native.read(master, buf, Math.min(n - out.size(), buf.byteSize()), capture);
            if (r > 0) {
                out.write(buf.asSlice(0, r).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), 0, (int) r);
            } else if (r == -Native.EAGAIN) {
                if (!poll((short) Native.POLLIN, deadline)) {
                    break;
                }
            } else {
                throw new IllegalStateException("read from the pty master: " + Native.name((int) -r));
            }
        }
        return out.toByteArray();
    }

    /** Closes the master (the slave side then hangs up). */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            Native.close(master);
            arena.close();
        }
    }

    /** The master's descriptor, for allocation-free loops of the tests. */
    int masterFd() {
        return master;
    }
}

package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.parambus.internal.Native;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The blocking side of a GPIO descriptor (a chip's line-info events, a request's edge
 * events): its descriptor is non-blocking ({@code FIONBIO}, set once at open), and a
 * reader waits for it with {@code poll(2)} and a timeout, without holding the
 * {@link DeviceFile}'s lock, so that ioctls from other threads go on meanwhile.
 *
 * <p>Threads: one reader at a time ({@link #readerLock()}); the owner's close takes the
 * same lock before closing the descriptor, so a waiting reader never polls a closed
 * (or reused) descriptor number: close waits for it, at most the reader's timeout.
 *
 * <p>Virtual threads: {@code poll(2)} with a timeout blocks the calling OS thread, which
 * for a virtual thread would pin its carrier. So a wait with a non-zero timeout from a
 * virtual thread is refused with {@link IllegalStateException}; a zero timeout (which
 * never blocks) is allowed. Virtual threads get events through a {@link GpioEventPoller}.
 */
final class GpioWaiter {
    private final DeviceFile file;
    private final MemorySegment pollfd;
    private final MemorySegment capture;
    private final ReentrantLock readerLock = new ReentrantLock();

    /** Allocates its native memory from the file's arena and makes the descriptor non-blocking. */
    GpioWaiter(DeviceFile file, String operation) {
        this.file = file;
        this.pollfd = file.arena().allocate(Native.POLLFD_SIZE, 4);
        this.capture = file.arena().allocate(Native.captureLayout());
        MemorySegment one = file.arena().allocate(JAVA_INT);
        one.set(JAVA_INT, 0, 1);
        file.lock().lock();
        try {
            file.ioctl(operation, GpioUapi.FIONBIO, one);
        } finally {
            file.lock().unlock();
        }
    }

    /** The lock of the single reader (and of the owner's close). */
    ReentrantLock readerLock() {
        return readerLock;
    }

    /** Refuses a blocking wait on a virtual thread (see the class comment). */
    static void refuseVirtualBlocking(String operation, Duration timeout) {
        if (!timeout.isZero() && Thread.currentThread().isVirtual()) {
            throw new IllegalStateException(operation + ": a wait with a timeout would block a virtual thread's"
                    + " carrier in poll(2); call it from a platform thread, with a zero timeout, or receive the"
                    + " events through a GpioEventPoller");
        }
    }

    /** The timeout as an absolute System.nanoTime() deadline (saturating). */
    static long deadline(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("GPIO wait: negative timeout " + timeout);
        }
        long ns;
        try {
            ns = timeout.toNanos();
        } catch (ArithmeticException e) {
            ns = Long.MAX_VALUE;
        }
        long now = System.nanoTime();
        return ns > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + ns;
    }

    /**
     * Waits until the descriptor is readable (or reports an error, which the following
     * read returns) or the deadline passes: true if readable. The caller holds
     * {@link #readerLock()}, not the file's lock.
     */
    boolean await(String operation, long deadlineNs) {
        int fd;
        file.lock().lock();
        try {
            fd = file.fd(operation);
        } finally {
            file.lock().unlock();
        }
        for (;;) {
            long left = deadlineNs - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            int ms = (int) Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000);
            pollfd.set(JAVA_INT, 0, fd);
            pollfd.set(JAVA_SHORT, Native.POLLFD_EVENTS, (short) Native.POLLIN);
            pollfd.set(JAVA_SHORT, Native.POLLFD_REVENTS, (short) 0);
            int r = Native.poll(pollfd, 1, ms, capture);
            if (r > 0) {
                return true;
            }
            if (r < 0 && r != -Native.EINTR) {
                throw new HwException(operation + " (poll)", file.path(), -r);
            }
        }
    }
}

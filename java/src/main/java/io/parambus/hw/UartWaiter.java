package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.parambus.internal.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The waits of a {@link Uart}'s virtual threads: one platform thread that polls the
 * port for them, so that a virtual thread waiting for input or for room to write
 * parks (and leaves its carrier) instead of blocking in {@code poll(2)}, which would
 * pin the carrier for the whole wait.
 *
 * <p>Two slots, one per direction ({@link #READ}, {@link #WRITE}): the port's reads
 * are serialised among themselves and so are its writes, so at most one wait of
 * each kind is pending. A waiter fills its slot, wakes the thread through an
 * eventfd, and parks on a {@link Condition} until the thread completes the slot:
 * ready (the port reported the event, or an error or hang-up the next system call
 * will name), timed out (the slot's deadline passed), or closed. The thread polls
 * the port for the union of the pending events until the earliest deadline, plus
 * the eventfd and the port's close eventfd.
 *
 * <p>Lifetime: created and started by the port on the first wait of a virtual
 * thread. {@link Uart#close()} signals the close eventfd (the thread completes every
 * pending wait as closed and ends), takes both direction locks (so no caller is in
 * {@link #await} any more), then calls {@link #stop()}, which joins the thread and
 * closes the wake eventfd. The thread frees its own native memory as it ends.
 */
final class UartWaiter {
    static final int READ = 0, WRITE = 1;
    /** Slot states; a completion by error stores the negative errno. */
    static final int IDLE = 0, PENDING = 1, READY = 2, TIMED_OUT = 3, CLOSED = 4;

    private final int fd;
    private final int closeFd;
    private final int wakeFd;
    private final MemorySegment one;
    private final Thread thread;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition completed = lock.newCondition();
    private final int[] state = new int[2];
    private final short[] events = new short[2];
    private final long[] deadline = new long[2];
    private boolean stopped;

    /**
     * Starts the thread of port (descriptor fd, named path) whose close() signals
     * closeFd; one is 8 bytes of native memory holding 1 (the eventfd increment),
     * capture the calling side's errno buffer.
     */
    UartWaiter(String path, int fd, int closeFd, MemorySegment one, MemorySegment capture) {
        this.fd = fd;
        this.closeFd = closeFd;
        this.one = one;
        int e = Native.eventfd(0, Native.EFD_CLOEXEC | Native.EFD_NONBLOCK, capture);
        if (e < 0) {
            throw new HwException("UART wait", path, -e, "eventfd for the waiter thread");
        }
        this.wakeFd = e;
        this.thread = Thread.ofPlatform().daemon().name("parambus-uart " + path).unstarted(this::run);
        thread.start();
    }

    /**
     * Waits (parked) until the port reports events, or deadlineNs (System.nanoTime)
     * passes, or the port is closed: {@link #READY}, {@link #TIMED_OUT}, {@link #CLOSED},
     * or -errno of a failed poll. The caller holds its direction's lock; capture is its
     * errno buffer. Throws InterruptedException (the slot withdrawn) if interrupted.
     */
    int await(int slot, short ev, long deadlineNs, MemorySegment capture) throws InterruptedException {
        lock.lock();
        try {
            if (stopped) {
                return CLOSED;
            }
            state[slot] = PENDING;
            events[slot] = ev;
            deadline[slot] = deadlineNs;
        } finally {
            lock.unlock();
        }
        long w = Native.write(wakeFd, one, 8, capture);
        assert w == 8 : w;
        lock.lock();
        try {
            while (state[slot] == PENDING) {
                try {
                    completed.await();
                } catch (InterruptedException ie) {
                    state[slot] = IDLE;
                    throw ie;
                }
            }
            int r = state[slot];
            state[slot] = IDLE;
            return r;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Ends the thread (the port's close eventfd was signalled already), waits for it and
     * closes the wake eventfd; the caller holds both direction locks.
     */
    void stop() {
        lock.lock();
        try {
            stopped = true;
        } finally {
            lock.unlock();
        }
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        Native.close(wakeFd);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fds = arena.allocate(3 * Native.POLLFD_SIZE, 8);
            MemorySegment capture = arena.allocate(Native.captureLayout());
            MemorySegment counter = arena.allocate(8, 8);
            fds.set(JAVA_INT, Native.POLLFD_SIZE, wakeFd);
            fds.set(JAVA_SHORT, Native.POLLFD_SIZE + Native.POLLFD_EVENTS, (short) Native.POLLIN);
            fds.set(JAVA_INT, 2 * Native.POLLFD_SIZE, closeFd);
            fds.set(JAVA_SHORT, 2 * Native.POLLFD_SIZE + Native.POLLFD_EVENTS, (short) Native.POLLIN);
            for (;;) {
                short ev = 0;
                long next = 0;
                boolean any = false;
                lock.lock();
                try {
                    if (stopped) {
                        break;
                    }
                    for (int s = 0; s < 2; s++) {
                        if (state[s] == PENDING) {
                            ev |= events[s];
                            next = !any || deadline[s] - next < 0 ? deadline[s] : next;
                            any = true;
                        }
                    }
                } finally {
                    lock.unlock();
                }
                // No pending wait: leave the port out (-1), or a hung-up line would
                // report POLLHUP at once, again and again.
                fds.set(JAVA_INT, 0, any ? fd : -1);
                fds.set(JAVA_SHORT, Native.POLLFD_EVENTS, ev);
                for (int i = 0; i < 3; i++) {
                    fds.set(JAVA_SHORT, i * Native.POLLFD_SIZE + Native.POLLFD_REVENTS, (short) 0);
                }
                int r = Native.poll(fds, 3, any ? Uart.pollMillis(next - System.nanoTime()) : -1, capture);
                short got = fds.get(JAVA_SHORT, Native.POLLFD_REVENTS);
                if (fds.get(JAVA_SHORT, Native.POLLFD_SIZE + Native.POLLFD_REVENTS) != 0) {
                    Native.read(wakeFd, counter, 8, capture); // reset the counter; EAGAIN if a racing read took it
                }
                boolean closed = fds.get(JAVA_SHORT, 2 * Native.POLLFD_SIZE + Native.POLLFD_REVENTS) != 0;
                long now = System.nanoTime();
                lock.lock();
                try {
                    boolean done = false;
                    for (int s = 0; s < 2; s++) {
                        if (state[s] != PENDING) {
                            continue;
                        }
                        int result = closed || stopped ? CLOSED
                                : r < 0 && r != -Native.EINTR ? r
                                : (got & (events[s] | Native.POLLERR | Native.POLLHUP | Native.POLLNVAL)) != 0 ? READY
                                : now - deadline[s] >= 0 ? TIMED_OUT
                                : PENDING;
                        if (result != PENDING) {
                            state[s] = result;
                            done = true;
                        }
                    }
                    if (closed) {
                        stopped = true;
                    }
                    if (done) {
                        completed.signalAll();
                    }
                } finally {
                    lock.unlock();
                }
            }
        } finally {
            lock.lock();
            try {
                stopped = true;
                for (int s = 0; s < 2; s++) {
                    if (state[s] == PENDING) {
                        state[s] = CLOSED;
                    }
                }
                completed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }
}

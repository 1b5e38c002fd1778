package io.parambus;

import io.parambus.internal.Native;
import io.parambus.internal.Proc;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What a writing OS thread needs (docs/segment-format.md §4.3, §4.5, §4.8): its token
 * ({@code tid | start_token << 22}), computed once per platform thread, the native
 * buffer its CLOCK_REALTIME readings go through (so that a write allocates nothing),
 * and its quiet period after holding off for a reader's turn.
 *
 * <p>A token names an OS thread, and a Java writer's claim must begin and end on the one
 * its token names (§4.8): a virtual thread can be moved to another carrier, or share its
 * carrier with another task, between any two operations. So writes are refused on a
 * virtual thread ({@link #current}); a platform thread is one OS thread for its life.
 *
 * <p>Thread-safety: each instance belongs to its own thread (a thread-local).
 */
final class WriterThread {
    static final long TOKEN_MASK = (1L << 52) - 1;
    static final int TOKEN_TID_BITS = 22;

    private static final ThreadLocal<WriterThread> CURRENT = new ThreadLocal<>();

    final long token;
    final MemorySegment clock;
    private final MemorySegment timespec;
    private final MemorySegment capture;
    long quietUntil;

    private WriterThread() {
        int tid = Native.gettid();
        token = (Integer.toUnsignedLong(tid) | Proc.startToken(tid) << TOKEN_TID_BITS) & TOKEN_MASK;
        Arena arena = Arena.ofAuto();
        clock = arena.allocate(16, 8);
        timespec = arena.allocate(16, 8);
        capture = arena.allocate(Native.captureLayout());
    }

    /** A futex wait (a lock word's sleepers, a reader's turn) through this thread's buffers: no allocation. */
    int futexWait(long address, int expected, long deadlineNs) {
        return Native.futexWait(address, expected, deadlineNs, timespec, capture);
    }

    /**
     * The calling thread's writer state (allocation-free after the thread's first write).
     *
     * @throws ParambusException {@code EPERM} on a virtual thread (§4.8), naming the
     *     operation {@code op} on {@code object}
     */
    static WriterThread current(String op, String object) {
        Thread t = Thread.currentThread();
        if (t.isVirtual()) {
            throw new ParambusException("EPERM", op + " " + object + ": EPERM: writes must run on a platform thread,"
                    + " and this is a virtual thread (a parameter's claim names one OS thread;"
                    + " docs/segment-format.md §4.8)");
        }
        WriterThread w = CURRENT.get();
        if (w == null) {
            w = new WriterThread();
            CURRENT.set(w);
        }
        return w;
    }

    /** CLOCK_REALTIME now, ns since the epoch (a clock_gettime call; allocates nothing). */
    long realtimeNs() {
        return Native.clockNs(Native.CLOCK_REALTIME, clock);
    }

    /** The thread id in a token's bits 0–21. */
    static long tid(long token) {
        return token & ((1L << TOKEN_TID_BITS) - 1);
    }

    /** The start token in a token's bits 22–51. */
    static long start(long token) {
        return (token & TOKEN_MASK) >>> TOKEN_TID_BITS;
    }

    /** Whether the thread a token names is alive (§4.3). */
    static boolean alive(long token) {
        return Proc.threadAlive(tid(token), start(token));
    }
}

package io.parambus.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * CLOCK_MONOTONIC in ns, as the wake segment's reader's turns and every futex deadline
 * use it (docs/segment-format.md §4.5, §4.7).
 *
 * <p>HotSpot on Linux implements {@link System#nanoTime()} as
 * {@code clock_gettime(CLOCK_MONOTONIC)} without an offset, which makes it the same clock
 * as C's; that is checked once, at class initialisation, against the C library's
 * reading. If the check fails (another JVM), every reading is a {@code clock_gettime}
 * call instead (which then allocates a little native memory per call).
 *
 * <p>Threads: any.
 */
public final class Clock {
    private Clock() {
    }

    private static final boolean NANO_TIME_IS_MONOTONIC = check();

    private static boolean check() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(16, 8);
            for (int attempt = 0; attempt < 5; attempt++) {
                long before = System.nanoTime();
                long c = Native.clockNs(Native.CLOCK_MONOTONIC, buf);
                long after = System.nanoTime();
                if (before <= c && c <= after && after - before < 1_000_000) {
                    return true;
                }
            }
            return false;
        }
    }

    /** CLOCK_MONOTONIC, ns. */
    public static long monotonicNs() {
        if (NANO_TIME_IS_MONOTONIC) {
            return System.nanoTime();
        }
        try (Arena a = Arena.ofConfined()) {
            return Native.clockNs(Native.CLOCK_MONOTONIC, a.allocate(16, 8));
        }
    }

    /**
     * The CLOCK_MONOTONIC deadline {@code timeout} from now; a timeout longer than
     * {@code Long.MAX_VALUE / 4} ns (73 years), or beyond a {@code long} of ns, counts as
     * that, so that a deadline plus a slice cannot overflow.
     */
    public static long deadlineAfter(java.time.Duration timeout) {
        long ns;
        try {
            ns = timeout.toNanos();
        } catch (ArithmeticException e) {
            ns = Long.MAX_VALUE;
        }
        return monotonicNs() + Math.min(ns, Long.MAX_VALUE / 4);
    }

    /** Whether {@link System#nanoTime()} was found to be CLOCK_MONOTONIC (for the tests). */
    public static boolean nanoTimeIsMonotonic() {
        return NANO_TIME_IS_MONOTONIC;
    }
}

package io.parambus;

import static io.parambus.SegmentLayout.W_ANY_WAITERS;
import static io.parambus.SegmentLayout.W_NOTIFY;
import static io.parambus.SegmentLayout.W_PARAM_WAITERS;
import static io.parambus.SegmentLayout.W_WAITERS;

import io.parambus.internal.Clock;
import io.parambus.internal.Native;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Waiting for parameters to change, without polling (docs/segment-format.md §5.1): the
 * watch remembers the versions it has seen; {@link #await} registers in the wake
 * segment's waiter counts, so that writers of the watched parameters wake it, and sleeps
 * on the shared {@code notify} futex (an FFM downcall to {@code syscall(SYS_futex,
 * FUTEX_WAIT_BITSET)} with an absolute CLOCK_MONOTONIC deadline) in slices of at most
 * 100 ms, looking at its versions after each, so that counts zeroed by a hostile reader
 * delay it by 100 ms at most.
 *
 * <h2>Threads</h2>
 * A platform thread sleeps in the futex call itself: no other thread, no polling; a
 * {@link Thread#interrupt()} is seen at the next slice (within 100 ms). A futex call
 * would pin a <b>virtual thread</b> to its carrier for as long as it sleeps (the JDK does
 * not compensate for blocking downcalls), so a virtual thread's wait is handed to a
 * platform thread of a shared pool of daemon threads (named {@code parambus-wait}, one
 * per wait in progress, kept 60 s when idle) while the virtual thread parks: its carrier
 * is free, and an interrupt of the virtual thread ends the wait at once. The cost is a
 * hand-over each way (some microseconds) per wait and a platform thread per sleeping
 * virtual waiter. Waits make no write: they may run on any thread.
 *
 * <p>A watch is used by one thread at a time, except {@link #interrupt()}, which any
 * thread may call.
 */
public final class Watch implements AutoCloseable {
    private static final VarHandle INT = ParamTable.INT;
    private static final long SLICE_NS = 100_000_000L, UNBARRIERED_SLICE_NS = 1_000_000L;

    /** The platform threads that sleep for virtual waiters (created on first use). */
    static final class PoolHolder {
        static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
            Thread t = Thread.ofPlatform().daemon().name("parambus-wait").unstarted(r);
            return t;
        });
    }

    private final ParamTable table;
    private final int[] indexes;
    private final boolean all;
    private final long[] seen;
    private final int[] changed;
    private int changedCount, cursor;
    private volatile boolean interrupted;
    private boolean closed;

    Watch(ParamTable table, int[] indexes, boolean all) {
        this.table = table;
        this.indexes = indexes;
        this.all = all;
        this.seen = new long[indexes.length];
        this.changed = new int[indexes.length];
        for (int k = 0; k < indexes.length; k++) {
            seen[k] = table.version(indexes[k]);
        }
    }

    /** The watched parameters' indexes (a copy). */
    public int[] indexes() {
        return indexes.clone();
    }

    /** Record every watched parameter whose version moved; how many. */
    private int collect() {
        changedCount = 0;
        cursor = 0;
        for (int k = 0; k < indexes.length; k++) {
            long s = table.version(indexes[k]);
            if (s != seen[k]) {
                seen[k] = s;
                changed[changedCount++] = indexes[k];
            }
        }
        return changedCount;
    }

    private ParambusException stale() {
        return new ParambusException("ESTALE", "wait " + table.instance() + ": ESTALE: the instance was "
                + (table.state() == TableState.CLOSED ? "closed" : "replaced") + " (open it again)");
    }

    /**
     * Wait until a watched parameter has changed since the watch last saw it, or
     * {@code timeout} passes ({@link Duration#ZERO}: just look). The changes are then
     * available from {@link #next()}.
     *
     * @return true if something changed, false on timeout or after {@link #interrupt()}
     * @throws ParambusException {@code ESTALE} if the instance was closed or replaced;
     *     {@code EINTR} if the waiting thread was interrupted (its interrupt status stays
     *     set); {@code EINVAL} a negative timeout or a closed watch
     */
    public boolean await(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (closed) {
            throw new ParambusException("EINVAL", "wait " + table.instance() + ": EINVAL: the watch is closed");
        }
        if (timeout.isNegative()) {
            throw new ParambusException("EINVAL", "wait " + table.instance() + ": EINVAL: negative timeout " + timeout);
        }
        if (collect() > 0) {
            return true;
        }
        if (table.gone()) {
            throw stale();
        }
        if (timeout.isZero()) {
            return false;
        }
        long deadline = Clock.deadlineAfter(timeout);
        abandon = false;
        if (Thread.currentThread().isVirtual()) {
            return awaitOnPlatformThread(deadline);
        }
        return awaitBlocking(deadline);
    }

    private boolean awaitOnPlatformThread(long deadline) {
        Future<Boolean> f = PoolHolder.POOL.submit(() -> awaitBlocking(deadline));
        boolean wasInterrupted = false;
        boolean changed;
        try {
            while (true) {
                try {
                    changed = f.get();
                    break;
                } catch (InterruptedException e) {
                    // End the platform thread's wait (it looks at its versions once more).
                    wasInterrupted = true;
                    interruptSleepers();
                }
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        } finally {
            if (wasInterrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (wasInterrupted && !changed) {
            throw interruptedError();
        }
        return changed;
    }

    private ParambusException interruptedError() {
        return new ParambusException("EINTR", "wait " + table.instance() + ": EINTR: the thread was interrupted");
    }

    /** Set when the virtual thread that handed its wait over was interrupted. */
    private volatile boolean abandon;

    /** Ends the hand-over's platform wait (the virtual waiter was interrupted). */
    private void interruptSleepers() {
        abandon = true;
        table.notifyWaiters();
    }

    private void register(boolean on) {
        int d = on ? 1 : -1;
        if (all) {
            INT.getAndAdd(table.wake, W_ANY_WAITERS, d);
            return;
        }
        for (int i : indexes) {
            INT.getAndAdd(table.wake, W_WAITERS + 4L * i, d);
        }
        INT.getAndAdd(table.wake, W_PARAM_WAITERS, d * indexes.length);
    }

    /** The wait loop of §5.1 on the calling (platform) thread. */
    private boolean awaitBlocking(long deadline) {
        register(true);
        try {
            VarHandle.fullFence();
            boolean barriered = Native.globalBarrier() == 0;
            long notifyAddress = table.wake.address() + W_NOTIFY;
            while (true) {
                int n = (int) INT.getVolatile(table.wake, W_NOTIFY);
                if (collect() > 0) {
                    return true;
                }
                if (table.gone()) {
                    throw stale();
                }
                // After reading n: interrupt() sets its flag and then bumps notify.
                if (interrupted) {
                    interrupted = false;
                    return false;
                }
                if (abandon) {
                    return false;
                }
                if (Thread.currentThread().isInterrupted()) {
                    throw interruptedError();
                }
                long now = Clock.monotonicNs();
                long slice = now + (barriered ? SLICE_NS : UNBARRIERED_SLICE_NS);
                int r = Native.futexWait(notifyAddress, n, Math.min(deadline, slice));
                if (r == Native.ETIMEDOUT && Clock.monotonicNs() >= deadline) {
                    return collect() > 0;
                }
            }
        } finally {
            register(false);
        }
    }

    /**
     * The next parameter found changed by the last {@link #await}, in watch order; -1 when
     * none is left.
     */
    public int next() {
        return cursor < changedCount ? changed[cursor++] : -1;
    }

    /**
     * Make the {@link #await} another thread is in (or the next one) return false at once.
     * Any thread may call it. It wakes every waiter of the instance, who look at their
     * versions and sleep again.
     */
    public void interrupt() {
        interrupted = true;
        table.notifyWaiters();
    }

    /** Forget the watch (it holds no registration outside {@link #await}). Idempotent. */
    @Override
    public void close() {
        closed = true;
    }
}

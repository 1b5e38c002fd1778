package io.parambus;

import static io.parambus.SegmentLayout.COPY_VALUE;
import static io.parambus.SegmentLayout.H_REVOCATIONS;
import static io.parambus.SegmentLayout.SLOT_COPY0;
import static io.parambus.SegmentLayout.W_ANY_WAITERS;
import static io.parambus.SegmentLayout.W_NOTIFY;
import static io.parambus.SegmentLayout.W_PARAM_WAITERS;
import static io.parambus.SegmentLayout.W_WAITERS;

import io.parambus.internal.Clock;
import io.parambus.internal.Native;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The write side of the table protocol (docs/segment-format.md §4.2–§4.5), for a writer
 * that never takes a bias (§4.8): claiming a parameter's lock word (a compare-and-swap of
 * a free word, revoking another thread's bias with the global membarrier barrier, taking
 * over from a dead holder, sleeping behind a live one on the word's futex, EBUSY after a
 * second), holding off for a reader's turn, filling the copy after the current version
 * and publishing it with a release store, letting go, and the waiter handshake (a full
 * fence, then the waiter counts, then one wake-up). A batch claims every parameter in
 * ascending index before it writes the first.
 *
 * <p>Every access has the {@link VarHandle} mode §4.7 gives it. A claim begins and ends on
 * the calling platform thread, with no blocking call, lock or I/O between them. Scalar
 * writes allocate nothing.
 *
 * <p>Thread-safety: any number of platform threads at once (each with its own claims).
 */
final class SlotWriter {
    private static final VarHandle LONG = ParamTable.LONG;
    private static final VarHandle INT = ParamTable.INT;
    // The lock word (§4.3).
    private static final long BIASED = ParamTable.BIASED, SHARED = ParamTable.SHARED,
            WAITERS = ParamTable.WAITERS, STATE_MASK = ParamTable.STATE_MASK;
    private static final int SPINS_BEFORE_WAITING = 200;
    private static final long FIRST_CHECK_NS = 50_000, CHECK_INTERVAL_NS = 1_000_000,
            LIVE_HOLDER_TIMEOUT_NS = 1_000_000_000;
    // The reader's turn (§4.5).
    private static final long READER_TURN_NS = ParamTable.READER_TURN_NS, TURN_SLACK_NS = ParamTable.TURN_SLACK_NS;
    private static final int TURN_SHARE = 20;

    private final ParamTable table;
    private final MemorySegment seg, wake;
    private final long[] slot;
    private final int[] stride, copies, valueSize;
    private final long turnsOffset, auxOffset;

    SlotWriter(ParamTable table) {
        this.table = table;
        this.seg = table.seg;
        this.wake = table.wake;
        this.slot = table.slot;
        this.stride = table.stride;
        this.copies = table.copies;
        this.valueSize = table.valueSize;
        this.turnsOffset = table.turnsOffset;
        this.auxOffset = table.auxOffset;
    }

    private String obj(int i) {
        return table.obj(i);
    }

    /** One checked scalar write, status ok, now. */
    void writeScalar(String op, int i, long bits) {
        WriterThread w = WriterThread.current(op, table.params[i].name());
        if (table.gone()) {
            throw table.stale(op, i);
        }
        long ts = w.realtimeNs();
        holdOff(i, w);
        long unlockTo = claim(op, i, w);
        try {
            storeScalar(i, bits, 0, ts);
        } finally {
            letGo(i, unlockTo);
        }
        VarHandle.fullFence();
        if (hasWaiters(i)) {
            notifyWaiters();
        }
    }

    /** One checked write of a string, bytes or array, status ok, now. */
    void writeStored(String op, int i, byte[] v, int length) {
        WriterThread w = WriterThread.current(op, table.params[i].name());
        if (table.gone()) {
            throw table.stale(op, i);
        }
        long ts = w.realtimeNs();
        holdOff(i, w);
        long unlockTo = claim(op, i, w);
        try {
            storeValue(i, v, length, 0, ts);
        } finally {
            letGo(i, unlockTo);
        }
        VarHandle.fullFence();
        if (hasWaiters(i)) {
            notifyWaiters();
        }
    }

    /** Fill the copy after the current version with a scalar and publish it (under a claim). */
    private void storeScalar(int i, long bits, int status, long ts) {
        final MemorySegment seg = this.seg;
        final long s = slot[i];
        long seq = (long) LONG.getOpaque(seg, s);
        long c = s + SLOT_COPY0 + ((seq + 1) & 1) * 24;
        VarHandle.releaseFence();
        LONG.setOpaque(seg, c, ts);
        // status (offset 8) and length (offset 12), little-endian: one word.
        LONG.setOpaque(seg, c + 8, (long) valueSize[i] << 32 | Integer.toUnsignedLong(status));
        LONG.setOpaque(seg, c + COPY_VALUE, bits);
        LONG.setRelease(seg, s, seq + 1);
    }

    /** Fill the next copy with {@code length} stored bytes (8 at a time) and publish it. */
    private void storeValue(int i, byte[] v, int length, int status, long ts) {
        final MemorySegment seg = this.seg;
        final long s = slot[i];
        long seq = (long) LONG.getOpaque(seg, s);
        long c = s + SLOT_COPY0 + ((seq + 1) & (copies[i] - 1)) * stride[i];
        VarHandle.releaseFence();
        LONG.setOpaque(seg, c, ts);
        INT.setOpaque(seg, c + 8, status);
        INT.setOpaque(seg, c + 12, length);
        for (int w = 0; w < length; w += 8) {
            long word = 0;
            for (int k = Math.min(8, length - w) - 1; k >= 0; k--) {
                word = word << 8 | Byte.toUnsignedLong(v[w + k]);
            }
            LONG.setOpaque(seg, c + COPY_VALUE + w, word);
        }
        LONG.setRelease(seg, s, seq + 1);
    }

    /** Whether anyone waits for parameter i or for everything (after the handshake's fence). */
    private boolean hasWaiters(int i) {
        return (int) INT.getOpaque(wake, W_WAITERS + 4L * i) != 0 || (int) INT.getOpaque(wake, W_ANY_WAITERS) != 0;
    }

    /** Bump the notify word and wake everyone asleep on it. */
    void notifyWaiters() {
        INT.getAndAdd(wake, W_NOTIFY, 1);
        Native.futexWakeAll(wake.address() + W_NOTIFY);
    }

    /** Hold off for a reader's turn (§4.5): at most 200 µs per write, a 20th of the thread's time. */
    private void holdOff(int i, WriterThread w) {
        long off = turnsOffset + 8L * i;
        if ((long) LONG.getOpaque(wake, off) == 0) {
            return;
        }
        long t = (long) LONG.getAcquire(wake, off);
        if (t == 0) {
            return;
        }
        long now = Clock.monotonicNs();
        if (Long.compareUnsigned(t, now) <= 0 || Long.compareUnsigned(t, now + READER_TURN_NS + TURN_SLACK_NS) > 0) {
            // No turn a reader posts: clear it, so that the next writes take their fast path.
            LONG.compareAndExchangeAcquire(wake, off, t, 0L);
            return;
        }
        if (now < w.quietUntil) {
            return;
        }
        long end = now;
        while ((long) LONG.getAcquire(wake, off) == t && end < t) {
            w.futexWait(wake.address() + off, (int) t, t);
            end = Clock.monotonicNs();
        }
        w.quietUntil = end + (end - now) * (TURN_SHARE - 1);
    }

    /**
     * Claim parameter i for this thread's write (§4.3), never taking a bias: returns the
     * word to let go to (0 or SHARED). Revokes a bias, takes over a dead holder, sleeps
     * behind a live one; {@code EBUSY} after a second of a live holder, nothing held.
     */
    private long claim(String op, int i, WriterThread w) {
        final MemorySegment seg = this.seg;
        final long lock = slot[i] + SegmentLayout.SLOT_LOCK;
        final long me = w.token;
        long cur = (long) LONG.getOpaque(seg, lock);
        if ((cur == 0 || cur == SHARED) && (long) LONG.compareAndExchangeAcquire(seg, lock, cur, me) == cur) {
            return cur;
        }
        long watched = 0, since = 0, nextCheck = 0;
        for (int spins = 0;; spins++) {
            cur = (long) LONG.getAcquire(seg, lock);
            if (cur == 0 || cur == SHARED) {
                if ((long) LONG.compareAndExchangeAcquire(seg, lock, cur, me) == cur) {
                    return cur;
                }
                continue;
            }
            if ((cur & STATE_MASK) == BIASED) {
                // Another thread's bias (even one naming this OS thread: a Java writer never
                // holds one): revoke it; the parameter is shared from now on.
                if ((long) LONG.compareAndExchangeAcquire(seg, lock, cur, me) != cur) {
                    continue;
                }
                quiesce(op, i, me);
                return SHARED;
            }
            // Held (a lock, or a word no writer makes, held by the token in bits 0-51). A
            // word naming this thread is not ours either: it waits like any other (§4.8).
            if (spins < SPINS_BEFORE_WAITING) {
                Thread.onSpinWait();
                continue;
            }
            long now = Clock.monotonicNs();
            if ((cur & ~WAITERS) != watched) {
                watched = cur & ~WAITERS;
                since = now;
                nextCheck = now + FIRST_CHECK_NS;
            }
            if (now < nextCheck) {
                if ((cur & WAITERS) == 0
                        && (long) LONG.compareAndExchangeAcquire(seg, lock, cur, cur | WAITERS) != cur) {
                    continue;
                }
                w.futexWait(seg.address() + lock, (int) cur, nextCheck);
                continue;
            }
            nextCheck = now + CHECK_INTERVAL_NS;
            long holder = cur & WriterThread.TOKEN_MASK;
            if (holder != me && !WriterThread.alive(holder)) {
                // Take over from the dead holder (of several writers exactly one wins); it
                // may have been revoking a bias, so quiesce as a revoker does.
                if ((long) LONG.compareAndExchangeAcquire(seg, lock, cur, me) != cur) {
                    continue;
                }
                quiesce(op, i, me);
                return SHARED;
            }
            if (now - since > LIVE_HOLDER_TIMEOUT_NS) {
                throw new ParambusException("EBUSY", op + " " + obj(i) + ": EBUSY: a writer (thread "
                        + WriterThread.tid(holder) + ") has held the parameter for more than a second (stopped?)");
            }
        }
    }

    /**
     * With the word held by me after taking it from a bias or a dead holder: make sure no
     * biased write is still under way (§4.3). On failure the word is handed back.
     */
    private void quiesce(String op, int i, long me) {
        final MemorySegment seg = this.seg;
        final long writing = auxOffset + SegmentLayout.AUX_SIZE * i + SegmentLayout.AUX_WRITING;
        LONG.getAndAdd(seg, H_REVOCATIONS, 1L);
        int r = Native.globalBarrier();
        if (r != 0) {
            long wr = (long) LONG.getAcquire(seg, writing);
            letGo(i, wr != 0 ? BIASED | wr : SHARED);
            throw new ParambusException(Native.name(r), op + " " + obj(i) + ": " + Native.name(r)
                    + ": membarrier(2) failed, so a bias cannot be revoked");
        }
        long start = 0, nextCheck = 0;
        for (int spins = 0;; spins++) {
            long wr = (long) LONG.getAcquire(seg, writing);
            if (wr == 0) {
                return;
            }
            if (wr == me) {
                LONG.compareAndExchange(seg, writing, me, 0L);
                continue;
            }
            if (spins < SPINS_BEFORE_WAITING) {
                Thread.onSpinWait();
                continue;
            }
            Thread.yield();
            long now = Clock.monotonicNs();
            if (start == 0) {
                start = now;
                nextCheck = now + FIRST_CHECK_NS;
                continue;
            }
            if (now >= nextCheck) {
                nextCheck = now + CHECK_INTERVAL_NS;
                if (!WriterThread.alive(wr)) {
                    // Died mid-write: its work is in the unpublished copy, overwritten whole.
                    LONG.compareAndExchange(seg, writing, wr, 0L);
                    continue;
                }
            }
            if (now - start > LIVE_HOLDER_TIMEOUT_NS) {
                letGo(i, BIASED | wr);
                throw new ParambusException("EBUSY", op + " " + obj(i) + ": EBUSY: the biased writer (thread "
                        + WriterThread.tid(wr) + ") has been writing for more than a second (stopped?)");
            }
        }
    }

    /** Let go of a word this thread holds, leaving {@code to}; wake the writers asleep on it. */
    private void letGo(int i, long to) {
        long lock = slot[i] + SegmentLayout.SLOT_LOCK;
        long old = (long) LONG.getAndSetRelease(seg, lock, to);
        if ((old & WAITERS) != 0) {
            Native.futexWakeAll(seg.address() + lock);
        }
    }

    /**
     * Write a batch: claim every parameter in ascending index order (a parameter that comes
     * twice is claimed once), then write every value, then let go; if a claim fails
     * ({@code EBUSY}) the claims taken are let go unchanged and nothing is written. One
     * fence and at most one wake-up for the whole batch.
     */
    void commit(WriteBatch b) {
        int n = b.size;
        if (n == 0) {
            return;
        }
        WriterThread w = WriterThread.current("commit", table.instance());
        if (table.gone()) {
            throw table.stale("commit", b.index[0]);
        }
        long[] order = new long[n];
        for (int k = 0; k < n; k++) {
            order[k] = (long) b.index[k] << 32 | k;
        }
        Arrays.sort(order);
        long now = w.realtimeNs();
        long[] unlockTo = new long[n];
        boolean[] held = new boolean[n];
        boolean twice = false;
        int m = 0;
        try {
            for (; m < n; m++) {
                int i = (int) (order[m] >>> 32);
                if (m > 0 && (int) (order[m - 1] >>> 32) == i) {
                    twice = true;
                    continue;
                }
                holdOff(i, w);
                unlockTo[m] = claim("commit", i, w);
                held[m] = true;
            }
            for (int k = 0; k < n; k++) {
                int pos = (int) order[k];
                int i = b.index[pos];
                long ts = b.timestamp[pos] != 0 ? b.timestamp[pos] : now;
                if (b.stored[pos] == null) {
                    storeScalar(i, b.bits[pos], b.status[pos], ts);
                } else {
                    storeValue(i, b.stored[pos], b.stored[pos].length, b.status[pos], ts);
                }
                if (!twice && held[k]) {
                    held[k] = false;
                    letGo(i, unlockTo[k]);
                }
            }
        } finally {
            for (int k = 0; k < n; k++) {
                if (held[k]) {
                    letGo((int) (order[k] >>> 32), unlockTo[k]);
                }
            }
        }
        VarHandle.fullFence();
        if ((int) INT.getOpaque(wake, W_PARAM_WAITERS) == 0 && (int) INT.getOpaque(wake, W_ANY_WAITERS) == 0) {
            return;
        }
        for (int k = 0; k < n; k++) {
            if (hasWaiters(b.index[k])) {
                notifyWaiters();
                return;
            }
        }
    }
}

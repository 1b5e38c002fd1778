package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.parambus.internal.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A {@link GpioRequest} whose descriptor is the read end of a pipe, and the write end to
 * feed it the kernel's exact 48-byte {@code gpio_v2_line_event} records: the host has no
 * GPIO chip, and this is how the host tests drive the event path (reads, the poller,
 * 10^7 events) through a real descriptor, epoll and read(2) included. The VM tests do
 * the same against gpio-sim.
 *
 * <p>The events {@link #writeEvents} writes follow one rule, so readers can check them:
 * event {@code seqno} (from 1) is on line index {@code (seqno - 1) % n}, is that line's
 * event number {@code (seqno - 1) / n + 1}, rising when that number is odd, at
 * {@link #timestamp(long)}.
 */
final class PipeRequest implements AutoCloseable {
    static final int CHUNK = 64; // 3072 bytes: below PIPE_BUF, so every write is atomic and whole
    final GpioRequest request;
    private final int[] offsets;
    private final int writeFd;
    private boolean writeClosed;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment chunk = arena.allocate(GpioUapi.LINE_EVENT, CHUNK);
    private final MemorySegment capture = arena.allocate(Native.captureLayout());

    private PipeRequest(int readFd, int writeFd, int[] offsets) {
        this.offsets = offsets.clone();
        this.writeFd = writeFd;
        this.request = GpioRequest.adopt("pipe", readFd, offsets,
                GpioLineSettings.input().edge(GpioLineSettings.Edge.BOTH).build());
    }

    /** A pipe adopted as a request of these line offsets. */
    static PipeRequest open(int[] offsets) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment fds = a.allocate(JAVA_INT, 2);
            int r = Native.pipe2(fds, Native.O_CLOEXEC, a.allocate(Native.captureLayout()));
            if (r < 0) {
                throw new HwException("pipe2", "pipe", -r);
            }
            return new PipeRequest(fds.get(JAVA_INT, 0), fds.get(JAVA_INT, 4), offsets);
        }
    }

    static long timestamp(long seqno) {
        return 1_000_000_000L + seqno * 1_000L;
    }

    private void put(int k, long seqno, int offset, long lineSeqno, int id) {
        long b = k * GpioUapi.EVENT_SIZE;
        chunk.asSlice(b, GpioUapi.EVENT_SIZE).fill((byte) 0);
        chunk.set(JAVA_LONG, b + GpioUapi.EVENT_TIMESTAMP, timestamp(seqno));
        chunk.set(JAVA_INT, b + GpioUapi.EVENT_ID, id);
        chunk.set(JAVA_INT, b + GpioUapi.EVENT_OFFSET, offset);
        chunk.set(JAVA_INT, b + GpioUapi.EVENT_SEQNO, (int) seqno);
        chunk.set(JAVA_INT, b + GpioUapi.EVENT_LINE_SEQNO, (int) lineSeqno);
    }

    private void flush(int events) {
        long len = events * GpioUapi.EVENT_SIZE;
        long w = Native.write(writeFd, chunk, len, capture);
        if (w != len) {
            throw new IllegalStateException("pipe write of " + len + " bytes: " + w);
        }
    }

    /** Writes events firstSeqno..firstSeqno+count-1 by the class's rule, 64 per write. */
    void writeEvents(long firstSeqno, long count) {
        int n = offsets.length;
        int k = 0;
        for (long s = firstSeqno; s < firstSeqno + count; s++) {
            long line = (s - 1) / n + 1;
            put(k++, s, offsets[(int) ((s - 1) % n)], line, line % 2 == 1 ? 1 : 2);
            if (k == CHUNK) {
                flush(k);
                k = 0;
            }
        }
        if (k > 0) {
            flush(k);
        }
    }

    /** Writes one event as given (any seqno, any id). */
    void writeEvent(long seqno, int offset, long lineSeqno, int id) {
        put(0, seqno, offset, lineSeqno, id);
        flush(1);
    }

    /** Writes raw bytes. */
    void writeRaw(byte[] bytes) {
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, chunk, 0, bytes.length);
        long w = Native.write(writeFd, chunk, bytes.length, capture);
        if (w != bytes.length) {
            throw new IllegalStateException("pipe write: " + w);
        }
    }

    /** Closes the write end (the reader then sees end of file); idempotent. */
    synchronized void closeWriteEnd() {
        if (!writeClosed) {
            writeClosed = true;
            Native.close(writeFd);
        }
    }

    @Override
    public void close() {
        request.close();
        closeWriteEnd();
        arena.close();
    }
}

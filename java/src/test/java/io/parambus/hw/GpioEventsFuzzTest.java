package io.parambus.hw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.parambus.fuzz.Vectors;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fuzz target {@code java-gpio-events} (tests/fuzz/run): the GPIO event path of
 * {@code io.parambus.hw} fed any bytes as the kernel's 48-byte
 * {@code gpio_v2_line_event} records. The input (up to 3072 bytes, one atomic pipe
 * write) goes through a pipe adopted as a request of lines 3, 5 and 7
 * ({@link PipeRequest}), read by a {@link GpioEventPoller} whose listener runs on the
 * poller's thread; then the pipe's write end is closed.
 *
 * <p>Checked: the listener gets a prefix of the input's leading valid records (event id
 * 1 or 2, a line of the request), in order, each with exactly its fields and the
 * {@code missed} count its line's sequence numbers imply (counted from 1, as the kernel
 * counts a fresh request's events); all of them when the input is a
 * whole number of records; then exactly one error, an {@link HwException} with EIO (an
 * invalid record, a partial one, or the end of the file); nothing reaches the
 * uncaught-exception handler; the poller closes. The same bytes read with
 * {@link GpioRequest#readEvents} give the same records or EIO.
 *
 * <p>Seeds: valid runs, a bad event id, a line not requested, sequence gaps and
 * wrap-arounds, a partial record, nothing.
 */
class GpioEventsFuzzTest {
    private static final int[] OFFSETS = {3, 5, 7};
    private static final int SIZE = (int) GpioUapi.EVENT_SIZE;
    private static final int TS = (int) GpioUapi.EVENT_TIMESTAMP, ID = (int) GpioUapi.EVENT_ID,
            OFFSET = (int) GpioUapi.EVENT_OFFSET, SEQNO = (int) GpioUapi.EVENT_SEQNO,
            LINE_SEQNO = (int) GpioUapi.EVENT_LINE_SEQNO;
    private static final int MAX = 3072;

    private static byte[] record(long ts, int id, int offset, int seqno, int lineSeqno) {
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(TS, ts).putInt(ID, id).putInt(OFFSET, offset).putInt(SEQNO, seqno).putInt(LINE_SEQNO, lineSeqno);
        return b.array();
    }

    private static byte[] concat(byte[]... parts) {
        ByteBuffer b = ByteBuffer.allocate(Arrays.stream(parts).mapToInt(p -> p.length).sum());
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    static Stream<Arguments> seeds() {
        List<byte[]> s = new ArrayList<>();
        s.add(new byte[0]);
        s.add(concat(record(1000, 1, 3, 1, 1), record(2000, 2, 3, 2, 2), record(3000, 1, 5, 3, 1)));
        s.add(concat(record(1000, 1, 3, 1, 1), record(2000, 9, 3, 2, 2)));
        s.add(concat(record(1000, 1, 3, 1, 1), record(2000, 1, 4, 2, 1)));
        s.add(concat(record(1000, 1, 7, 1, 5), record(2000, 2, 7, 9, 4), record(3000, 1, 7, 10, 0x7fffffff)));
        s.add(concat(record(1000, 1, 7, -1, -1), record(2000, 2, 7, 0, 0)));
        s.add(Arrays.copyOf(record(1000, 1, 3, 1, 1), 47));
        s.add(concat(record(1000, 1, 3, 1, 1), new byte[5]));
        return Vectors.arguments(s);
    }

    /** The input's leading valid records as the events they are, with their missed counts. */
    private static List<GpioEdgeEvent> validPrefix(byte[] in) {
        List<GpioEdgeEvent> out = new ArrayList<>();
        long[] last = {0, 0, 0}; // a fresh request: its lines' events count from 1
        ByteBuffer b = ByteBuffer.wrap(in).order(ByteOrder.LITTLE_ENDIAN);
        for (int k = 0; (k + 1) * SIZE <= in.length; k++) {
            int base = k * SIZE;
            int id = b.getInt(base + ID), offset = b.getInt(base + OFFSET);
            int index = offset == 3 ? 0 : offset == 5 ? 1 : offset == 7 ? 2 : -1;
            GpioEdgeEvent.Type type = id == 1 ? GpioEdgeEvent.Type.RISING : id == 2 ? GpioEdgeEvent.Type.FALLING : null;
            if (type == null || index < 0) {
                break;
            }
            long lineSeqno = Integer.toUnsignedLong(b.getInt(base + LINE_SEQNO));
            long gap = (lineSeqno - last[index] - 1) & 0xFFFF_FFFFL;
            long missed = gap < 0x8000_0000L ? gap : 0;
            last[index] = lineSeqno;
            out.add(new GpioEdgeEvent(b.getLong(base + TS), type, offset,
                    Integer.toUnsignedLong(b.getInt(base + SEQNO)), lineSeqno, missed));
        }
        return out;
    }

    @MethodSource("seeds")
    @FuzzTest
    @Timeout(20)
    void hostileRecords(byte[] input) throws Exception {
        byte[] in = input.length > MAX ? Arrays.copyOf(input, MAX) : input;
        List<GpioEdgeEvent> expected = validPrefix(in);
        List<Throwable> unexpected = new CopyOnWriteArrayList<>();
        List<GpioEdgeEvent> got = new CopyOnWriteArrayList<>();
        AtomicReference<HwException> error = new AtomicReference<>();
        CountDownLatch ended = new CountDownLatch(1);
        try (GpioEventPoller poller = GpioEventPoller.builder().executor(Runnable::run)
                .uncaughtExceptionHandler((t, e) -> unexpected.add(e)).start();
                PipeRequest p = PipeRequest.open(OFFSETS)) {
            poller.listen(p.request, new GpioEdgeListener() {
                @Override
                public void onEdge(GpioEdgeEvent event) {
                    got.add(event);
                }

                @Override
                public void onError(HwException e) {
                    if (!error.compareAndSet(null, e)) {
                        unexpected.add(new AssertionError("a second error: " + e.getMessage()));
                    }
                    ended.countDown();
                }
            });
            if (in.length > 0) {
                p.writeRaw(in);
            }
            p.closeWriteEnd();
            assertTrue(ended.await(10, TimeUnit.SECONDS), "the poller reported no end of the stream");
        }
        assertTrue(unexpected.isEmpty(), () -> "unexpected: " + unexpected);
        assertNotNull(error.get());
        assertEquals(GpioUapi.EIO, error.get().errnoValue(), error.get().getMessage());
        assertTrue(got.size() <= expected.size(), "more events than valid records");
        assertEquals(expected.subList(0, got.size()), got);
        if (in.length % SIZE == 0) {
            assertEquals(expected, got, "a whole number of records: every valid leading one is delivered");
        }

        // The same bytes through readEvents: the same records, or EIO.
        try (PipeRequest p = PipeRequest.open(OFFSETS); GpioEventBuffer buf = new GpioEventBuffer(64)) {
            if (in.length > 0) {
                p.writeRaw(in);
            }
            p.closeWriteEnd();
            try {
                int n = p.request.readEvents(buf, java.time.Duration.ofSeconds(5));
                assertEquals(0, in.length % SIZE, "a partial record was read as events");
                assertEquals(in.length / SIZE, n);
                for (int i = 0; i < Math.min(n, expected.size()); i++) {
                    GpioEdgeEvent e = expected.get(i);
                    assertEquals(e.timestampNs(), buf.timestampNs(i));
                    assertEquals(e.offset(), buf.offset(i));
                    assertEquals(e.type(), buf.type(i));
                    assertEquals(e.seqno(), buf.seqno(i));
                    assertEquals(e.lineSeqno(), buf.lineSeqno(i));
                }
            } catch (HwException e) {
                assertEquals(GpioUapi.EIO, e.errnoValue(), e.getMessage());
            }
        }
    }
}

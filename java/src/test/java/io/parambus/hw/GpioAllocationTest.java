package io.parambus.hw;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.parambus.ThreadAllocation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link GpioRequest#readEvents} allocates nothing: batches of the kernel's records read
 * from a pipe adopted as a request's descriptor, decoded in place from the caller's
 * {@link GpioEventBuffer}, change the reading thread's allocated-bytes counter
 * ({@code com.sun.management.ThreadMXBean}) by 0. The JIT allocates a little while it
 * compiles: warm up until a window allocates nothing (at most 20 windows), then one of
 * three windows of 64000 events must allocate nothing; an allocation per read would show
 * kilobytes in each. (Get and set need a GPIO chip: the VM's GpioStressTest counts theirs
 * against gpio-sim.)
 */
class GpioAllocationTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static long sink;

    /** Bytes allocated while reading and decoding {@code events} events (written beforehand) in batches. */
    private static long allocatedReading(PipeRequest p, GpioEventBuffer buf, long firstSeqno, int events) {
        p.writeEvents(firstSeqno, events);
        long s = 0;
        long before = ThreadAllocation.bytes();
        for (int got = 0; got < events;) {
            int n = p.request.readEvents(buf, WAIT);
            for (int i = 0; i < n; i++) {
                s += buf.timestampNs(i) + buf.offset(i) + buf.seqno(i) + buf.lineSeqno(i) + buf.type(i).ordinal();
            }
            got += n;
        }
        long after = ThreadAllocation.bytes();
        sink += s;
        return after - before;
    }

    private long seq = 1;

    /** Bytes allocated reading a window of 64000 events, 16 a read (written 960 at a time: the pipe holds 1365). */
    private long window(PipeRequest p, GpioEventBuffer buf) {
        long bytes = 0;
        for (int part = 0; part < 64_000 / 960; part++) {
            bytes += allocatedReading(p, buf, seq, 960);
            seq += 960;
        }
        return bytes;
    }

    @Test
    void readEventsAllocatesNothing() {
        try (PipeRequest p = PipeRequest.open(new int[] {0, 1, 2}); GpioEventBuffer buf = new GpioEventBuffer(16)) {
            for (int k = 0; k < 20 && window(p, buf) != 0; k++) {
                // warming up
            }
            List<Long> tries = new ArrayList<>();
            for (int k = 0; k < 3; k++) {
                long bytes = window(p, buf);
                tries.add(bytes);
                if (bytes == 0) {
                    return;
                }
            }
            assertEquals(0L, (long) tries.get(2), "bytes allocated reading 64000 events 16 at a time, in each of"
                    + " three tries: " + tries);
        }
    }
}

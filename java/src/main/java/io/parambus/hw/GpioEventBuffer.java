package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Native memory for up to {@link #capacity()} edge events, filled by
 * {@link GpioRequest#readEvents(GpioEventBuffer, java.time.Duration)} with one
 * {@code read(2)} of the kernel's 48-byte {@code gpio_v2_line_event} records, straight
 * into this buffer: reading allocates nothing. The accessors decode event {@code i} of
 * the last read in place; {@link #event(int)} makes a {@link GpioEdgeEvent} of it when
 * a value to keep is wanted.
 *
 * <pre>{@code
 * try (GpioEventBuffer events = new GpioEventBuffer(16)) {
 *     int n = request.readEvents(events, Duration.ofSeconds(1));
 *     for (int i = 0; i < n; i++) {
 *         System.out.println(events.offset(i) + " " + events.type(i) + " at " + events.timestampNs(i));
 *     }
 * }
 * }</pre>
 *
 * <p>Threads: not thread-safe; one thread reads into it and decodes it at a time (it may
 * be handed from thread to thread). Ownership: the native memory is freed by
 * {@link #close()}.
 */
public final class GpioEventBuffer implements AutoCloseable {
    /** The most events one buffer holds (a read of 1024 events is 48 KiB). */
    public static final int MAX_CAPACITY = 1024;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment segment;
    private final int capacity;
    private int size;

    /** A buffer for up to {@code capacity} events (1 to {@link #MAX_CAPACITY}). */
    public GpioEventBuffer(int capacity) {
        if (capacity < 1 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("GPIO event buffer: capacity " + capacity + " is outside 1.."
                    + MAX_CAPACITY);
        }
        this.capacity = capacity;
        this.segment = arena.allocate(GpioUapi.LINE_EVENT, capacity);
    }

    /** The most events one read fills in. */
    public int capacity() {
        return capacity;
    }

    /** The number of events the last read filled in. */
    public int size() {
        return size;
    }

    MemorySegment segment() {
        return segment;
    }

    void size(int n) {
        size = n;
    }

    private long base(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException("GPIO event " + i + " of " + size);
        }
        return i * GpioUapi.EVENT_SIZE;
    }

    /** Event {@code i}'s timestamp in ns, in the request's event clock. */
    public long timestampNs(int i) {
        return segment.get(JAVA_LONG, base(i) + GpioUapi.EVENT_TIMESTAMP);
    }

    /** Event {@code i}'s kind. */
    public GpioEdgeEvent.Type type(int i) {
        int id = segment.get(JAVA_INT, base(i) + GpioUapi.EVENT_ID);
        GpioEdgeEvent.Type t = GpioEdgeEvent.Type.of(id);
        if (t == null) {
            throw new IllegalStateException("GPIO event " + i + " has id " + id + ", not one the kernel defines");
        }
        return t;
    }

    /** Event {@code i}'s line offset on the chip. */
    public int offset(int i) {
        return segment.get(JAVA_INT, base(i) + GpioUapi.EVENT_OFFSET);
    }

    /** Event {@code i}'s sequence number among all lines of the request (unsigned 32-bit). */
    public long seqno(int i) {
        return Integer.toUnsignedLong(segment.get(JAVA_INT, base(i) + GpioUapi.EVENT_SEQNO));
    }

    /** Event {@code i}'s sequence number among its line's events (unsigned 32-bit). */
    public long lineSeqno(int i) {
        return Integer.toUnsignedLong(segment.get(JAVA_INT, base(i) + GpioUapi.EVENT_LINE_SEQNO));
    }

    /** Event {@code i} as a value (with {@link GpioEdgeEvent#missed()} 0). */
    public GpioEdgeEvent event(int i) {
        return new GpioEdgeEvent(timestampNs(i), type(i), offset(i), seqno(i), lineSeqno(i), 0);
    }

    /** Frees the native memory; idempotent. The buffer cannot be used afterwards. */
    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}

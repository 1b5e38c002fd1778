package io.parambus.hw;

/**
 * One edge, as the kernel reported it ({@code struct gpio_v2_line_event}), handed to a
 * {@link GpioEdgeListener} by a {@link GpioEventPoller} or made by
 * {@link GpioEventBuffer#event(int)}. A small immutable value: a listener may keep it,
 * pass it to another thread or drop it; nothing else refers to it (it is garbage once the
 * listener returns, and the native buffer it was decoded from is reused).
 *
 * @param timestampNs when, in the request's event clock (by default {@code CLOCK_MONOTONIC},
 *                    the clock of {@link System#nanoTime()} on Linux)
 * @param type        rising or falling
 * @param offset      the line's offset on the chip
 * @param seqno       sequence number among all lines of the request (from 1, unsigned 32-bit)
 * @param lineSeqno   sequence number among this line's events (from 1, unsigned 32-bit)
 * @param missed      events of this line the kernel dropped just before this one because its
 *                    buffer was full (the gap in {@code lineSeqno}, found by the poller); 0
 *                    normally, and always 0 from {@link GpioEventBuffer#event(int)}
 */
public record GpioEdgeEvent(long timestampNs, Type type, int offset, long seqno, long lineSeqno, long missed) {
    /** Kind of edge ({@code enum gpio_v2_line_event_id}). */
    public enum Type {
        /** Inactive to active. */
        RISING,
        /** Active to inactive. */
        FALLING;

        /** The type of a kernel event id, or null if the id is not one the kernel defines. */
        static Type of(int id) {
            return id == GpioUapi.EVENT_RISING_EDGE ? RISING : id == GpioUapi.EVENT_FALLING_EDGE ? FALLING : null;
        }
    }
}

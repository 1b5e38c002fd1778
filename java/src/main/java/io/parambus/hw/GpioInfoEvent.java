package io.parambus.hw;

/**
 * A change of a watched line's configuration ({@code struct gpio_v2_line_info_changed}),
 * read by {@link GpioChip#readInfoEvent(java.time.Duration)}.
 *
 * @param type        what happened
 * @param timestampNs when, in {@code CLOCK_MONOTONIC} nanoseconds
 * @param info        the line's state after the change
 */
public record GpioInfoEvent(Type type, long timestampNs, GpioLineInfo info) {
    /** Kind of change ({@code enum gpio_v2_line_changed_type}). */
    public enum Type {
        /** The line was requested. */
        REQUESTED,
        /** The line was released. */
        RELEASED,
        /** The line was reconfigured. */
        RECONFIGURED
    }
}

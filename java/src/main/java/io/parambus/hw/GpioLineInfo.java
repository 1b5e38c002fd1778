package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.parambus.hw.GpioLineSettings.Bias;
import io.parambus.hw.GpioLineSettings.Direction;
import io.parambus.hw.GpioLineSettings.Drive;
import io.parambus.hw.GpioLineSettings.Edge;
import io.parambus.hw.GpioLineSettings.EventClock;
import java.lang.foreign.MemorySegment;

/**
 * The state of one line as {@code GPIO_V2_GET_LINEINFO_IOCTL} reports it: who uses it and
 * how it is configured (whoever requested it, this process or another, or the kernel).
 *
 * @param offset           the line's offset on the chip
 * @param name             its name (empty if unnamed)
 * @param consumer         who requested it (empty if nobody, or a consumer without a name)
 * @param used             whether it is requested by anyone, the kernel included
 * @param direction        INPUT or OUTPUT (the kernel always reports one)
 * @param bias             its bias ({@link Bias#AS_IS} if none is set)
 * @param drive            its drive
 * @param activeLow        whether it is active-low
 * @param edge             the edges detected
 * @param eventClock       the clock of its event timestamps
 * @param debouncePeriodUs its debounce period in microseconds, 0 for none
 */
public record GpioLineInfo(int offset, String name, String consumer, boolean used, Direction direction, Bias bias,
        Drive drive, boolean activeLow, Edge edge, EventClock eventClock, long debouncePeriodUs) {

    /** Decodes the {@code gpio_v2_line_info} at {@code base} of {@code s}. */
    static GpioLineInfo decode(MemorySegment s, long base) {
        long f = s.get(JAVA_LONG, base + GpioUapi.INFO_FLAGS);
        Direction direction = (f & GpioUapi.FLAG_OUTPUT) != 0 ? Direction.OUTPUT
                : (f & GpioUapi.FLAG_INPUT) != 0 ? Direction.INPUT : Direction.AS_IS;
        Bias bias = (f & GpioUapi.FLAG_BIAS_PULL_UP) != 0 ? Bias.PULL_UP
                : (f & GpioUapi.FLAG_BIAS_PULL_DOWN) != 0 ? Bias.PULL_DOWN
                : (f & GpioUapi.FLAG_BIAS_DISABLED) != 0 ? Bias.DISABLED : Bias.AS_IS;
        Drive drive = (f & GpioUapi.FLAG_OPEN_DRAIN) != 0 ? Drive.OPEN_DRAIN
                : (f & GpioUapi.FLAG_OPEN_SOURCE) != 0 ? Drive.OPEN_SOURCE : Drive.PUSH_PULL;
        boolean rising = (f & GpioUapi.FLAG_EDGE_RISING) != 0, falling = (f & GpioUapi.FLAG_EDGE_FALLING) != 0;
        Edge edge = rising && falling ? Edge.BOTH : rising ? Edge.RISING : falling ? Edge.FALLING : Edge.NONE;
        EventClock clock = (f & GpioUapi.FLAG_EVENT_CLOCK_HTE) != 0 ? EventClock.HTE
                : (f & GpioUapi.FLAG_EVENT_CLOCK_REALTIME) != 0 ? EventClock.REALTIME : EventClock.MONOTONIC;
        long debounce = 0;
        int attrs = Math.min(s.get(JAVA_INT, base + GpioUapi.INFO_NUM_ATTRS), GpioUapi.NUM_ATTRS_MAX);
        for (int i = 0; i < attrs; i++) {
            long a = base + GpioUapi.INFO_ATTRS + i * GpioUapi.LINE_ATTRIBUTE.byteSize();
            if (s.get(JAVA_INT, a + GpioUapi.ATTR_ID) == GpioUapi.ATTR_ID_DEBOUNCE) {
                debounce = Integer.toUnsignedLong(s.get(JAVA_INT, a + GpioUapi.ATTR_VALUE));
            }
        }
        return new GpioLineInfo(s.get(JAVA_INT, base + GpioUapi.INFO_OFFSET),
                GpioUapi.string(s, base + GpioUapi.INFO_NAME, GpioUapi.NAME_SIZE),
                GpioUapi.string(s, base + GpioUapi.INFO_CONSUMER, GpioUapi.NAME_SIZE),
                (f & GpioUapi.FLAG_USED) != 0, direction, bias, drive, (f & GpioUapi.FLAG_ACTIVE_LOW) != 0, edge,
                clock, debounce);
    }
}
